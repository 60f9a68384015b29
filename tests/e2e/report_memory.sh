#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: report --memory stream drops the harvested memory no later sample can
# use, and that changes nothing.  Three processes in a row (JIT off, off, on) run
# tests/lua/report_churn.lua: fresh prototypes from load() every round and
# GC cycle after cycle, so the capture holds many versions of the same
# ranges, and processes that end while others are still sampled.  The
# ground truth is report --memory load, which loads every version before
# the walk: the folded outputs, by function, by line and of Lua frames
# only, must be byte-identical (also for the capture cut at 70% and for one
# with a corrupt chunk), and the churn functions, which only the harvested
# memory names, must be in most Lua samples.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit

s="$top_srcdir/tests/lua/report_churn.lua"
"$LJSNAP" record -q -F 999 -o "$TMPD/c.ljsnap" -- sh -c \
	"luajit -joff $s 1.5 && luajit -joff $s 1.5 && luajit $s 1.5" > /dev/null 2> "$TMPD/record.err" ||
	{ cat "$TMPD/record.err" >&2; fail "ljsnap record failed"; }
"$LJSNAP" info "$TMPD/c.ljsnap" > "$TMPD/info" 2>&1 || fail "ljsnap info failed"
mem=$(sed -n 's/^records:.* memory \([0-9]*\).*/\1/p' "$TMPD/info")
procs=$(grep -c 'LuaJIT: ' "$TMPD/info")
note "$mem MEMORY records, $procs LuaJIT processes"
assert_ge "${mem:-0}" 2000 "too few MEMORY records to test"
assert_ge "$procs" 3 "the three LuaJIT processes are not in the capture"
for opt in "" --lines --lua-only; do
	# shellcheck disable=SC2086
	"$LJSNAP" report -f folded $opt --memory stream -o "$TMPD/drop.folded" "$TMPD/c.ljsnap" \
		2> /dev/null || fail "report $opt --memory stream failed"
	# shellcheck disable=SC2086
	"$LJSNAP" report -f folded $opt --memory load -o "$TMPD/keep.folded" "$TMPD/c.ljsnap" \
		2> /dev/null || fail "report $opt --memory load failed"
	cmp -s "$TMPD/drop.folded" "$TMPD/keep.folded" ||
		fail "report $opt: the output changes when memory is dropped" \
		     "($(diff "$TMPD/drop.folded" "$TMPD/keep.folded" | grep -c '^[<>]') lines differ)"
done
# The same on the capture cut at 70% and with a flipped byte in the middle
# (a corrupt chunk skipped): both ways skip and stop alike.
size=$(wc -c < "$TMPD/c.ljsnap")
head -c $(( size * 7 / 10 )) "$TMPD/c.ljsnap" > "$TMPD/cut.ljsnap"
cp "$TMPD/c.ljsnap" "$TMPD/bad.ljsnap"
printf '\125' | dd of="$TMPD/bad.ljsnap" bs=1 seek=$(( size / 2 )) conv=notrunc 2> /dev/null
for f in cut bad; do
	for m in stream load; do
		"$LJSNAP" report -f folded --memory $m -o "$TMPD/$f.$m" "$TMPD/$f.ljsnap" \
			2> "$TMPD/$f.$m.err" || fail "report --memory $m of the $f capture failed"
	done
	cmp -s "$TMPD/$f.stream" "$TMPD/$f.load" || fail "the $f capture: stream and load differ"
	[ -s "$TMPD/$f.stream" ] || fail "the $f capture: no stacks"
done
grep -q 'corrupt' "$TMPD/bad.stream.err" || fail "the flipped byte was not noticed"
# Samples in the churn functions, among those in the script's main chunk.
main=$(awk '/main [^;]*report_churn.lua/ { s += $NF } END { print s + 0 }' "$TMPD/drop.folded")
churn=$(awk '/main [^;]*report_churn.lua/ && /churn_[0-9]+ churn[0-9]+:/ { s += $NF } END { print s + 0 }' \
	"$TMPD/drop.folded")
note "$churn of $main Lua samples of the script are in a churn function"
assert_ge "$main" 300 "too few Lua samples"
assert_ge "$(pct "$churn" "$main")" 60 "the churn functions are missing from the stacks"
exit 0
