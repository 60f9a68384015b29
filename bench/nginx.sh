#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/nginx.sh -- does `ljsnap record` harm its target?  nginx with
# OpenResty's Lua module under wrk, unrecorded and recorded by
# `ljsnap record -p MASTER -F HZ`, in alternating rounds of one run.
#
# usage: sudo bench/nginx.sh [ROUND_SECONDS] [ROUNDS] [HZ]
#            (from a built tree; root needed; default 8 s, 4 rounds of each,
#             99 Hz: about 2 minutes in all)
#   environment: BENCH_WORKERS=N   nginx workers (default 4)
#                BENCH_PATH=/...   the request (default /, see below)
#                BENCH_PIN=0       do not pin nginx and wrk to CPUs
#                BENCH_REC_CPU=C   pin the recorder to CPU C (default: not
#                                  pinned, the scheduler puts it anywhere)
#                LJSNAP_VARIANTS_DIR  the cache of tests/variants/prepare.sh
#
# Setup (that of tests/e2e/nginx_workers.sh): Debian's nginx with the Lua
# module and OpenResty's luajit2 from Debian packages, unpacked by
# tests/variants/prepare.sh (variant or-deb), tests/nginx/nginx.conf.in
# (BENCH_WORKERS workers, 127.0.0.1 only, no keepalive: every request is a
# new connection), handler tests/nginx/ljsnap_work.lua: / runs about 50,000
# iterations of a JIT-compiled Lua loop four calls deep per request; /re
# 200 ngx.re.find calls (Lua calling C, into PCRE).  The load is
# `wrk -t2 -c8 -d ROUND_SECONDS`.
#
# CPUs: on a machine with N CPUs, nginx (master and workers) runs on CPUs
# 0..N-2 and wrk on CPU N-1 (taskset), so that wrk and nginx do not trade
# CPU time from round to round; the recorder is not pinned unless
# BENCH_REC_CPU says so (BENCH_REC_CPU=N-1: on wrk's CPU, away from
# nginx's; BENCH_REC_CPU=0: on nginx's).  Caveat: on a 2-CPU machine nginx
# gets one CPU, and the recorder's own CPU time (walk + harvest) competes
# with wrk or nginx, whichever it lands next to; other load on the machine
# shows up as noise, which the alternation spreads over both kinds of round.
#
# Rounds: one warm-up round (not counted, JIT warm-up), then unrecorded,
# recorded, unrecorded, recorded, ... ROUNDS of each.  A recorded round
# starts `ljsnap record -p MASTER -F HZ` (bounded by -d), waits until it
# records, runs wrk, then stops it with SIGINT.
# Figures, per round: requests/s and requests (wrk), non-2xx/3xx responses
# and socket errors (connect, read, write, timeout); for a recorded round
# also the samples in its capture (samples_lost), the recorder's CPU time
# (user+sys, /proc/PID/stat) during the wrk run and in all (with its start
# and its finish, from the shell's children times), the BPF program's time
# (`ljsnap info` bpf_run_ns / bpf_run_cnt, kernel.bpf_stats_enabled=1 while
# the bench runs) and the recorder's walk + harvest time (walk_ns); for
# every round a CPU line: the nginx workers' CPU seconds (and per request:
# what the BPF program costs inside the workers shows there), wrk's, the
# rest of the machine's (busy time in /proc/stat less those three:
# softirq, and whatever else runs on the machine), its idle time, and the
# wall time of the round.
# Summary: the median requests/s of each kind, the ratio recorded /
# unrecorded, the failed requests (non-2xx + socket errors) of all rounds,
# whether the target kept >= 95% with no failed request, then the median
# nginx CPU per request of each kind and the median CPU of the rest of the
# machine (when the latter differs between the kinds, the requests/s ratio
# measures the machine's other load, not the recorder).  Not part of
# `make check`: a benchmark, not a test.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
LJSNAP=${LJSNAP:-$top/ljsnap}
[ -x "$LJSNAP" ] || LJSNAP=$top/build/ljsnap
[ -x "$LJSNAP" ] || LJSNAP=$top/build-tests/ljsnap
[ -x "$LJSNAP" ] || { echo "ljsnap not built (set LJSNAP=/path/to/ljsnap)"; exit 1; }
secs=${1:-8}
rounds=${2:-4}
hz=${3:-99}
workers=${BENCH_WORKERS:-4}
path=${BENCH_PATH:-/}
pin=${BENCH_PIN:-1}
rec_cpu=${BENCH_REC_CPU:-}
[ "$(id -u)" = 0 ] || { echo "run as root (BPF and perf events)"; exit 1; }
for p in nginx wrk taskset pgrep; do
	command -v "$p" >/dev/null || { echo "$p not found"; exit 1; }
