#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: a C function a trace calls, one of two side-effecting calls that the
# sample cannot tell apart, with real BPF (issue 10).
# tests/lua/trace_two_calls.lua loops on f:write(s); f:flush() (IR CALLS
# fwrite, CALLS fflush, no snapshot between them in the loop body).
# * alike(): both calls on one line.  Both calls' snapshots have the same
#   frames and line, so the frames at the call are known whichever it was
#   (snap_call_alike): >= 95% of the samples inside fwrite or fflush must
#   be right under alike_[j] at that line.  Before, 97% had
#   [unknown: call_frames] between them.
# * apart(): the calls on two lines.  Which line is not known, so a sample
#   must carry the marker or its own call's line: at most 2% may name the
#   other call's line, and the marker must still be there.
# Ground truth: the script's structure (only those two lines call them).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/trace_lib.sh"
need_bpf
need_prog luajit luajit
W=$top_srcdir/tests/lua/trace_two_calls.lua
k='(;[^;]*_\[k\])*$'
c="trace_two_calls\\.lua"

# report the capture again with current lines
lines_of() {
	"$LJSNAP" report -f folded --lines -o "$TMPD/$1.lines" "$TMPD/$1.ljsnap" 2> /dev/null ||
		fail "$1: ljsnap report --lines failed"
}

record_folded alike luajit "$W" alike 3
lines_of alike
la=$(line_of "$W" '^    f:write\(s\); f:flush\(\)')
[ -n "$la" ] || fail "cannot find alike's line in $W"
in=$(stack_count "$TMPD/alike.lines" ";(fwrite|fflush)(;[^;]*)*$k")
good=$(stack_count "$TMPD/alike.lines" ";alike [^;]*$c:${la}_\\[j\\];(fwrite|fflush)(;[^;]*)*$k")
unsure=$(stack_count "$TMPD/alike.lines" ";\\[unknown: call_frames\\];(fwrite|fflush)(;[^;]*)*$k")
note "alike: $in samples inside fwrite/fflush, $good under alike_[j] at line $la, $unsure under [unknown: call_frames]"
assert_ge "$in" 200 "alike: too few samples inside fwrite/fflush"
assert_ge "$(pct "$good" "$in")" 95 "alike: fwrite/fflush not right under alike_[j] at line $la"
"$LJSNAP" report -f text "$TMPD/alike.ljsnap" 2> /dev/null | grep -q 'snap_call_alike' ||
	fail "the text report does not count snap_call_alike"

record_folded apart luajit "$W" apart 3
lines_of apart
lw=$(line_of "$W" '^    f:write\(s\)$')
lf=$(line_of "$W" '^    f:flush\(\)$')
[ -n "$lw" ] && [ -n "$lf" ] || fail "cannot find apart's lines in $W"
for cf in fwrite:$lw:$lf fflush:$lf:$lw; do
	f=${cf%%:*}; rest=${cf#*:}; own=${rest%%:*}; other=${rest#*:}
	in=$(stack_count "$TMPD/apart.lines" ";$f(;[^;]*)*$k")
	right=$(stack_count "$TMPD/apart.lines" ";apart [^;]*$c:${own}_\\[j\\];$f(;[^;]*)*$k")
	marked=$(stack_count "$TMPD/apart.lines" ";\\[unknown: call_frames\\];$f(;[^;]*)*$k")
	wrong=$(stack_count "$TMPD/apart.lines" ";apart [^;]*$c:${other}_\\[j\\];$f(;[^;]*)*$k")
	note "apart: $in samples inside $f: $right at its line $own, $marked under the marker, $wrong at line $other"
	assert_ge "$in" 50 "apart: too few samples inside $f"
	assert_ge "$(pct "$((right + marked))" "$in")" 95 "apart: $f neither at its line nor under the marker"
	[ "$(pct "$wrong" "$in")" -le 2 ] || fail "apart: $f at the other call's line in $wrong of $in samples"
	assert_ge "$marked" 1 "apart: $f never under the marker (which line cannot be known)"
done
exit 0
