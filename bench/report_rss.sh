#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/report_rss.sh -- peak memory of `ljsnap report` on a long capture of
# a real program: Debian's luacheck over /usr/share/lua/5.1, run again and
# again on every CPU for SECONDS, recorded at HZ, then reported in each
# format with /usr/bin/time (its maximum resident set size).  The capture
# holds hundreds of thousands of MEMORY records (every GC cycle flips the
# mark bytes of the prototypes the walks read, so each is a new version) and
# many short-lived processes; report keeps only what later samples can use
# (daemon/report_mem.h).
#
# usage: sudo bench/report_rss.sh [SECONDS] [HZ] [FORMATS]
#        (default 60 s at 4999 Hz, "folded text"; about 4.5 MB of capture
#        per second on 2 CPUs, so 230 s make about 1 GB)
#        LJSNAP_BASELINE=/path/to/an/older/ljsnap ... also reports with that
#        build, and says whether the folded outputs are identical
#        LJSNAP_BENCH_KEEP=DIR keeps the capture in DIR
# Not part of `make check`: a benchmark, not a test.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
LJSNAP=${LJSNAP:-$top/ljsnap}
[ -x "$LJSNAP" ] || LJSNAP=$top/build-tests/ljsnap
[ -x "$LJSNAP" ] || { echo "ljsnap not built (set LJSNAP=/path/to/ljsnap)"; exit 1; }
seconds=${1:-60}
hz=${2:-4999}
formats=${3:-folded text}
[ "$(id -u)" = 0 ] || { echo "run as root (BPF)"; exit 1; }
[ -x /usr/bin/luacheck ] || { echo "luacheck not found (Debian package lua-check)"; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time not found (Debian package time)"; exit 1; }
ncpu=$(nproc)
tmp=${LJSNAP_BENCH_KEEP:-$(mktemp -d)}
[ -n "${LJSNAP_BENCH_KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
lc="luajit /usr/bin/luacheck /usr/share/lua/5.1 --no-cache -qq > /dev/null"
work="end=\$((\$(date +%s) + $seconds)); for i in \$(seq $ncpu); do"
work="$work (while [ \$(date +%s) -lt \$end ]; do $lc; done) & done; wait"

echo "workload: $ncpu x Debian luacheck, again and again for $seconds s, at $hz Hz"
"$LJSNAP" record -q -F "$hz" --ringbuf-mb 256 -o "$tmp/cap.ljsnap" -- bash -c "$work" ||
	{ echo "ljsnap record failed"; exit 1; }
"$LJSNAP" info "$tmp/cap.ljsnap" > "$tmp/info"
printf "capture: %d MB; %s\n" $(( $(stat -c %s "$tmp/cap.ljsnap") >> 20 )) \
	"$(grep '^records:' "$tmp/info" | sed 's/; unknown.*//')"
# rss BIN FMT OUT: "peak-MB wall-s" of one report
rss() {
	/usr/bin/time -f '%M %e' -o "$tmp/t" "$1" report -f "$2" -o "$3" "$tmp/cap.ljsnap" \
		> /dev/null 2> "$tmp/err" || { cat "$tmp/err"; echo "report failed"; exit 1; }
	awk '{ printf "%d MB peak RSS, %.1f s", $1 / 1024, $2 }' "$tmp/t"
}
for f in $formats; do
	echo "ljsnap report -f $f: $(rss "$LJSNAP" "$f" "$tmp/new.$f")"
	if [ -n "${LJSNAP_BASELINE:-}" ]; then
		echo "  baseline -f $f: $(rss "$LJSNAP_BASELINE" "$f" "$tmp/old.$f")"
		[ "$f" != folded ] || { cmp -s "$tmp/new.$f" "$tmp/old.$f" &&
			echo "  folded outputs: identical" || echo "  folded outputs: differ"; }
	fi
done
