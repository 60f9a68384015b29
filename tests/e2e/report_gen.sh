#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: prototypes freed by the GC and new ones allocated at the same
# addresses (tests/lua/report_gen.lua: ~150 generations of a chunk "=genK"
# with leaf_K(), each run for ~20 ms then collected), recorded with real
# BPF, interpreter only and with the JIT.  `ljsnap report` must never mix
# generations in a stack (a frame of genJ under or named by genK), and must
# show most samples as the whole chain main -> f genK:6 -> leaf_K genK:1.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
SCRIPT=$top_srcdir/tests/lua/report_gen.lua

run_case() {	# name, luajit flags
	case=$1; shift
	cap=$TMPD/$case.ljsnap
	"$LJSNAP" record -q -F 499 -o "$cap" -- luajit "$@" "$SCRIPT" 3 > "$TMPD/$case.out" \
		2> "$TMPD/$case.err" || { cat "$TMPD/$case.err" >&2; fail "$case: ljsnap record failed"; }
	gens=$(awk '$1 == "GENERATIONS" { print $2 }' "$TMPD/$case.out")
	assert_ge "${gens:-0}" 20 "$case: too few generations ran"
	"$LJSNAP" info "$cap" > "$TMPD/$case.info"
	changed=$(awk '$1 == "harvest_generations" { print $2 }' "$TMPD/$case.info")
	note "$case: $gens generations, recorder saw $changed ranges change content"
	assert_ge "${changed:-0}" 1 "$case: no memory range changed content: the test exercised nothing"
	pid=$(awk '/^  pid [0-9]+ \(ppid/ && /luajit/ { print $2; exit }' "$TMPD/$case.info")
	[ -n "$pid" ] || fail "$case: no luajit process in the capture"
	"$LJSNAP" report -f folded --pid "$pid" -o "$TMPD/$case.folded" "$cap" 2> "$TMPD/$case.rerr" ||
		{ cat "$TMPD/$case.rerr" >&2; fail "$case: ljsnap report failed"; }
	awk -v chunk="$SCRIPT" '
		{ n = $NF; tot += n; line = $0; sub(/ [0-9]+$/, "", line)
		  # every generation number named in the stack (chunks and leaf names)
		  k = ""; mixed = 0; s = line
		  while (match(s, /(gen|leaf_)[0-9]+/)) {
			v = substr(s, RSTART, RLENGTH); sub(/^(gen|leaf_)/, "", v)
			if (k == "") k = v; else if (v != k) mixed = 1
			s = substr(s, RSTART + RLENGTH)
		  }
		  if (mixed) { bad += n; if (shown++ < 3) print "mixed: " line > "/dev/stderr" }
		  if (k != "" && index(line, ";main " chunk ";f gen" k ":6;leaf_" k " gen" k ":1"))
			chain += n }
		END { print "total", tot + 0; print "mixed", bad + 0; print "chain", chain + 0 }' \
		"$TMPD/$case.folded" > "$TMPD/$case.check"
	sed "s/^/# $case: /" "$TMPD/$case.check"
	total=$(value total "$TMPD/$case.check")
	assert_ge "$total" 500 "$case: too few samples"
	[ "$(value mixed "$TMPD/$case.check")" = 0 ] || fail "$case: stacks mix prototype generations"
	assert_ge "$(pct "$(value chain "$TMPD/$case.check")" "$total")" 80 \
		"$case: main -> f -> leaf_K chain in < 80% of the samples"
}

run_case joff -joff
run_case jon
exit 0
