#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/traces.sh -- what a target's number of JIT traces costs `ljsnap
# record`: BPF map memory and BPF time per sample for a target with ~10
# traces next to one with ~10,000 (OpenResty-like limits, maxtrace=12000),
# in one run.  The BPF program copies only the header of the running trace,
# so neither figure should grow with the trace count; the userspace side
# (walk + harvest of each sample's trace snapshots) is printed too.
#
# usage: sudo bench/traces.sh [SECONDS] [HZ]   (from a built tree; root needed)
#
# Figures: the sum of bytes_memlock of the maps the ljsnap_sample program
# uses (bpftool map show, while recording), the program's run_time_ns /
# run_cnt (kernel.bpf_stats_enabled=1; `ljsnap info` bpf_run_ns /
# bpf_run_cnt), bytes per sample in the capture, and walk + harvest time per
# sample (`ljsnap info` walk_ns / walked, harvest_records / harvest_bytes).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
LJSNAP=${LJSNAP:-$top/ljsnap}
[ -x "$LJSNAP" ] || LJSNAP=$top/build-tests/ljsnap
[ -x "$LJSNAP" ] || { echo "ljsnap not built (set LJSNAP=/path/to/ljsnap)"; exit 1; }
seconds=${1:-6}
hz=${2:-999}
work=$top/tests/lua/trace_count.lua
command -v bpftool >/dev/null || { echo "bpftool not found (Debian package bpftool)"; exit 1; }
command -v python3 >/dev/null || { echo "python3 not found"; exit 1; }
command -v luajit >/dev/null || { echo "luajit not found"; exit 1; }
tmp=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
rpid=""
cleanup() {
	[ -n "$rpid" ] && kill "$rpid" 2>/dev/null
	sysctl -q kernel.bpf_stats_enabled="$old_stats"
	rm -rf "$tmp"
}
trap cleanup EXIT
sysctl -q kernel.bpf_stats_enabled=1

# sample_progs: ids of the loaded ljsnap_sample programs, one per line.
sample_progs() {
	bpftool -j prog show | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name", "").startswith("ljsnap_sample"):
        print(p["id"])'
}

# map_bytes BEFORE_FILE: bytes_memlock of every map of the ljsnap_sample
# program loaded since BEFORE_FILE was written (other ljsnap instances on
# the machine are left out), "total name=bytes ...", or "0 ?" if that is
# not exactly one program.
map_bytes() {
	bpftool -j prog show > "$tmp/progs.json"
	bpftool -j map show > "$tmp/maps.json"
	python3 - "$tmp/progs.json" "$tmp/maps.json" "$1" <<'EOF'
import json, sys
progs = json.load(open(sys.argv[1])); maps = json.load(open(sys.argv[2]))
before = set(int(x) for x in open(sys.argv[3]).read().split())
new = [p for p in progs if p.get("name", "").startswith("ljsnap_sample") and p["id"] not in before]
if len(new) != 1:
    print("0 ?(%d new ljsnap_sample programs)" % len(new)); sys.exit(0)
ids = set(new[0].get("map_ids", []))
tot, parts = 0, []
for m in maps:
    if m["id"] in ids:
        b = int(m.get("bytes_memlock", 0)); tot += b
        parts.append("%s=%d" % (m.get("name", "?"), b))
print("%d %s" % (tot, " ".join(sorted(parts))))
EOF
}

# val KEY FILE: a "key value" line of `ljsnap info`
val() { awk -v k="$1" '$1 == k { print $2; exit }' "$2"; }

printf "workload: luajit %s NTRACES %s, ljsnap record -F %s\n" "$work" "$seconds" "$hz"
for n in 10 10000; do
	o=$tmp/t$n
	sample_progs > "$o.before"
	"$LJSNAP" record -F "$hz" -o "$o.ljsnap" -- luajit "$work" "$n" "$seconds" \
		> "$o.out" 2> "$o.err" &
	rpid=$!
	for i in $(seq 1 600); do	# up to 60 s for the traces to compile
		grep -q '^ready' "$o.out" 2>/dev/null && break
		sleep 0.1
	done
	sleep 1
	maps=$(map_bytes "$o.before")
	wait "$rpid" || { cat "$o.err"; echo "ljsnap record failed"; exit 1; }
	rpid=""
	"$LJSNAP" info "$o.ljsnap" > "$o.info"
	ready=$(awk '$1 == "ready" { print $2 }' "$o.out")
	endn=$(awk '$1 == "end" { print $2 }' "$o.out")
	samples=$(val samples_written "$o.info")
	run_ns=$(val bpf_run_ns "$o.info"); run_cnt=$(val bpf_run_cnt "$o.info")
	walk_ns=$(val walk_ns "$o.info"); walked=$(val walked "$o.info")
	hrec=$(val harvest_records "$o.info"); hbytes=$(val harvest_bytes "$o.info")
	size=$(stat -c %s "$o.ljsnap")
	printf "\n%s traces (%s at the end of the run):\n" "$ready" "$endn"
	printf "  BPF maps of ljsnap_sample: %s bytes memlock (%s)\n" "${maps%% *}" "${maps#* }"
	printf "  BPF program: %.0f ns per run over %s runs (all CPUs; runs for other processes\n" \
		"$(awk -v a="$run_ns" -v b="$run_cnt" 'BEGIN { print b ? a / b : 0 }')" "$run_cnt"
	printf "    exit early); %.0f ns of BPF time per sample written; record said: %s\n" \
		"$(awk -v a="$run_ns" -v b="$samples" 'BEGIN { print b ? a / b : 0 }')" \
		"$(grep -o 'BPF program: .*' "$o.err" || echo '-')"
	printf "  samples %s, capture %s bytes (%.0f B/sample)\n" "$samples" "$size" \
		"$(awk -v s="$size" -v n="$samples" 'BEGIN { print n ? s / n : 0 }')"
	printf "  walk + harvest: %.1f us per sample over %s samples; %s memory ranges, %s bytes kept\n" \
		"$(awk -v a="$walk_ns" -v b="$walked" 'BEGIN { print b ? a / b / 1000 : 0 }')" "$walked" \
		"$hrec" "$hbytes"
done
