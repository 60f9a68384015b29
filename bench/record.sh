#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/record.sh -- capture cost of `ljsnap record`, side by side with
# `perf record -g --call-graph dwarf`, on one fixed workload, in one run.
#
# usage: sudo bench/record.sh [ROUNDS]   (run from a built tree; root needed)
#
# For 99 Hz and 999 Hz it prints: the BPF program's ns per run
# (kernel.bpf_stats_enabled), bytes per sample in the capture file,
# ljsnap record's own CPU time (and per sample), its walk+harvest time per
# sample, and the target's CPU time next to an unprofiled run and to perf.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
LJSNAP=${LJSNAP:-$top/ljsnap}
[ -x "$LJSNAP" ] || LJSNAP=$top/build-tests/ljsnap
rounds=${1:-600}
work="luajit $top/tests/lua/fixed_work.lua $rounds"
tmp=$(mktemp -d)
trap 'sysctl -q kernel.bpf_stats_enabled=$old_stats; rm -rf "$tmp"' EXIT
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q kernel.bpf_stats_enabled=1
command -v perf >/dev/null || { echo "perf not found (Debian package linux-perf)"; exit 1; }

# target_cpu CMD...: run CMD under bash's `time`; print the target's user+sys seconds.
target_cpu() {
	local f=$tmp/t.$$
	bash -c "TIMEFORMAT='%U %S'; time $work >/dev/null" 2> "$f"
	awk '{ printf "%.3f", $1 + $2 }' "$f"
}

# outer_cpu OUTFILE CMD...: run CMD (which runs the workload) and print the
# total user+sys of CMD and its children; the target's time goes to OUTFILE.
run_wrapped() {	# tool_cmd_prefix output_file
	local prefix=$1 out=$2
	local f=$tmp/o.$$
	( TIMEFORMAT='%U %S'; time $prefix bash -c "TIMEFORMAT='%U %S'; time $work >/dev/null" \
		2> "$out.target" ) 2> "$f" > "$out.log"
	awk '{ printf "%.3f", $1 + $2 }' "$f" > "$out.total"
	tail -1 "$out.target" | awk '{ printf "%.3f", $1 + $2 }' > "$out.tcpu"
}

printf "workload: %s\n" "$work"
base=$(target_cpu)
base2=$(target_cpu)
printf "%-22s target CPU %6.3f s, %6.3f s (two unprofiled runs)\n" "none" "$base" "$base2"
base=$(awk -v a="$base" -v b="$base2" 'BEGIN { printf "%.3f", (a + b) / 2 }')

for hz in 99 999; do
	# ljsnap
	o=$tmp/lj$hz
	run_wrapped "$LJSNAP record -q -F $hz -o $tmp/lj$hz.ljsnap --" "$o"
	tcpu=$(cat "$o.tcpu"); total=$(cat "$o.total")
	size=$(stat -c %s "$tmp/lj$hz.ljsnap")
	"$LJSNAP" info "$tmp/lj$hz.ljsnap" > "$o.info"
	samples=$(awk '$1 == "samples_written" { print $2 }' "$o.info")
	run_ns=$(awk '$1 == "bpf_run_ns" { print $2 }' "$o.info")
	run_cnt=$(awk '$1 == "bpf_run_cnt" { print $2 }' "$o.info")
	walk_ns=$(awk '$1 == "walk_ns" { print $2 }' "$o.info")
	walked=$(awk '$1 == "walked" { print $2 }' "$o.info")
	self=$(awk -v t="$total" -v c="$tcpu" 'BEGIN { printf "%.3f", t - c }')
	printf "%-22s target CPU %6.3f s (x%.3f)  samples %6d  file %8d B (%6.0f B/sample)\n" \
		"ljsnap record -F $hz" "$tcpu" "$(awk -v a="$tcpu" -v b="$base" 'BEGIN{print a/b}')" \
		"$samples" "$size" "$(awk -v s="$size" -v n="$samples" 'BEGIN{print n ? s/n : 0}')"
	printf "%-22s   BPF %.0f ns/run over %d runs; ljsnap CPU %.3f s (%.1f us/sample), walk+harvest %.1f us/sample\n" \
		"" "$(awk -v a="$run_ns" -v b="$run_cnt" 'BEGIN{print b ? a/b : 0}')" "$run_cnt" "$self" \
		"$(awk -v s="$self" -v n="$samples" 'BEGIN{print n ? s*1e6/n : 0}')" \
		"$(awk -v a="$walk_ns" -v b="$walked" 'BEGIN{print b ? a/b/1000 : 0}')"
	# perf
	o=$tmp/perf$hz
	run_wrapped "perf record -q -F $hz -g --call-graph dwarf -o $tmp/perf$hz.data --" "$o"
	tcpu=$(cat "$o.tcpu"); total=$(cat "$o.total")
	size=$(stat -c %s "$tmp/perf$hz.data")
	nsamp=$(perf script -i "$tmp/perf$hz.data" -F comm 2>/dev/null | wc -l)
	self=$(awk -v t="$total" -v c="$tcpu" 'BEGIN { printf "%.3f", t - c }')
	printf "%-22s target CPU %6.3f s (x%.3f)  samples %6d  file %8d B (%6.0f B/sample); perf CPU %.3f s\n" \
		"perf record -F $hz" "$tcpu" "$(awk -v a="$tcpu" -v b="$base" 'BEGIN{print a/b}')" \
		"$nsamp" "$size" "$(awk -v s="$size" -v n="$nsamp" 'BEGIN{print n ? s/n : 0}')" "$self"
done
