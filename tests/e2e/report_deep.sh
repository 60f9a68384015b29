#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: a 300-deep Lua recursion (tests/lua/report_deep.lua) recorded with
# real BPF, interpreter only and with the JIT, must appear in `ljsnap
# report -f folded` with all 300 frames between the main chunk and the
# recursion's bottom, in nearly every sample.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
SCRIPT=$top_srcdir/tests/lua/report_deep.lua

run_case() {	# name, luajit flags
	case=$1; shift
	cap=$TMPD/$case.ljsnap
	"$LJSNAP" record -q -F 199 -o "$cap" -- luajit "$@" "$SCRIPT" 3 > "$TMPD/$case.out" \
		2> "$TMPD/$case.err" || { cat "$TMPD/$case.err" >&2; fail "$case: ljsnap record failed"; }
	rec=$(awk '$1 == "FN" && $2 == "rec" { print $3 }' "$TMPD/$case.out")
	depth=$(awk '$1 == "DEPTH" { print $2 }' "$TMPD/$case.out")
	[ -n "$rec" ] && [ -n "$depth" ] || fail "$case: the script did not run"
	pid=$("$LJSNAP" info "$cap" | awk '/^  pid [0-9]+ \(ppid/ && /luajit/ { print $2; exit }')
	[ -n "$pid" ] || fail "$case: no luajit process in the capture"
	"$LJSNAP" report -f folded --lua-only --pid "$pid" -o "$TMPD/$case.folded" "$cap" 2> "$TMPD/$case.rerr" ||
		{ cat "$TMPD/$case.rerr" >&2; fail "$case: ljsnap report failed"; }
	# Per line: is it luajit;[C frames of luajit's pmain;]main;rec x depth
	# (the bottom may run in a trace)?
	awk -F';' -v chunk="$SCRIPT" -v r="$rec" -v depth="$depth" '
		{ n = $NF; sub(/.* /, "", n); n += 0; sub(/ [0-9]+$/, "", $NF); tot += n
		  for (m = 2; m <= NF && $m !~ /^main / && $m !~ /^\[unknown/; m++) ;
		  ok = $1 == "luajit" && $m == "main " chunk && NF == m + depth
		  for (i = m + 1; ok && i <= NF; i++) {
			f = $i; if (i == NF) sub(/_\[j\]$/, "", f)
			ok = f == "rec " chunk ":" r
		  }
		  if (ok) full += n
		  if (NF - m > maxd) maxd = NF - m }
		END { print "total", tot + 0; print "full", full + 0; print "deepest", maxd + 0 }' \
		"$TMPD/$case.folded" > "$TMPD/$case.check"
	sed "s/^/# $case: /" "$TMPD/$case.check"
	total=$(value total "$TMPD/$case.check")
	full=$(value full "$TMPD/$case.check")
	assert_ge "$total" 300 "$case: too few samples"
	assert_ge "$(pct "$full" "$total")" 95 "$case: the $depth-deep recursion is whole in < 95% of the samples"
}

run_case joff -joff
run_case jon
exit 0
