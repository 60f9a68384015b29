#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: a non-GC64 LuaJIT (Debian's upstream source built with
# -DLUAJIT_DISABLE_GC64 by tests/variants/prepare.sh) running a workload with
# a known call structure (tests/lua/build_chain.lua), interpreter only and
# with the JIT, recorded with real BPF: >= 95% of the samples with Lua code
# on CPU unwind to the main chunk and >= 80% end in main -> run -> level1 ->
# level2 -> leaf; `ljsnap doctor` says upstream, non-GC64, single-number,
# its live calibration confirms the layout, and its offsets are the ones
# the compiler gives for the source tree (tests/variants/ljoffsets.c).
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/variants/lib.sh"
need_bpf
V=$(variant up-nogc64) || exit 1
LJ=$V/luajit

for jit in joff jon; do
	flag=; [ $jit = joff ] && flag=-joff
	record_chain nogc64-$jit 3 "$LJ" $flag
	grep -q "upstream non-GC64 in $LJ" "$TMPD/nogc64-$jit.err" ||
		{ cat "$TMPD/nogc64-$jit.err" >&2; fail "nogc64-$jit: not detected as upstream non-GC64"; }
	check_chain_run nogc64-$jit
done
# The JIT run must have spent most of its time in traces (non-GC64 traces do
# not keep DISPATCH in r14: g comes from the thread cache there).
tr=$(awk '/JIT-compiled \(trace\)/ { sub(/\..*/, "", $NF); print $NF }' "$TMPD/nogc64-jon.txt")
assert_ge "${tr:-0}" 50 "nogc64-jon: too few samples in traces"
doctor_chain nogc64 upstream non-GC64 single-number "$LJ"
ground_truth nogc64 "$V"
doctor_offsets nogc64
exit 0
