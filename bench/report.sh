#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/report.sh -- speed of `ljsnap report -f folded` (native unwinding
# with libdw, Lua walk, stitching, symbolization, aggregation) on a capture
# of ~100,000 samples, side by side with `perf script` on a
# `perf record -g --call-graph dwarf` capture of the same workload, in one run.
#
# usage: sudo bench/report.sh [SECONDS] [HZ]   (from a built tree; root needed;
#                                              default 12 s at 4999 Hz)
#        LJSNAP_BASELINE=/path/to/an/older/ljsnap sudo bench/report.sh ...
#                  also times that build on the same capture, 3 runs each,
#                  alternating, and prints the ratio of the medians and whether
#                  the two folded outputs are identical (a baseline that cannot
#                  read the capture's format reads it rewritten as an older
#                  one: tests/golden/rewrite, built by `make check`)
#        LJSNAP_REPORT_OPTS="--threads 1" sudo bench/report.sh ...
#                  extra options for this build's report commands (the
#                  single-thread figure: --threads 1)
#        LJSNAP_BASELINE_OPTS="--threads 1" ...
#                  the same for the baseline's (a build that knows them)
#        LJSNAP_BENCH_JIT=on sudo bench/report.sh ...
#                  the same workload with the JIT on (traces; perf's unwind
#                  stops at trace code, so its frames per sample drop)
#        LJSNAP_BENCH_WORK=luacheck sudo bench/report.sh 0 [HZ]
#                  a real program instead: one Debian luacheck over
#                  /usr/share/lua/5.1 per CPU (about 7 s with the JIT, set
#                  LJSNAP_BENCH_JIT=on for it; SECONDS > 0 repeats it that
#                  long, but perf's capture grows by 16 KiB per sample: for
#                  report's memory on a long capture see bench/report_rss.sh): deep Lua
#                  stacks, thousands of prototypes and traces, so the
#                  capture carries many MEMORY records
#
# Workload: one `luajit -joff tests/lua/stitch_builtin.lua SECONDS` per CPU
# (two coroutines deep, string.gsub calling back into Lua: ~16 frames per
# stitched stack, 5 VM frames each replaced by its Lua frames).  Both recorders copy
# 16 KiB of user stack per sample (ljsnap's default; perf --call-graph
# dwarf,16384).  Figures: samples in each capture, wall and CPU (user+sys)
# seconds of each report command, samples per second of wall time, and the
# ratio ljsnap / perf, and frames per sample and per second of each (perf's
# DWARF unwinding stops after 2 frames wherever the interpreter is inside a
# VM subroutine, where the VM's one FDE is wrong; ljsnap steps those with
# the cframe, so it emits about twice the frames per sample here).  The
# workload runs with -joff, so that perf can unwind through the interpreter
# at all (a JIT trace has no CFI: perf stops there).  `ljsnap report
# --lua-only` (no native unwinding) is printed as a reference, and the peak
# RSS of report and perf script (with /usr/bin/time, Debian package time).  Not part of
# `make check`: a benchmark, not a test.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
LJSNAP=${LJSNAP:-$top/ljsnap}
[ -x "$LJSNAP" ] || LJSNAP=$top/build-tests/ljsnap
[ -x "$LJSNAP" ] || { echo "ljsnap not built (set LJSNAP=/path/to/ljsnap)"; exit 1; }
seconds=${1:-12}
# shellcheck disable=SC2206
ropts=(${LJSNAP_REPORT_OPTS:-})
# shellcheck disable=SC2206
bopts=(${LJSNAP_BASELINE_OPTS:-})
hz=${2:-4999}
[ "$(id -u)" = 0 ] || { echo "run as root (BPF and perf events)"; exit 1; }
command -v perf >/dev/null || { echo "perf not found (Debian package linux-perf)"; exit 1; }
command -v luajit >/dev/null || { echo "luajit not found (Debian package luajit)"; exit 1; }
ncpu=$(nproc)
script=$top/tests/lua/stitch_builtin.lua
jopt=-joff
[ "${LJSNAP_BENCH_JIT:-off}" = on ] && jopt=
work="for i in \$(seq $ncpu); do luajit $jopt $script $seconds > /dev/null & done; wait"
if [ "${LJSNAP_BENCH_WORK:-}" = luacheck ]; then
	[ -x /usr/bin/luacheck ] || { echo "luacheck not found (Debian package lua-check)"; exit 1; }
	script=/usr/bin/luacheck
	seconds="/usr/share/lua/5.1"
	lc="luajit $jopt /usr/bin/luacheck /usr/share/lua/5.1 --no-cache -qq > /dev/null"
	work="for i in \$(seq $ncpu); do $lc & done; wait"
	# SECONDS > 0: each CPU runs luacheck again and again for that long
	# (a long capture: about 4.5 MB/s at 4999 Hz on 2 CPUs)
	if [ "${1:-0}" -gt 0 ]; then
		work="end=\$((\$(date +%s) + $1)); for i in \$(seq $ncpu); do"
		work="$work (while [ \$(date +%s) -lt \$end ]; do $lc; done) & done; wait"
		seconds="/usr/share/lua/5.1, repeated for $1 s"
	fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# timed OUT CMD...: run CMD with stdout to OUT; print "wall cpu" seconds.
