# SPDX-License-Identifier: GPL-2.0-or-later
# bench/lib.sh -- sourced by the benchmarks that run servers and recorders:
# a scratch directory ($tmp), kernel.bpf_stats_enabled on for the run and
# put back after, and the processes whose pids the script keeps in M (a
# server's master), R (a recorder) and W (a load generator) killed and
# reaped on every exit.  LJSNAP_BENCH_KEEP=DIR keeps the captures
# (*.ljsnap) in DIR.
tmp=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
M="" R="" W=""
cleanup() {
	for p in $W $R $M; do kill "$p" 2>/dev/null || true; done
	for p in $W $R $M; do wait "$p" 2>/dev/null || true; done
	sysctl -q kernel.bpf_stats_enabled="$old_stats"
	if [ -n "${LJSNAP_BENCH_KEEP:-}" ]; then
		mkdir -p "$LJSNAP_BENCH_KEEP" && cp "$tmp"/*.ljsnap "$LJSNAP_BENCH_KEEP"/ 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
sysctl -q kernel.bpf_stats_enabled=1
