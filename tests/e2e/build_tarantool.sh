#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: Tarantool 2.6 (Debian's /usr/bin/tarantool: LuaJIT linked in
# statically, non-GC64, its own fork's layout) running a Lua script with a
# known call structure (tests/lua/build_chain.lua), recorded with real BPF:
# >= 95% of the samples with Lua code on CPU unwind to the script's main
# chunk, >= 80% end in main -> run -> level1 -> level2 -> leaf; `ljsnap
# doctor` says tarantool-2.6, non-GC64, its live check passes, and its
# offsets are the ones gdb reads from tarantool's DWARF.
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
# Ground truth for the offsets: Debian's tarantool keeps its DWARF; gdb
# computes the doctor's "offsets:" line from the binary's own types.
need_prog gdb gdb
gdb -batch -nx -ex 'printf "  offsets:     DISPATCH->g %d, g->J %d, vmstate +%u, cur_L +%u, jit_base +%u, L->base +%u, L->stack +%u, L->cframe +%u, sizeof(lua_State) %u\n", (int)((char*)&((GG_State*)0)->g - (char*)&((GG_State*)0)->dispatch), (int)((char*)&((GG_State*)0)->J - (char*)&((GG_State*)0)->g), (unsigned)&((global_State*)0)->vmstate, (unsigned)&((global_State*)0)->cur_L, (unsigned)&((global_State*)0)->jit_base, (unsigned)&((lua_State*)0)->base, (unsigned)&((lua_State*)0)->stack, (unsigned)&((lua_State*)0)->cframe, (unsigned)sizeof(lua_State)' \
	"$TT" > "$TMPD/tt.gt" 2> "$TMPD/tt.gterr"
grep -q '^  offsets:' "$TMPD/tt.gt" || { cat "$TMPD/tt.gt" "$TMPD/tt.gterr" >&2; fail "tt: gdb could not read the offsets from tarantool's DWARF"; }
doctor_offsets tt
exit 0
