#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/record.sh -- capture cost of `ljsnap record`, side by side with
# `perf record -g --call-graph dwarf` at the same rate and stack size, in one
# run, on two workloads:
#   luajit  one luajit running tests/lua/fixed_work.lua (a fixed amount of
#           JIT-compiled work), started by the tool (`-- luajit ...`);
#   nginx   nginx with OpenResty's Lua module and BENCH_WORKERS workers
#           (default 32), each given BENCH_TRACES live JIT traces (default
#           2500, bench/nginx_traces.lua) before it serves, under
#           `wrk -t2 -c8` for BENCH_SECS per round; recorded with
#           `ljsnap record -p MASTER` / `perf record -p WORKER,...`.
#
# usage: sudo bench/record.sh [ROUNDS] [HZ]   (from a built tree; root needed)
#   ROUNDS alternating rounds of each kind (none, ljsnap, perf; default 5),
#   HZ the rate (default 999).  Environment: BENCH_PARTS ("luajit nginx"),
#   BENCH_WORK_ROUNDS (fixed_work.lua's argument, default 2000),
#   BENCH_WORKERS, BENCH_TRACES, BENCH_SECS (default 8), LJSNAP,
#   LJSNAP_VARIANTS_DIR (the cache of tests/variants/prepare.sh, for nginx),
#   BENCH_BPF_TIMING=1 (ljsnap records with --bpf-timing and the summary
#   adds where the BPF time goes; the clock reads add to the BPF figure).
#
# The four figures, per captured sample, each tool's median over its rounds:
#   BPF     run time of every BPF program ljsnap loaded (`ljsnap info`
#           bpf_run_ns, kernel.bpf_stats_enabled=1) / samples written;
#   bytes   capture file size / samples (perf: `perf report --stats`);
#   CPU     the recorder's own user+sys (ljsnap: its recorder_cpu_ns, from
#           getrusage; perf: its user+sys, the shell's children times, less
#           the target's for the luajit part) / samples; for ljsnap also
#           "loop", its recorder_loop_cpu_ns (the sampling loop alone, without
#           loading BPF, the first inspections and the kernel symbols) / samples;
#   slow    the target's CPU slowdown: luajit, its user+sys over the median
#           unprofiled run; nginx, the workers' user+sys per request over the
#           median unprofiled round's.
# perf's figures are with its default user stack size, --call-graph dwarf
# (8192 bytes); ljsnap records with --stack-bytes 8192 to match.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
LJSNAP=${LJSNAP:-$top/ljsnap}
[ -x "$LJSNAP" ] || LJSNAP=$top/build/ljsnap
[ -x "$LJSNAP" ] || LJSNAP=$top/build-tests/ljsnap
[ -x "$LJSNAP" ] || { echo "ljsnap not built (set LJSNAP=/path/to/ljsnap)"; exit 1; }
rounds=${1:-5}
hz=${2:-999}
parts=${BENCH_PARTS:-luajit nginx}
wrounds=${BENCH_WORK_ROUNDS:-2000}
workers=${BENCH_WORKERS:-32}
ntraces=${BENCH_TRACES:-2500}
secs=${BENCH_SECS:-8}
bt=; [ "${BENCH_BPF_TIMING:-0}" = 1 ] && bt=--bpf-timing
stack=8192
[ "$(id -u)" = 0 ] || { echo "run as root (BPF and perf events)"; exit 1; }
for p in perf luajit; do command -v $p >/dev/null || { echo "$p not found"; exit 1; }; done
. "$here/lib.sh"	# $tmp, bpf_stats on, M/R/W ended on exit
clk=$(getconf CLK_TCK)