done
case "$secs$rounds$hz$workers" in *[!0-9]*) echo "usage: $0 [ROUND_SECONDS] [ROUNDS] [HZ]"; exit 1 ;; esac
[ "$rounds" -ge 1 ] && [ "$secs" -ge 1 ] || { echo "ROUND_SECONDS and ROUNDS must be >= 1"; exit 1; }
OR=$(sh "$top/tests/variants/prepare.sh" or-deb) || { echo "cannot prepare the variant or-deb"; exit 1; }
ORLIB=$OR/root/usr/lib/x86_64-linux-gnu

. "$here/lib.sh"	# $tmp, bpf_stats on, M/R/W ended on exit

ncpu=$(nproc)
ngx_cpus="" wrk_cpus=""
if [ "$pin" = 1 ] && [ "$ncpu" -ge 2 ]; then
	ngx_cpus=0-$(( ncpu - 2 ))
	wrk_cpus=$(( ncpu - 1 ))
fi
# on CPUS: the command prefix that runs a command on CPUS (taskset, which
# execs it: the pid stays that of the command), none when CPUS is empty
on() { [ -z "$1" ] || echo "taskset -c $1"; }

# start_nginx PORT: start the master in the background; 0 once its workers answer
P=$tmp/ngx
mkdir -p "$P/logs" "$P/tmp"
start_nginx() {
	sed -e "s|@ORROOT@|$OR/root|g" -e "s|@PREFIX@|$P|g" -e "s|@PORT@|$1|g" \
		-e "s|@TESTDIR@|$top/tests/nginx|g" -e "s|^worker_processes .*|worker_processes $workers;|" \
		"$top/tests/nginx/nginx.conf.in" > "$P/nginx.conf"
	LD_LIBRARY_PATH=$ORLIB $(on "$ngx_cpus") nginx -p "$P" -c "$P/nginx.conf" > "$P/stdout" 2>&1 &
	M=$!
	for _ in $(seq 50); do
		kill -0 "$M" 2>/dev/null || return 1
		[ "$(pgrep -c -P "$M")" = "$workers" ] && http "$path" | grep -q . && return 0
		sleep 0.1
	done
	return 1
}
# http PATH: body of GET http://127.0.0.1:$PORT/PATH (bash /dev/tcp)
http() {
	timeout 10 bash -c 'exec 3<>/dev/tcp/127.0.0.1/$0 && printf "GET $1 HTTP/1.0\r\nHost: x\r\n\r\n" >&3 &&
		sed "1,/^\r$/d" <&3' "$PORT" "$1" 2>/dev/null
}
PORT=
for try in 1 2 3 4 5; do
	PORT=$(( 20000 + ($$ * 7 + try * 7919) % 30000 ))
	start_nginx "$PORT" && break
	kill "$M" 2>/dev/null || true; wait "$M" 2>/dev/null || true
	M="" PORT=
done
[ -n "$PORT" ] || { cat "$P/stdout" "$P/logs/error.log"; echo "nginx did not start"; exit 1; }
URL=http://127.0.0.1:$PORT$path

