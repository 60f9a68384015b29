#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: record a luajit script whose work split is known (tests/lua/
# report_split.lua: main chunk -> driver() -> a() 60%, b() 30%, c() 10% of
# the same loop) with real BPF, interpreter only and with the JIT, then
# check `ljsnap report`: the folded stacks show the whole chain from the
# main chunk to each hot function with the designed shares (within 5
# points), and the text summary reports >= 99% of the samples unwound to
# the main chunk with no unknown frame.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
SCRIPT=$top_srcdir/tests/lua/report_split.lua

# share NAME LINEDEFINED FOLDED TOTAL: per mille of the samples whose stack
# is luajit;[host C frames;]main;driver;NAME (NAME possibly in a trace), in the
# Lua view of the stacks (--lua-only; the stitched native view is tested elsewhere).
# luajit runs the main chunk from C (pmain via lua_cpcall): frames below the
# main chunk are allowed if they are C frames (named by symbol or
# luajit+0xOFFSET in the stripped binary), never [unknown] ones.
share() {
	awk -v chunk="$SCRIPT" -v d="$DRIVER" -v f="$1" -v def="$2" -v tot="$4" '
		BEGIN { want = "main " chunk ";driver " chunk ":" d ";" f " " chunk ":" def }
		{ n = $NF; sub(/ [0-9]+$/, ""); sub(/_\[j\]$/, "")
		  if (substr($0, 1, 7) != "luajit;") next
		  i = index($0, ";main " chunk ";"); if (!i) next
		  below = substr($0, 8, i - 7)
		  if (below != "" && below ~ /\[unknown|^(main |driver )/) next }
		substr($0, i + 1) == want { s += n }
		END { printf "%d\n", tot ? 1000 * s / tot : 0 }' "$3"
}

# near NAME GOT WANT: |GOT - WANT| <= 50 (tenths of a percent)
near() {
	d=$(( $2 - $3 )); [ $d -lt 0 ] && d=$(( -d ))
	[ $d -le 50 ] || fail "$case: $1 has $(( $2 / 10 )).$(( $2 % 10 ))% of the samples, designed $(( $3 / 10 ))%"
}

run_case() {	# name, luajit flags
	case=$1; shift
	cap=$TMPD/$case.ljsnap
	"$LJSNAP" record -q -F 499 -o "$cap" -- luajit "$@" "$SCRIPT" 3 > "$TMPD/$case.out" \
		2> "$TMPD/$case.err" || { cat "$TMPD/$case.err" >&2; fail "$case: ljsnap record failed"; }
	DRIVER=$(awk '$1 == "FN" && $2 == "driver" { print $3 }' "$TMPD/$case.out")
	[ -n "$DRIVER" ] || fail "$case: the script did not run"
	pid=$("$LJSNAP" info "$cap" | awk '/^  pid [0-9]+ \(ppid/ && /luajit/ { print $2; exit }')
	[ -n "$pid" ] || fail "$case: no luajit process in the capture"
	"$LJSNAP" report -f folded --lua-only --pid "$pid" -o "$TMPD/$case.folded" "$cap" 2> "$TMPD/$case.rerr" ||
		{ cat "$TMPD/$case.rerr" >&2; fail "$case: ljsnap report -f folded failed"; }
	"$LJSNAP" report -f text --pid "$pid" "$cap" > "$TMPD/$case.txt" 2>&1 ||
		{ cat "$TMPD/$case.txt" >&2; fail "$case: ljsnap report -f text failed"; }
	# Folded lines are "frames count": no empty frame, no trailing blank.
	bad=$(grep -cvE '^[^;]+(;[^;]+)* [0-9]+$' "$TMPD/$case.folded")
	[ "$bad" = 0 ] || fail "$case: $bad malformed folded lines"
	total=$(awk '{ s += $NF } END { print s + 0 }' "$TMPD/$case.folded")
	assert_ge "$total" 500 "$case: too few samples"
	note "$case: $total samples; top stacks:"
	awk '{ print $NF "\t" $0 }' "$TMPD/$case.folded" | sort -rn | head -5 | cut -f2 |
		cut -c1-200 | sed 's/^/#   /'
	sed -n '/^unwinding:/,/^$/p' "$TMPD/$case.txt" | sed "s/^/# $case: /"
	for fn in a b c; do
		def=$(awk -v f=$fn '$1 == "FN" && $2 == f { print $3 }' "$TMPD/$case.out")
		eval "s_$fn=\$(share $fn $def \"\$TMPD/\$case.folded\" $total)"
	done
	note "$case: a $s_a, b $s_b, c $s_c (per mille of all samples)"
	near "a()" "$s_a" 600
	near "b()" "$s_b" 300
	near "c()" "$s_c" 100
	line=$(grep 'unwound to the main chunk with no unknown frame:' "$TMPD/$case.txt")
	[ -n "$line" ] || fail "$case: no completeness line in the text report"
	n=$(echo "$line" | sed 's/.*frame: \([0-9]*\) of \([0-9]*\).*/\1/')
	m=$(echo "$line" | sed 's/.*frame: \([0-9]*\) of \([0-9]*\).*/\2/')
	assert_ge "$(( 100 * m ))" "$(( 95 * total ))" "$case: LuaJIT state found in < 95% of the samples"
	assert_ge "$(( 100 * n ))" "$(( 99 * m ))" "$case: < 99% unwound to the main chunk ($line)"
}

run_case joff -joff
run_case jon
exit 0
