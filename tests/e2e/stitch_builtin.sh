#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: stitched stacks of plain /usr/bin/luajit (VM linked in, stripped) for
# a C builtin calling back into Lua two coroutines deep
# (tests/lua/stitch_builtin.lua): main chunk -> coroutine.resume -> outer
# -> coroutine.resume -> inner -> string.gsub -> (C) -> cb, JIT off and on.
#
# Ground truth: gdb stopped in getenv, which cb calls once through
# os.getenv; the native frames below getenv's caller are the stack cb runs
# on, named like ljsnap names them (symbol, else luajit+0xSTART, START the
# first address of the FDE that holds pc - 1; the names ljsnap recovers for
# such functions are put back to that form first: stitch_lib.sh unrecover).
# Which of them are VM frames: the .eh_frame FDE (readelf) that covers the
# frame lua_pcall calls (lj_vm_pcall) covers the interpreter; the test
# asserts the structure: lua_cpcall -> VM -> C (pmain, docall) -> lua_pcall
# -> VM (main thread) -> VM (coroutine 1) -> VM (coroutine 2) -> >= 1 C
# frame of string.gsub -> VM (cb).
#
# Expected stitched stack, root first: every VM frame replaced by its Lua
# activation, the builtins' Lua-side frames kept, the C function luajit runs
# the script from (pmain, a lua_CFunction via lua_cpcall) dropped since its
# native frame is there:
#   luajit;_start;__libc_start_main_impl;__libc_start_call_main;main;lua_cpcall;
#   luajit+P (pmain);luajit+D (docall);lua_pcall;main CHUNK;coroutine.resume;
#   OUTER;coroutine.resume;INNER;string.gsub;luajit+G... (gsub's C frames);CB
# so the builtin's native frames sit between string.gsub and the Lua
# callback.  Allowed variation: kernel frames after the leaf, and with the
# JIT on "_[j]" after CB.  >= 95% of the samples in the branch (a frame
# string.gsub or CB) exact, and the branch's share of the samples within
# 5 points of the CPU share os.clock gives the gsub calls.  Also
# --native-only (VM frames as "[LuaJIT interpreter]"; CB's frame as
# "[JIT code]" with the JIT on) and --lua-only (luajit;luajit+0x...;main CHUNK;
# coroutine.resume;OUTER;coroutine.resume;INNER;string.gsub;CB, luajit+0x...
# being pmain, which the stripped binary names by no symbol: its file offset,
# the same in every run).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stitch_lib.sh"
need_bpf
need_prog luajit luajit
need_prog gdb gdb
need_prog readelf binutils
need_prog python3 python3
SCRIPT=$top_srcdir/tests/lua/stitch_builtin.lua
SECS=${STITCH_SECONDS:-3}
LUAJIT=$(readlink -f "$(command -v luajit)")
gdb_helper

# Ground truth: the native frames cb runs on, root first, into $TMPD/gt.
timeout 120 gdb -q -batch -nx -ex 'set pagination off' -ex 'set confirm off' \
	-ex 'set breakpoint pending on' -ex 'set backtrace past-main on' -ex "source $TMPD/gt.py" \
	-ex 'break getenv' -ex run -ex 'python lh_until_pcall()' -ex 'python lh_bt("g")' -ex kill \
	--args "$LUAJIT" -joff "$SCRIPT" 1 > "$TMPD/gdb.log" 2>&1
GT=$(awk '$1 == "GT" && $2 == "g" { print $4; exit }' "$TMPD/gdb.log")
[ -n "$GT" ] || { cat "$TMPD/gdb.log" >&2; fail "gdb did not stop in getenv below lua_pcall"; }
note "gdb ground truth: $GT"
# Without getenv and the os.getenv builtin that called it.
echo "$GT" | tr ';' '\n' > "$TMPD/gt.all"
n=$(wc -l < "$TMPD/gt.all")
tail -1 "$TMPD/gt.all" | grep -q getenv || fail "gdb's innermost frame is not getenv"
head -n $(( n - 2 )) "$TMPD/gt.all" > "$TMPD/gt"
base=$(basename "$LUAJIT")

# The VM's FDE: the one covering the frame after lua_pcall.
off() { sed -n "s/^$base+0x\([0-9a-f]*\)$/\1/p"; }
vm1=$(awk 'p { print; exit } $0 == "lua_pcall" { p = 1 }' "$TMPD/gt" | off)
[ -n "$vm1" ] || fail "the frame lua_pcall calls is not in $base"
readelf --debug-dump=frames "$LUAJIT" | awk '/ FDE / { print $NF }' | sed 's/pc=//; s/\.\./ /' > "$TMPD/fdes"
VMR=
while read -r lo hi; do
	if [ $(( 0x$lo )) -le $(( 0x$vm1 )) ] && [ $(( 0x$vm1 )) -lt $(( 0x$hi )) ]; then VMR="$lo $hi"; break; fi
done < "$TMPD/fdes"
[ -n "$VMR" ] || fail "no FDE of $LUAJIT covers offset 0x$vm1"
note "VM FDE: $VMR"
# kind of each frame: V (VM) or F (anything else), same order as gt
while read -r fr; do
	o=$(echo "$fr" | off)
	# shellcheck disable=SC2086
	set -- $VMR
	if [ -n "$o" ] && [ $(( 0x$1 )) -le $(( 0x$o )) ] && [ $(( 0x$o )) -lt $(( 0x$2 )) ]; then
		echo V
	else
		echo F
	fi