# cpu_of PID: user+sys seconds of a running process (/proc/PID/stat)
clk=$(getconf CLK_TCK)
cpu_of() { awk -v t="$clk" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / t }' "/proc/$1/stat"; }
# ngx_cpu: user+sys seconds of all of the master's workers
ngx_cpu() {
	local p s=0
	for p in $(pgrep -P "$M"); do s="$s + $(cpu_of "$p")"; done
	awk "BEGIN { printf \"%.2f\", $s }"
}
# kids FILE: the children user+sys seconds in a `times` output
kids() { awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%.2f", s }' "$1"; }
# run_wrk OUT SECONDS: one bounded wrk run on wrk's CPU; OUT.cpu gets
# "nginx_workers_cpu wrk_cpu busy steal idle wall" seconds over the run
# (the workers' user+sys from /proc/PID/stat, wrk's from the shell's
# children times, the machine's busy, stolen and idle time from /proc/stat,
# the wall time from the first reading to the last)
run_wrk() {
	local a=$(ngx_cpu) b e0=$EPOCHREALTIME
	head -1 /proc/stat > "$1.s0"
	$(on "$wrk_cpus") timeout $(( $2 + 30 )) wrk -t2 -c8 -d"$2"s "$URL" > "$1" 2>&1 &
	W=$!
	times > "$1.t0"
	wait "$W" || { cat "$1"; echo "wrk failed"; exit 1; }
	times > "$1.t1"
	W=""
	b=$(ngx_cpu)
	head -1 /proc/stat > "$1.s1"
	awk -v a="$a" -v b="$b" -v e0="$e0" -v e1="$EPOCHREALTIME" -v w0="$(kids "$1.t0")" -v w1="$(kids "$1.t1")" -v t="$clk" '
		FNR == 1 { for (i = 2; i <= 9; i++) if (i != 5 && i != 6) x[FILENAME ~ /s0$/] += $i; st[FILENAME ~ /s0$/] = $9
			      id[FILENAME ~ /s0$/] = $5 + $6 }
		END { printf "%.2f %.2f %.2f %.2f %.2f %.2f\n", b - a, w1 - w0, (x[0] - x[1]) / t, (st[0] - st[1]) / t, (id[0] - id[1]) / t, e1 - e0 }' \
		"$1.s0" "$1.s1" > "$1.cpu"
}
# cpu_fig OUT SECONDS REC KIND: print the CPU line of a round (REC: the
# recorder's CPU seconds during wrk, 0 when unrecorded) and add
# "requests/s us_per_request rest" to the file of its KIND (off, on)
cpu_fig() {
	awk -v s="$2" -v r="$3" -v n="$(wrk_fig "$1" | cut -d' ' -f2)" -v rps="$(wrk_fig "$1" | cut -d' ' -f1)" \
	    -v kf="$tmp/$4" '{
		printf "%s %.2f %.2f\n", rps, n ? $1 * 1e6 / n : 0, $3 - $1 - $2 - r >> kf
		printf "         CPU s: nginx workers %.2f (%.1f us per request), wrk %.2f, rest of the machine %.2f (softirq and other users; steal %.2f), idle %.2f, of %.2f (%.2f s wall x %d CPUs)\n",
			$1, n ? $1 * 1e6 / n : 0, $2, $3 - $1 - $2 - r, $4, $5, $6 * ncpu, $6, ncpu }' ncpu="$ncpu" "$1.cpu"
}
# wrk_fig OUT: "requests/s requests non2xx socket_errors" of a wrk output
wrk_fig() {
	awk '/^Requests\/sec:/ { rps = $2 }
	     / requests in / { n = $1 }
	     /Non-2xx or 3xx responses:/ { bad = $NF }
	     /Socket errors:/ { gsub(/,/, ""); se = $4 + $6 + $8 + $10 }
	     END { printf "%s %d %d %d\n", rps, n, bad, se }' "$1"
}
# info KEY: a statistic of the last capture's `ljsnap info`
info() { awk -v k="$1" '$1 == k { print $2; exit }' "$tmp/info"; }

