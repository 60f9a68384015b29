#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The in-process ground-truth harness (tests/harness: every walker result
# compared line by line with LuaJIT's own tracebacks, JIT off and on, plus
# FFI calls from traces and SIGPROF samples) run against a non-GC64 LuaJIT:
# the harness sources are linked here with the libluajit.a of the
# "up-nogc64" variant (Debian's upstream source built with
# -DLUAJIT_DISABLE_GC64 by tests/variants/prepare.sh), over every
# tests/lua/walk_*.lua scenario.  The harness picks
# the layout from the linked library's lua_gettop code, and must say
# "upstream non-GC64".  No BPF involved.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/variants/lib.sh"
V=$(variant up-nogc64) || exit 1
for a in libljunwind.a libljsymtab.a; do
	[ -r "$top_builddir/$a" ] || fail "$top_builddir/$a not built"
done
H=$TMPD/harness-nogc64
# shellcheck disable=SC2086
${CC:-cc} -g -O1 -D_GNU_SOURCE -I"$top_srcdir" -I"$top_builddir" -I"$V/include" -Wl,-E -o "$H" \
	"$top_srcdir"/tests/harness/*.c \
	"$top_builddir/libljunwind.a" "$top_builddir/libljsymtab.a" "$V/lib/libluajit.a" -lm -ldl \
	2> "$TMPD/cc.err" || { cat "$TMPD/cc.err" >&2; fail "cannot build the harness against $V"; }
# The walk_*.lua scenarios (tracebacks as ground truth).  The trace_walk_*
# ones decode snapshots in Lua with FR2 (GC64) rules and do not apply here.
"$H" "$top_srcdir"/tests/lua/walk_*.lua > "$TMPD/h.out" 2> "$TMPD/h.err"
rc=$?
grep -E '^(harness:|[0-9]+ passed)' "$TMPD/h.out" | sed 's/^/# /'
grep -q '^harness: linked LuaJIT is upstream non-GC64$' "$TMPD/h.out" ||
	{ cat "$TMPD/h.out" "$TMPD/h.err" >&2; fail "the harness did not run on the non-GC64 build"; }
if [ $rc != 0 ]; then
	grep -E '^FAIL' "$TMPD/h.err" "$TMPD/h.out" | head -40 >&2
	tail -20 "$TMPD/h.err" >&2
	fail "harness failed on non-GC64 (exit $rc)"
fi
exit 0
