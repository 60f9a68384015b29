#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: a BPF map with no room left is counted and said, never silent.
# `record --max-procs 2 -- sh -c '4 x luajit &'`: the shell and its first
# child fill the target map, so the other three children are not sampled.
# record must say so at the end, count it in the capture (BPF counter
# target_full), and report must print a note; with the default sizes all
# four children are sampled and nothing is said.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
spin='local t = os.clock() while os.clock() - t < 1.5 do end'
work="for i in 1 2 3 4; do luajit -e '$spin' & done; wait"

for case in small default; do
	opt=; [ $case = small ] && opt="--max-procs 2"
	# shellcheck disable=SC2086
	"$LJSNAP" record -F 199 $opt -o "$TMPD/$case.ljsnap" -- sh -c "$work" \
		> "$TMPD/$case.out" 2> "$TMPD/$case.err" ||
		{ cat "$TMPD/$case.err" >&2; fail "$case: ljsnap record failed"; }
	"$LJSNAP" info "$TMPD/$case.ljsnap" > "$TMPD/$case.info" || fail "$case: ljsnap info failed"
	"$LJSNAP" report -f text "$TMPD/$case.ljsnap" > "$TMPD/$case.txt" 2>&1 || fail "$case: ljsnap report failed"
	full=$(awk '$1 == "target_full" { print $2 }' "$TMPD/$case.info")
	sampled=$(grep -c '^  pid [0-9]* luajit: [1-9][0-9]* samples' "$TMPD/$case.txt")
	note "$case: target_full ${full:-?}, luajit processes with samples: $sampled"
	if [ $case = small ]; then
		assert_ge "${full:-0}" 1 "small: the full target map was not counted"
		[ "$sampled" -le 1 ] || fail "small: $sampled luajit processes sampled with room for 1"
		grep -q 'were not sampled or not configured: the BPF maps were full' "$TMPD/$case.err" ||
			{ cat "$TMPD/$case.err" >&2; fail "small: record did not say the maps were full"; }
		grep -q 'processes were not sampled or not configured: the BPF maps were full' "$TMPD/$case.txt" ||
			{ cat "$TMPD/$case.txt" >&2; fail "small: report printed no note"; }
	else
		[ "${full:-x}" = 0 ] || fail "default: target_full is ${full:-missing}, want 0"
		[ "$sampled" = 4 ] || { cat "$TMPD/$case.txt" >&2; fail "default: $sampled of 4 luajit processes sampled"; }
		! grep -q 'BPF maps were full' "$TMPD/$case.err" "$TMPD/$case.txt" ||
			fail "default: a full map was reported"
	fi
done
exit 0
