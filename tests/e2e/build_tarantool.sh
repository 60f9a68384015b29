#!/bin/sh
# E2E: Tarantool 2.6 (Debian's /usr/bin/tarantool: LuaJIT linked in
# statically, non-GC64, its own fork's layout) running a Lua script with a
# known call structure (tests/lua/build_chain.lua), recorded with real BPF:
# >= 95% of the samples with Lua code on CPU unwind to the script's main
# chunk, >= 80% end in main -> run -> level1 -> level2 -> leaf; `ljsnap
# doctor` says tarantool-2.6, non-GC64, and its live check passes.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/variants/lib.sh"
need_bpf
need_prog tarantool tarantool
TT=$(command -v tarantool)

record_chain tt 3 "$TT"
grep -q "tarantool-2.6 non-GC64 in " "$TMPD/tt.err" ||
	{ cat "$TMPD/tt.err" >&2; fail "tt: not detected as tarantool-2.6 non-GC64"; }
check_chain_run tt
doctor_chain tt tarantool-2.6 non-GC64 single-number "$TT"
exit 0
