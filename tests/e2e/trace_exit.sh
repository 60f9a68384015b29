#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: native stacks through JIT trace exits, with real BPF.
# tests/lua/trace_exit.lua runs a loop whose trace takes a side exit every
# third iteration, kept an exit (hotexit out of reach), so that a large
# share of the samples are in the exit handler or in lj_trace_exit, which
# runs lj_snap_restore under lj_vm_cpcall: the exit handler's frame then
# sits above L->cframe, and the VM's one FDE is wrong for it
# (unwind/native_lj.c).  Recorded at 999 Hz; in the mixed view the samples
# in a trace exit ("[trace exit]") and in the native-only view those whose
# stack passes through lj_trace_exit must reach the outermost frame
# (_start) in >= 95%, and the exit samples must be >= 10% of all.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/trace_lib.sh"
need_bpf
need_prog luajit luajit
W=$top_srcdir/tests/lua/trace_exit.lua

"$LJSNAP" record -q -F 999 -o "$TMPD/x.ljsnap" -- luajit "$W" 4 > "$TMPD/x.out" \
	2> "$TMPD/x.err" || { cat "$TMPD/x.err" >&2; fail "ljsnap record failed"; }
for v in mixed native; do
	opt=; [ $v = native ] && opt=--native-only
	"$LJSNAP" report -f folded --no-kernel $opt -o "$TMPD/$v.folded" "$TMPD/x.ljsnap" \
		2> "$TMPD/$v.rerr" || { cat "$TMPD/$v.rerr" >&2; fail "$v: ljsnap report failed"; }
done
n=$(total "$TMPD/mixed.folded")
assert_ge "$n" 1000 "too few samples"

# check_view VIEW REGEX NAME: the samples of VIEW matching REGEX, and of them
# those that reach _start.
check_view() {
	all=$(stack_count "$TMPD/$1.folded" "$2")
	whole=$(stack_count "$TMPD/$1.folded" "^[^;]*;_start;.*$2")
	note "$1: $all of $n samples in a trace exit ($3), $whole of them reach _start" \
		"($(pct "$whole" "$all")%)"
	assert_ge "$(pct "$all" "$n")" 10 "$1: too few samples in a trace exit"
	if [ "$(pct "$whole" "$all")" -lt 95 ]; then
		awk -v re="$2" '$0 ~ re && $0 !~ /^[^;]*;_start;/' "$TMPD/$1.folded" | sort -t' ' -k2 -nr |
			head -5 >&2
		fail "$1: < 95% of the trace exit samples reach _start"
	fi
}
check_view mixed '\[trace exit\]' '[trace exit]'
check_view native ';lj_trace_exit(;|$)' 'lj_trace_exit'
exit 0