echo "nginx $(nginx -v 2>&1 | sed 's/^nginx version: //') with OpenResty's luajit2 ($OR), $workers workers on CPUs ${ngx_cpus:-any}; wrk -t2 -c8 on CPU ${wrk_cpus:-any}; recorder on CPU ${rec_cpu:-any}"
echo "setup: $SECONDS s (prepare.sh, nginx start)"
echo "request: GET $path; $rounds rounds of each kind, $secs s each, recorded at $hz Hz; $ncpu CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
run_wrk "$tmp/warm" 2
: > "$tmp/off" ; : > "$tmp/on"
fails=0
for i in $(seq $(( 2 * rounds ))); do
	if [ $(( i % 2 )) = 1 ]; then
		run_wrk "$tmp/wrk$i" "$secs"
		read -r rps n bad se <<< "$(wrk_fig "$tmp/wrk$i")"
		fails=$(( fails + bad + se ))
		printf "round %2d unrecorded %9.1f req/s %7d requests  non-2xx %d  socket errors %d\n" \
			"$i" "$rps" "$n" "$bad" "$se"
		cpu_fig "$tmp/wrk$i" "$secs" 0 off
		continue
	fi
	cap=$tmp/cap$i.ljsnap
	$(on "$rec_cpu") "$LJSNAP" record -p "$M" -F "$hz" -d $(( secs + 60 )) -o "$cap" \
		> "$tmp/rec$i.out" 2> "$tmp/rec$i.err" &
	R=$!
	for _ in $(seq 200); do
		grep -qs '^ljsnap: recording' "$tmp/rec$i.err" && break
		kill -0 "$R" 2>/dev/null || break
		sleep 0.1
	done
	grep -q '^ljsnap: recording' "$tmp/rec$i.err" || { cat "$tmp/rec$i.err"; echo "ljsnap record did not start"; exit 1; }
	c0=$(cpu_of "$R")
	run_wrk "$tmp/wrk$i" "$secs"
	c1=$(cpu_of "$R")
	kill -INT "$R"
	times > "$tmp/t0"
	wait "$R" || { cat "$tmp/rec$i.err"; echo "ljsnap record failed"; exit 1; }
	times > "$tmp/t1"
	R=""
	read -r rps n bad se <<< "$(wrk_fig "$tmp/wrk$i")"
	fails=$(( fails + bad + se ))
	"$LJSNAP" info "$cap" > "$tmp/info"
	awk -v i="$i" -v rps="$rps" -v n="$n" -v bad="$bad" -v se="$se" -v secs="$secs" \
	    -v c0="$c0" -v c1="$c1" -v t0="$(kids "$tmp/t0")" -v t1="$(kids "$tmp/t1")" \
	    -v smp="$(info samples_written)" -v lost="$(info samples_lost)" \
	    -v wall="$(cut -d' ' -f6 "$tmp/wrk$i.cpu")" -v rns="$(info bpf_run_ns)" -v rcnt="$(info bpf_run_cnt)" -v wns="$(info walk_ns)" 'BEGIN {
		printf "round %2d recorded   %9.1f req/s %7d requests  non-2xx %d  socket errors %d\n", i, rps, n, bad, se
		printf "         capture %d samples (%d lost); recorder CPU %.2f s during wrk (%.1f%% of one CPU), %.2f s in all;", smp, lost, c1 - c0, 100 * (c1 - c0) / wall, t1 - t0
		printf " BPF %.0f ns/run x %d runs = %.3f s; walk+harvest %.3f s\n", rcnt ? rns / rcnt : 0, rcnt, rns / 1e9, wns / 1e9 }'
	awk -v sz="$(stat -c %s "$cap")" -v smp="$(info samples_written)" 'BEGIN {
		printf "         file %d bytes, %.0f bytes per sample (everything included)\n", sz, smp ? sz / smp : 0 }'
	cpu_fig "$tmp/wrk$i" "$secs" "$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" on
done

# med FILE COLUMN: the median of a column
med() { sort -g -k"$2" "$1" | awk -v k="$2" '{ v[NR] = $k } END { printf "%.2f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
awk -v a="$(med "$tmp/off" 1)" -v b="$(med "$tmp/on" 1)" -v f="$fails" -v hz="$hz" \
    -v ua="$(med "$tmp/off" 2)" -v ub="$(med "$tmp/on" 2)" -v ra="$(med "$tmp/off" 3)" -v rb="$(med "$tmp/on" 3)" 'BEGIN {
	r = a > 0 ? b / a : 0
	printf "median requests/s: unrecorded %.1f, recorded %.1f; ratio recorded/unrecorded %.3f\n", a, b, r
	printf "failed requests (non-2xx + socket errors, all rounds): %d\n", f
	printf "target kept >= 95%% at %d Hz with no failed request: %s\n", hz, (r >= 0.95 && f == 0) ? "yes" : "NO"
	printf "median nginx worker CPU per request: unrecorded %.1f us, recorded %.1f us (ratio %.3f); median CPU s of the rest of the machine per round: %.2f, %.2f\n", ua, ub, (ua > 0 ? ub / ua : 0), ra, rb }'
echo "total time: ${SECONDS} s"