done < "$TMPD/gt" > "$TMPD/gt.kind"
shape=$(paste -d' ' "$TMPD/gt.kind" "$TMPD/gt" | awk '
	$2 == "lua_cpcall" || $2 == "lua_pcall" { printf "%s ", $2; next }
	{ printf "%s ", $1 }')
note "frame kinds: $shape"
echo "$shape" | grep -Eq '^(F )+lua_cpcall V (F )+lua_pcall V V V (F )+V $' ||
	fail "gdb's stack is not lua_cpcall -> VM -> C -> lua_pcall -> 3 VM -> C (gsub) -> VM: $shape"

# expect CASE MODE: the expected stacks and markers (see stitch_lib.sh tally)
expect() {
	out=$TMPD/$1.out
	lname() {
		l=$(awk -v k="$1" '$1 == "FN" && $2 == k { print $3 }' "$out")
		n=$(awk -v k="$1" '$1 == "NAME" && $2 == k { print $3 }' "$out")
		if [ -z "$l" ] || [ -z "$n" ]; then fail "$1: the script printed no FN/NAME line for $1"; fi
		if [ "$n" = "?" ]; then echo "function <$SCRIPT:$l>"; else echo "$n $SCRIPT:$l"; fi
	}
	paste -d"$(printf '\t')" "$TMPD/gt.kind" "$TMPD/gt" | awk -F '\t' -v mode="$2" \
	    -v M="main $SCRIPT" -v O="$(lname outer)" -v I="$(lname inner)" -v CB="$(lname cb)" '
	function out(v, s) { printf "g\t%s\t%s\n", v, s }
	{ k[NR] = $1; f[NR] = $2 }
	END {
		# the Lua activations of the VM frames, root first
		act[1] = ""; act[2] = M ";coroutine.resume"; act[3] = O ";coroutine.resume"
		act[4] = I ";string.gsub"; act[5] = CB
		s = "luajit"; nat = "luajit"; v = 0
		for (j = 1; j <= NR; j++) {
			if (k[j] == "V") {
				v++; if (act[v] != "") s = s ";" act[v]
				nat = nat ";[LuaJIT interpreter]"
			} else {
				s = s ";" f[j]; nat = nat ";" f[j]
				if (k[j - 1] == "V" && v == 4) gsub1 = f[j]
			}
		}
		out("stitched", s); out("native", nat)
		out("lua", "luajit;C:pmain;" M ";coroutine.resume;" O ";coroutine.resume;" I ";string.gsub;" CB)
		if (mode == "jon") {
			out("stitched", s "_[j]"); sub(/\[LuaJIT interpreter\]$/, "[JIT code]", nat)
			out("native", nat)
			out("lua", "luajit;C:pmain;" M ";coroutine.resume;" O ";coroutine.resume;" I ";string.gsub;" CB "_[j]")
			out("stitched", "@" CB "_[j]")
		}
		out("stitched", "@string.gsub"); out("stitched", "@" CB)
		out("native", "@" gsub1); out("lua", "@string.gsub")
	}' > "$TMPD/$1.expect"
}

for mode in joff jon; do
	case=$mode
	cap=$TMPD/$case.ljsnap
	jflag=; [ $mode = joff ] && jflag=-joff
	"$LJSNAP" record -q -F 999 -o "$cap" -- "$LUAJIT" $jflag "$SCRIPT" "$SECS" \
		> "$TMPD/$case.out" 2> "$TMPD/$case.err" ||
		{ cat "$TMPD/$case.err" >&2; fail "$case: ljsnap record failed"; }
	grep -q '^ROUNDS ' "$TMPD/$case.out" || { cat "$TMPD/$case.err" >&2; fail "$case: the script did not finish"; }
	pid=$("$LJSNAP" info "$cap" | awk '/^  pid [0-9]+ \(ppid/ && / luajit / { print $2; exit }')
	[ -n "$pid" ] || fail "$case: no luajit process in the capture"
	expect "$case" "$mode"
	for view in stitched native lua; do
		case $view in
		stitched) opt= ;;
		native) opt=--native-only ;;
		*) opt=--lua-only ;;
		esac
		# Lua names as LuaJIT gives them (the call site), as the script prints them
		# shellcheck disable=SC2086
		"$LJSNAP" report -f folded --callsite-names --pid "$pid" $opt -o "$TMPD/$case.$view.raw" \
			"$cap" 2> "$TMPD/$case.$view.rerr" ||
			{ cat "$TMPD/$case.$view.rerr" >&2; fail "$case: ljsnap report $opt failed"; }
		unrecover "$LUAJIT" "$cap" "$pid" "$TMPD/$case.$view.raw"
		sed 's/^luajit;luajit+0x[0-9a-f]*;/luajit;C:pmain;/' "$TMPD/$case.$view.raw" \
			> "$TMPD/$case.$view.folded"
		[ -s "$TMPD/$case.$view.folded" ] || { cat "$TMPD/$case.$view.rerr" >&2; fail "$case: empty report $opt"; }
		tally "$case" "$view" "$TMPD/$case.$view.folded"
		check "$case" "$view"
	done
	shares "$case"
done
exit 0