timed() {
	local out=$1 f=$tmp/time.$$
	shift
	TIMEFORMAT='%R %U %S'
	{ time "$@" > "$out" 2> "$tmp/err"; } 2> "$f" ||
		{ cat "$tmp/err" >&2; echo "failed: $*" >&2; exit 1; }
	tail -1 "$f" | awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }'
}

# row NAME SAMPLES WALL CPU: one line of the table
row() {
	awk -v n="$1" -v s="$2" -v w="$3" -v c="$4" 'BEGIN {
		printf "%-34s %7d samples  %7.2f s wall  %7.2f s CPU  %9.0f samples/s\n",
		       n, s, w, c, (w > 0 ? s / w : 0) }'
}

echo "workload: $ncpu x luajit ${jopt:--jon} $(basename "$script") $seconds (${hz} Hz, 16 KiB stacks)"
"$LJSNAP" record -q -F "$hz" --ringbuf-mb 256 -o "$tmp/lj.ljsnap" -- bash -c "$work" ||
	{ echo "ljsnap record failed"; exit 1; }
"$LJSNAP" info "$tmp/lj.ljsnap" > "$tmp/lj.info"
lost=$(awk '$1 == "samples_lost" { print $2 }' "$tmp/lj.info")
perf record -q -F "$hz" -g --call-graph dwarf,16384 -o "$tmp/perf.data" -- bash -c "$work" \
	2> "$tmp/perf.err" || { cat "$tmp/perf.err"; echo "perf record failed"; exit 1; }
printf "captures: ljsnap %d MB (%s samples lost), perf %d MB\n" \
	$(( $(stat -c %s "$tmp/lj.ljsnap") >> 20 )) "${lost:-?}" $(( $(stat -c %s "$tmp/perf.data") >> 20 ))

read -r lw lc <<< "$(timed "$tmp/lj.folded" "$LJSNAP" report -f folded "${ropts[@]}" "$tmp/lj.ljsnap")"
ls=$(awk '{ s += $NF } END { print s + 0 }' "$tmp/lj.folded")
lf=$(awk '{ n = split($0, f, ";"); s += $NF; fr += $NF * (n - 1) } END { printf "%.1f", s ? fr / s : 0 }' \
	"$tmp/lj.folded")
read -r uw uc <<< "$(timed "$tmp/lua.folded" "$LJSNAP" report -f folded --lua-only "${ropts[@]}" "$tmp/lj.ljsnap")"
# perf script prints each sample as a header line, then one line per frame
# (starting with a tab), then a blank line
read -r pw pc <<< "$(timed "$tmp/perf.txt" perf script -i "$tmp/perf.data")"
ps=$(awk 'BEGIN { RS = "" } END { print NR }' "$tmp/perf.txt")
pf=$(grep -c "^$(printf '\t')" "$tmp/perf.txt" || true)