# kids FILE: the children user+sys seconds in a `times` output
kids() { awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%.3f", s }' "$1"; }
# med FILE COLUMN: the median of a column
med() { sort -g -k"$2" "$1" | awk -v k="$2" '{ v[NR] = $k } END { if (!NR) { print 0; exit }
	printf "%.6g\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# ljinfo CAP KEY: a statistic of a capture
ljinfo() { "$LJSNAP" info "$1" | awk -v k="$2" '$1 == k { print $2; exit }'; }
# perf_samples DATA: samples in a perf.data
perf_samples() { perf report -i "$1" --stats 2>/dev/null | awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }'; }
# lj_fig CAP OUTFILE SLOW: append "bpf_us bytes cpu_us slow samples lost skipped loop_us
# head_us ustack_us luajit_us g_us kernel_pct" of an ljsnap capture (the last five: --bpf-timing)
lj_fig() {
	"$LJSNAP" info "$1" > "$1.info"
	awk -v size="$(stat -c %s "$1")" -v slow="$3" '
		$1 == "samples_written" { s = $2 } $1 == "samples_lost" { l = $2 }
		$1 == "bpf_run_ns" { b = $2 } $1 == "recorder_cpu_ns" { c = $2 }
		$1 == "walk_skipped_lag" { k = $2 } $1 == "recorder_loop_cpu_ns" { lc = $2 }
		$1 == "bpf_head_ns" { th = $2 } $1 == "bpf_ustack_ns" { tu = $2 } $1 == "bpf_luajit_ns" { tl = $2 }
		$1 == "bpf_luajit_g_ns" { tg = $2 } $1 == "bpf_kernel_samples" { ks = $2 }
		END { printf "%.3f %.0f %.1f %.4f %d %d %d %.1f %.3f %.3f %.3f %.3f %.1f\n", s ? b / s / 1e3 : 0, s ? size / s : 0,
			s ? c / s / 1e3 : 0, slow, s, l, k, s ? lc / s / 1e3 : 0, s ? th / s / 1e3 : 0,
			s ? tu / s / 1e3 : 0, s ? tl / s / 1e3 : 0, s ? tg / s / 1e3 : 0, s ? ks * 100 / s : 0 }' "$1.info" >> "$2"
}
# summary NAME: the side-by-side lines of a part
summary() {
	local n=$1
	printf "%s at %d Hz, median of %d rounds:\n" "$n" "$hz" "$rounds"
	printf "  %-14s %9s %10s %16s %9s %8s\n" "" "BPF us" "bytes" "recorder CPU us" "slowdown" "samples"
	printf "  %-14s %9.2f %10.0f %16.1f %8.3fx %8.0f   (loop alone %.1f us; lost %s, walks skipped %s: worst round)\n" \
		"ljsnap record" "$(med "$tmp/$n.lj" 1)" "$(med "$tmp/$n.lj" 2)" "$(med "$tmp/$n.lj" 3)" \
		"$(med "$tmp/$n.lj" 4)" "$(med "$tmp/$n.lj" 5)" "$(med "$tmp/$n.lj" 8)" \
		"$(sort -g -k6 "$tmp/$n.lj" | tail -1 | cut -d' ' -f6)" \
		"$(sort -g -k7 "$tmp/$n.lj" | tail -1 | cut -d' ' -f7)"
	printf "  %-14s %9s %10.0f %16.1f %8.3fx %8.0f\n" "perf dwarf" "-" "$(med "$tmp/$n.perf" 2)" \
		"$(med "$tmp/$n.perf" 3)" "$(med "$tmp/$n.perf" 4)" "$(med "$tmp/$n.perf" 5)"
	[ -z "$bt" ] || printf "  BPF us per sample, by part (--bpf-timing, medians): head and kernel stack %.2f (%.0f%% of the samples in kernel mode), user stack %.2f, LuaJIT %.2f (of it finding g %.2f); the rest is other processes' samples and the ring-buffer output\n" \
		"$(med "$tmp/$n.lj" 9)" "$(med "$tmp/$n.lj" 13)" "$(med "$tmp/$n.lj" 10)" "$(med "$tmp/$n.lj" 11)" "$(med "$tmp/$n.lj" 12)"
}

# -- luajit -------------------------------------------------------------------
work="luajit $top/tests/lua/fixed_work.lua $wrounds"
# run_lj PREFIX TAG: run the workload under PREFIX; TAG.tcpu gets the
# target's user+sys, TAG.total the whole command's (PREFIX and children)
run_lj() {
	( TIMEFORMAT='%U %S'; time $1 bash -c "TIMEFORMAT='%U %S'; time $work >/dev/null" \
		2> "$2.target" ) 2> "$2.outer" > "$2.log"
	tail -1 "$2.target" | awk '{ printf "%.3f", $1 + $2 }' > "$2.tcpu"
	tail -1 "$2.outer" | awk '{ printf "%.3f", $1 + $2 }' > "$2.total"
}
part_luajit() {
	local i t b
	echo "luajit: $work; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	: > "$tmp/none"; : > "$tmp/luajit.lj"; : > "$tmp/luajit.perf"
	run_lj "" "$tmp/warm"
	for i in $(seq "$rounds"); do
		run_lj "" "$tmp/n$i"; cat "$tmp/n$i.tcpu" >> "$tmp/none"; echo >> "$tmp/none"
		run_lj "$LJSNAP record -q $bt -F $hz --stack-bytes $stack -o $tmp/lj$i.ljsnap --" "$tmp/l$i"
		run_lj "perf record -q -F $hz -g --call-graph dwarf,$stack -o $tmp/p$i.data --" "$tmp/p$i"
		printf "  round %d: target CPU s none %s, ljsnap %s, perf %s\n" "$i" "$(cat "$tmp/n$i.tcpu")" \
			"$(cat "$tmp/l$i.tcpu")" "$(cat "$tmp/p$i.tcpu")"
	done
	b=$(med "$tmp/none" 1)
	for i in $(seq "$rounds"); do
		lj_fig "$tmp/lj$i.ljsnap" "$tmp/luajit.lj" "$(awk -v a="$(cat "$tmp/l$i.tcpu")" -v b="$b" 'BEGIN { print a / b }')"
		t=$(perf_samples "$tmp/p$i.data")
		awk -v size="$(stat -c %s "$tmp/p$i.data")" -v s="${t:-0}" -v tot="$(cat "$tmp/p$i.total")" \
		    -v tc="$(cat "$tmp/p$i.tcpu")" -v b="$b" 'BEGIN {
			printf "- %.0f %.1f %.4f %d\n", s ? size / s : 0, s ? (tot - tc) * 1e6 / s : 0, tc / b, s }' >> "$tmp/luajit.perf"
	done
	summary luajit
}

# -- nginx --------------------------------------------------------------------
part_nginx() {
	local OR ORLIB P PORT try i c0 c1 n pids
	for p in nginx wrk taskset pgrep; do command -v $p >/dev/null || { echo "nginx: $p not found"; return 1; }; done
	OR=$(sh "$top/tests/variants/prepare.sh" or-deb) || { echo "nginx: cannot prepare the variant or-deb"; return 1; }
	ORLIB=$OR/root/usr/lib/x86_64-linux-gnu
	ncpu=$(nproc)
	ngx_cpus=0-$(( ncpu > 1 ? ncpu - 2 : 0 )) wrk_cpus=$(( ncpu - 1 ))
	P=$tmp/ngx
	mkdir -p "$P/logs" "$P/tmp"
	for try in 1 2 3 4 5; do
		PORT=$(( 20000 + ($$ * 7 + try * 7919) % 30000 ))
		sed -e "s|@ORROOT@|$OR/root|g" -e "s|@PREFIX@|$P|g" -e "s|@PORT@|$PORT|g" \
		    -e "s|@TESTDIR@|$top/tests/nginx|g" -e "s|^worker_processes .*|worker_processes $workers;|" \
		    -e "s|^\( *lua_package_path \"\)|\1$top/bench/?.lua;|" \
		    -e "s|^\( *server {\)|  init_worker_by_lua_block { require(\"nginx_traces\").make($ntraces) }\n\1|" \
		    "$top/tests/nginx/nginx.conf.in" > "$P/nginx.conf"
		sed -i "s|^\( *location = /frames\)|    location = /traces { content_by_lua_block { ngx.say(require(\"nginx_traces\").count()) } }\n\1|" "$P/nginx.conf"
		LD_LIBRARY_PATH=$ORLIB taskset -c "$ngx_cpus" nginx -p "$P" -c "$P/nginx.conf" > "$P/stdout" 2>&1 &
		M=$!
		for _ in $(seq 600); do
			kill -0 "$M" 2>/dev/null || break
			[ "$(pgrep -c -P "$M")" = "$workers" ] && [ -n "$(http /traces)" ] && break 2
			sleep 0.1
		done
		kill "$M" 2>/dev/null || true; wait "$M" 2>/dev/null || true; M=""
	done
	[ -n "$M" ] || { cat "$P/stdout" "$P/logs/error.log"; echo "nginx did not start"; return 1; }
	sleep 2	# every worker through its init_worker
	pids=$(pgrep -d, -P "$M")
	echo "nginx: $workers workers on CPUs $ngx_cpus, $(http /traces) traces in the worker that answered (/traces), wrk -t2 -c8 on CPU $wrk_cpus, $secs s rounds; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	: > "$tmp/ngx.none"; : > "$tmp/nginx.lj"; : > "$tmp/nginx.perf"
	run_wrk "$tmp/warm" 3 "$M"
	for i in $(seq "$rounds"); do
		run_wrk "$tmp/wn$i" "$secs" "$M"; cat "$tmp/wn$i.fig" >> "$tmp/ngx.none"
		# ljsnap
		"$LJSNAP" record $bt -p "$M" -F "$hz" --stack-bytes $stack -d $(( secs + 60 )) -o "$tmp/nlj$i.ljsnap" \
			> "$tmp/nlj$i.out" 2> "$tmp/nlj$i.err" &
		R=$!
		for _ in $(seq 200); do grep -qs '^ljsnap: recording' "$tmp/nlj$i.err" && break; sleep 0.1; done
		run_wrk "$tmp/wl$i" "$secs" "$M"
		kill -INT "$R"; times > "$tmp/t0"; wait "$R" || { cat "$tmp/nlj$i.err"; return 1; }; times > "$tmp/t1"; R=""
		# perf
		perf record -q -F "$hz" -g --call-graph dwarf,$stack -p "$pids" -o "$tmp/np$i.data" \
			> "$tmp/np$i.out" 2>&1 &
		R=$!
		sleep 1
		run_wrk "$tmp/wp$i" "$secs" "$M"
		kill -INT "$R"; times > "$tmp/t0"; wait "$R" || true; times > "$tmp/t1"; R=""
		echo "$(kids "$tmp/t0") $(kids "$tmp/t1")" > "$tmp/np$i.kids"
		printf "  round %d: req/s none %s, ljsnap %s, perf %s\n" "$i" "$(cut -d' ' -f1 "$tmp/wn$i.fig")" \
			"$(cut -d' ' -f1 "$tmp/wl$i.fig")" "$(cut -d' ' -f1 "$tmp/wp$i.fig")"
	done
	b=$(med "$tmp/ngx.none" 2)
	for i in $(seq "$rounds"); do
		lj_fig "$tmp/nlj$i.ljsnap" "$tmp/nginx.lj" "$(awk -v a="$(cut -d' ' -f2 "$tmp/wl$i.fig")" -v b="$b" 'BEGIN { print a / b }')"
		n=$(perf_samples "$tmp/np$i.data")
		read -r c0 c1 < "$tmp/np$i.kids"
		awk -v size="$(stat -c %s "$tmp/np$i.data")" -v s="${n:-0}" -v c="$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" \
		    -v a="$(cut -d' ' -f2 "$tmp/wp$i.fig")" -v b="$b" 'BEGIN {
			printf "- %.0f %.1f %.4f %d\n", s ? size / s : 0, s ? c * 1e6 / s : 0, a / b, s }' >> "$tmp/nginx.perf"
	done
	summary nginx
	kill "$M"; wait "$M" 2>/dev/null || true; M=""
}
# http PATH: body of GET http://127.0.0.1:$PORT/PATH
http() {
	timeout 10 bash -c 'exec 3<>/dev/tcp/127.0.0.1/$0 && printf "GET $1 HTTP/1.0\r\nHost: x\r\n\r\n" >&3 &&
		sed "1,/^\r$/d" <&3' "$PORT" "$1" 2>/dev/null
}
# ngx_cpu MASTER: user+sys seconds of the master's workers
ngx_cpu() {
	local p
	for p in $(pgrep -P "$1"); do cat "/proc/$p/stat"; done |
		awk -v t="$clk" '{ sub(/^.*\) /, ""); s += $12 + $13 } END { printf "%.2f", s / t }'
}
# run_wrk OUT SECONDS MASTER: one wrk run; OUT.fig gets "requests/s us_per_request"
# (the workers' user+sys per request)
run_wrk() {
	local a b
	a=$(ngx_cpu "$3")
	taskset -c "$wrk_cpus" timeout $(( $2 + 30 )) wrk -t2 -c8 -d"$2"s "http://127.0.0.1:$PORT/" > "$1" 2>&1 &
	W=$!
	wait "$W" || { cat "$1"; echo "wrk failed"; W=""; return 1; }
	W=""
	b=$(ngx_cpu "$3")
	awk -v a="$a" -v b="$b" '/^Requests\/sec:/ { rps = $2 } / requests in / { n = $1 }
		END { printf "%s %.2f\n", rps, n ? (b - a) * 1e6 / n : 0 }' "$1" > "$1.fig"
}

for part in $parts; do
	case $part in
	luajit) part_luajit ;;
	nginx) part_nginx ;;
	*) echo "unknown part $part"; exit 1 ;;
	esac
done
echo "total time: ${SECONDS} s"
