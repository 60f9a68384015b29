#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: many traces.  tests/lua/trace_many.lua runs 40 functions generated
# with load() (chunks "gen01".."gen40"), each with a hot loop compiled into
# its own traces and a helper inlined into it, in proportions set by their
# iteration counts.  Recorded with the JIT on and with -joff, the share of
# samples of each of them (and of the biggest helpers) must agree within 5
# points, and every generated function must be seen.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/trace_lib.sh"
need_bpf
need_prog luajit luajit
W=$top_srcdir/tests/lua/trace_many.lua

record_folded jon luajit "$W" 4
record_folded joff luajit -joff "$W" 4
jon=$TMPD/jon.folded; joff=$TMPD/joff.folded
n=$(total "$jon"); note "JIT on: $n samples, -joff: $(total "$joff") samples"
assert_ge "$n" 1000 "too few samples with the JIT on"

# Each generated function with its inlined helper (leaf frames of chunk genNN).
for k in 38 39 40; do
	same_share "gen$k" "gen$k:[0-9]+>?\$" "$jon" "$joff"
	same_share "gen$k loop" "^function <gen$k:10>\$" "$jon" "$joff"
	same_share "gen$k helper" "^helper gen$k:2\$" "$jon" "$joff"
done
# The 37 small ones together (1 unit each of 97: about 38%).
same_share "gen01..gen37" "gen(0[1-9]|[12][0-9]|3[0-7]):[0-9]+>?\$" "$jon" "$joff"
seen=0
for k in $(seq -w 1 40); do
	[ "$(stack_count "$jon" "gen$k:")" -gt 0 ] && seen=$((seen + 1))
done
note "JIT on: $seen of 40 generated functions seen"
assert_ge "$seen" 40 "generated functions missing from the JIT-on report"
assert_ge "$(pct "$(stack_count "$jon" '_\[j\]')" "$n")" 80 "few samples in trace frames (_[j])"
assert_ge "$(pct "$(stack_count "$jon" 'helper gen[0-9]+:2_\[i\]$')" "$n")" 25 \
	"generated helpers rarely shown inlined (_[i])"
exit 0