row "ljsnap report -f folded" "$ls" "$lw" "$lc"
row "ljsnap report -f folded --lua-only" "$ls" "$uw" "$uc"
row "perf script" "$ps" "$pw" "$pc"
awk -v a="$ls" -v aw="$lw" -v b="$ps" -v bw="$pw" -v pf="$pf" -v lf="$lf" 'BEGIN {
	ra = aw > 0 ? a / aw : 0; rb = bw > 0 ? b / bw : 0
	pb = b ? pf / b : 0
	printf "frames per sample: ljsnap %s (native + Lua + kernel, root excluded), perf script %.1f\n", lf, pb
	printf "frames per second: ljsnap %.0f, perf script %.0f\n", ra * lf, rb * pb
	printf "ratio (samples/s): ljsnap report / perf script = %.2f\n", (rb > 0 ? ra / rb : 0) }'
grep '^ljsnap report: note: native stacks' "$tmp/err" 2>/dev/null || true
# Peak memory of each (GNU time's maximum resident set size).
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f %M -o "$tmp/rss.lj" "$LJSNAP" report -f folded "${ropts[@]}" "$tmp/lj.ljsnap" \
		> /dev/null 2>&1 || true
	/usr/bin/time -f %M -o "$tmp/rss.perf" perf script -i "$tmp/perf.data" > /dev/null 2>&1 || true
	printf "peak RSS: ljsnap report %s MB on a %s MB capture, perf script %s MB\n" \
		"$(( $(tail -1 "$tmp/rss.lj") / 1024 ))" "$(( $(stat -c %s "$tmp/lj.ljsnap") >> 20 ))" \
		"$(( $(tail -1 "$tmp/rss.perf") / 1024 ))"
fi
"$LJSNAP" report -f text "$tmp/lj.ljsnap" 2>/dev/null | grep -E 'native stacks|unwound to the main chunk' | sed 's/^ */ljsnap: /' || true

# An older build on the same capture, side by side (LJSNAP_BASELINE).
if [ -n "${LJSNAP_BASELINE:-}" ]; then
	[ -x "$LJSNAP_BASELINE" ] || { echo "LJSNAP_BASELINE=$LJSNAP_BASELINE is not executable"; exit 1; }
	# A baseline older than the capture's format reads the same records
	# written in the newest format it knows (tests/golden/rewrite).
	old_cap=$tmp/lj.ljsnap
	if ! "$LJSNAP_BASELINE" info "$old_cap" > /dev/null 2>&1; then
		rw=$(dirname "$LJSNAP")/tests/golden/rewrite
		for v in 2 1; do
			[ -x "$rw" ] && "$rw" --format $v "$tmp/lj.ljsnap" "$tmp/old.ljsnap" > /dev/null 2>&1 &&
				"$LJSNAP_BASELINE" info "$tmp/old.ljsnap" > /dev/null 2>&1 &&
				{ old_cap=$tmp/old.ljsnap; echo "baseline: reads the capture rewritten as format $v"; break; }
		done
	fi
	: > "$tmp/new.t"; : > "$tmp/old.t"
	for _ in 1 2 3; do
		timed "$tmp/new.folded" "$LJSNAP" report -f folded "${ropts[@]}" "$tmp/lj.ljsnap" >> "$tmp/new.t"
		timed "$tmp/old.folded" "$LJSNAP_BASELINE" report -f folded "${bopts[@]}" "$old_cap" \
			>> "$tmp/old.t"
	done
	med() { sort -n -k"$2" "$1" | awk -v k="$2" 'NR == 2 { print $k }'; }
	nw=$(med "$tmp/new.t" 1); nc=$(med "$tmp/new.t" 2); ow=$(med "$tmp/old.t" 1); oc=$(med "$tmp/old.t" 2)
	row "ljsnap report (this build, median)" "$ls" "$nw" "$nc"
	row "ljsnap report (baseline, median)" "$ls" "$ow" "$oc"
	awk -v nw="$nw" -v ow="$ow" -v nc="$nc" -v oc="$oc" 'BEGIN {
		printf "ratio this build / baseline: wall %.3f, CPU %.3f\n", (ow > 0 ? nw / ow : 0), (oc > 0 ? nc / oc : 0) }'
	if cmp -s "$tmp/new.folded" "$tmp/old.folded"; then
		echo "folded outputs: identical"
	else
		echo "folded outputs: differ ($(diff "$tmp/old.folded" "$tmp/new.folded" | grep -c '^[<>]') lines)"
	fi
fi
