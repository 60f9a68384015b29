#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: Lua calling C that re-enters the VM without running Lua keeps the
# native order in the stitched view (issue 10, defect 1).
#
# tests/lua/stitch_reenter.lua runs, under /usr/bin/luajit and `ljsnap record`,
# main chunk -> work -> reenter (one re-entering call) and main chunk ->
# work -> sort_part -> table.sort -> (C) -> cmp (a Lua comparator) in turns:
#   load  load() of a small chunk, JIT off: lua_loadx enters the VM through
#         lj_vm_cpcall, which runs the parser and pushes no Lua frame
#   jit   jit.flush() and two fresh loops, JIT on: the trace recorder runs
#         under lj_vm_cpcall, called from lj_vm_hotloop
#   ffi   ffi.typeof/ffi.cast of declaration strings (the C parser under
#         lj_vm_cpcall), JIT on
#   gc    newproxy objects with a Lua __gc, JIT on: gc_call_finalizer enters
#         the VM with lj_vm_pcall from inside the GC
#
# Ground truth: the --native-only view of the same capture, the order in
# which the CPU had the native frames and the VM activations (interpreter
# or trace code).  A sample is misordered when its stitched stack, each run
# of Lua-side frames taken as the one VM activation they replace, is none of
# the native-only stacks (tests/e2e/stitch_order.awk says it exactly); only
# the samples whose native unwind reached _start count (an unwind that
# stopped early keeps its Lua frames below it).  Before the fix the n-th VM
# activation took the n-th Lua activation, so the frameless entries moved the
# parser's frames above the main chunk: 61% of the samples misordered in
# "load", 40% in "jit", 13% in "ffi", 1% in "gc" (0 in each after it).
# Asserted: at most 1% misordered in every case (the two instructions of
# BC_FUNCC that look like an entry not yet linked may put a sample one
# activation off, see unwind/ljwalk_cframe.c), the stitched chain present
# (main chunk -> work -> reenter or sort_part, in that order, in >= 30% of
# the samples), and each case's re-entering code below its Lua caller:
#   load: lua_loadx after "load" (root first), never before the main chunk;
#   jit:  "[JIT compiler]" after reenter in >= 1% of the samples;
#   ffi:  ffi.typeof or ffi.cast after reenter;
#   gc:   the finalizer (function <SCRIPT:N>) after the GC's native frames.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
SCRIPT=$top_srcdir/tests/lua/stitch_reenter.lua
ORDER=$top_srcdir/tests/e2e/stitch_order.awk
SECS=${STITCH_SECONDS:-2}
LUAJIT=$(readlink -f "$(command -v luajit)")
M="main $SCRIPT"

for case in load:-joff jit:-jon ffi:-jon gc:-jon; do
	mode=${case%%:*}; jflag=${case#*:}
	cap=$TMPD/$mode.ljsnap
	"$LJSNAP" record -q -F 499 -o "$cap" -- "$LUAJIT" "$jflag" "$SCRIPT" "$mode" "$SECS" \
		> "$TMPD/$mode.out" 2> "$TMPD/$mode.err" ||
		{ cat "$TMPD/$mode.err" >&2; fail "$mode: ljsnap record failed"; }
	grep -q '^ROUNDS ' "$TMPD/$mode.out" || { cat "$TMPD/$mode.err" >&2; fail "$mode: the script did not finish"; }
	pid=$("$LJSNAP" info "$cap" | awk '/^  pid [0-9]+ \(ppid/ && / luajit / { print $2; exit }')
	[ -n "$pid" ] || fail "$mode: no luajit process in the capture"
	for view in mixed native lua; do
		opt=; [ $view = native ] && opt=--native-only; [ $view = lua ] && opt=--lua-only
		# Lua names as LuaJIT gives them (the call site), as the script prints them
		# shellcheck disable=SC2086
		"$LJSNAP" report -f folded --callsite-names --pid "$pid" $opt "$cap" > "$TMPD/$mode.$view" 2> "$TMPD/$mode.$view.err" ||
			{ cat "$TMPD/$mode.$view.err" >&2; fail "$mode: ljsnap report $opt failed"; }
	done
	set -- $(awk -v entry=_start -f "$ORDER" "$TMPD/$mode.native" "$TMPD/$mode.mixed" "$TMPD/$mode.lua")
	total=$2; bad=$4
	[ "$total" -ge 200 ] || fail "$mode: only $total samples unwound to _start"
	note "$mode: $bad of $total samples misordered ($(pct "$bad" "$total")%)"
	[ $(( 100 * bad )) -le "$total" ] || fail "$mode: $bad of $total samples misordered (> 1%)"
	# share NAME ERE: samples of the mixed view whose stack matches ERE
	share() {
		awk -v re="$2" '{ n = $NF; t += n; if ($0 ~ re) s += n } END { print s + 0, t + 0 }' "$TMPD/$mode.mixed"
	}
	q=$(printf '%s' "$SCRIPT" | sed 's/[][\.^$*+?(){}|/]/\\&/g')
	set -- $(share chain ";main $q;work $q:[0-9]+;(reenter|sort_part) $q:[0-9]+")
	note "$mode: main chunk -> work -> reenter/sort_part in $1 of $2"
	[ $(( 100 * $1 )) -ge $(( 30 * $2 )) ] || fail "$mode: the Lua chain is in $1 of $2 samples (< 30%)"
	case $mode in
	load)
		set -- $(share x ";load;.*lua_loadx"); good=$1
		set -- $(share x "lua_loadx.*;main $q")
		note "load: lua_loadx below load in $good samples, above the main chunk in $1"
		[ "$good" -ge 10 ] || fail "load: lua_loadx below load in only $good samples"
		[ "$1" = 0 ] || fail "load: lua_loadx above the main chunk in $1 samples"
		;;
	jit)
		set -- $(share x ";reenter $q:[0-9]+(_\\[j\\])?;.*\\[JIT compiler\\]")
		note "jit: [JIT compiler] below reenter in $1 of $2"
		[ $(( 100 * $1 )) -ge "$2" ] || fail "jit: [JIT compiler] below reenter in only $1 of $2"
		set -- $(share x "\\[JIT compiler\\].*;main $q")
		[ "$1" = 0 ] || fail "jit: [JIT compiler] above the main chunk in $1 samples"
		;;
	ffi)
		set -- $(share x ";reenter $q:[0-9]+(_\\[j\\])?;(ffi\\.typeof|ffi\\.cast)")
		note "ffi: ffi.typeof/ffi.cast below reenter in $1 of $2"
		[ "$1" -ge 10 ] || fail "ffi: ffi.typeof/ffi.cast below reenter in only $1 samples"
		;;
	gc)
		set -- $(share x ";function <$q:[0-9]+>(_\\[j\\])?(;| [0-9]+$)")
		fin=$1 all=$2
		set -- $(share x "function <$q:[0-9]+>.*;main $q")
		note "gc: finalizer frames in $fin of $all samples, above the main chunk in $1"
		# (the leaf frame too: the folded line ends with its count)
		[ $(( 100 * fin )) -ge $(( 10 * all )) ] || fail "gc: the finalizer is in only $fin of $all samples (< 10%)"
		[ "$1" = 0 ] || fail "gc: the finalizer above the main chunk in $1 samples"
		;;
	esac
done
exit 0
