#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: a thread that never runs Lua gets no Lua frames from the VM another
# thread of the process runs (issue 10, defect 2).
#
# tests/e2e/ljthreads.c (linked with libluajit-5.1.so) starts two threads:
# lua_main runs tests/lua/stitch_threads.lua in its own lua_State (JIT off:
# main chunk -> outer -> inner, a busy loop), spinner spins in
# ljthreads_spin() and never touches Lua.  The BPF program finds the VM's
# global_State in lua_main's registers and publishes it as the process's
# hint, which the spinner's samples then pick up; before the fix every
# spinner sample got lua_main's Lua stack below its own native frames
# (1093 of 1096 in one run).
#
# Ground truth: which thread a sample is, from its native stack (unwound
# from the sample's own registers): start_thread -> spinner ->
# ljthreads_spin, or start_thread -> lua_main.  Asserted: >= 200 spinner
# samples and none of them with a frame of the script (or any Lua frame
# name: main chunk, outer, inner); the report counts them as "Lua state of
# another thread"; >= 200 lua_main samples, >= 90% of them with
# main chunk -> outer -> inner in that order below lua_main's native frames.
. "$(dirname "$0")/lib.sh"
need_bpf
HOST=$top_builddir/tests/e2e/ljthreads
[ -x "$HOST" ] || fail "tests/e2e/ljthreads not built (libluajit-5.1-dev missing?)"
SCRIPT=$top_srcdir/tests/lua/stitch_threads.lua
SECS=${STITCH_SECONDS:-3}
cap=$TMPD/thr.ljsnap

"$LJSNAP" record -q -F 499 -o "$cap" -- "$HOST" "$SCRIPT" "$SECS" > "$TMPD/out" 2> "$TMPD/err" ||
	{ cat "$TMPD/err" >&2; fail "ljsnap record failed"; }
grep -q '^SUM ' "$TMPD/out" || { cat "$TMPD/err" >&2; fail "the script did not finish"; }
"$LJSNAP" report -f folded "$cap" > "$TMPD/folded" 2> "$TMPD/rerr" ||
	{ cat "$TMPD/rerr" >&2; fail "ljsnap report failed"; }
"$LJSNAP" report -f text "$cap" > "$TMPD/text" 2> "$TMPD/rerr" ||
	{ cat "$TMPD/rerr" >&2; fail "ljsnap report -f text failed"; }

q=$(printf '%s' "$SCRIPT" | sed 's/[][\.^$*+?(){}|/]/\\&/g')
set -- $(awk -v s="$q" '
	{ n = $NF }
	/;start_thread;spinner;ljthreads_spin(;|$| )/ {
		spin += n
		if ($0 ~ s || $0 ~ /;(main|outer|inner) [^;]*\.lua/) spin_lua += n
	}
	/;start_thread;lua_main;/ {
		lua += n
		if ($0 ~ ";start_thread;lua_main;.*;main " s ";outer " s ":[0-9]+;inner " s ":[0-9]+") chain += n
	}
	END { print spin + 0, spin_lua + 0, lua + 0, chain + 0 }' "$TMPD/folded")
spin=$1; spin_lua=$2; lua=$3; chain=$4
other=$(awk '/Lua state of another thread or fiber/ { print $NF }' "$TMPD/text")
note "spinner: $spin samples, $spin_lua with Lua frames; report: ${other:-0} of another thread"
note "lua_main: $lua samples, $chain with main chunk -> outer -> inner"
[ "$spin" -ge 200 ] || fail "only $spin samples of the spinning thread"
[ "$spin_lua" = 0 ] || {
	grep ';spinner;' "$TMPD/folded" | grep "$SCRIPT" | head -3 >&2
	fail "$spin_lua samples of the spinning thread carry Lua frames"; }
[ "${other:-0}" -ge $(( spin / 2 )) ] || fail "the report counts ${other:-0} samples with another thread's Lua state (spinner: $spin)"
[ "$lua" -ge 200 ] || fail "only $lua samples of the Lua thread"
[ $(( 100 * chain )) -ge $(( 90 * lua )) ] || fail "the Lua chain is in $chain of $lua samples of the Lua thread (< 90%)"
exit 0
