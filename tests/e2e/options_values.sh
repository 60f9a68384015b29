#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: absurd numeric option values of record, report and doctor are
# refused with exit status 2 and one line naming the option and the range,
# before anything is started or written: a value that does not fit is never
# truncated into one that does (-F 4294967395 used to record at 99 Hz,
# --ringbuf-mb 4096 wrapped to 0).  The edges of every range are accepted.
. "$(dirname "$0")/lib.sh"
need_bpf
gold=$top_srcdir/tests/golden/luajit-jon.ljsnap.gz
gzip -dc "$gold" > "$TMPD/g.ljsnap" || fail "cannot decompress $gold"

# refused WANT ARGS...: exit 2, one stderr line containing WANT, no capture written
refused() {
	want=$1; shift
	rm -f "$TMPD/out.ljsnap"
	"$LJSNAP" "$@" > "$TMPD/o" 2> "$TMPD/e"
	rc=$?
	[ "$rc" = 2 ] || { cat "$TMPD/e" >&2; fail "ljsnap $*: exit $rc, want 2"; }
	[ "$(wc -l < "$TMPD/e")" = 1 ] || { cat "$TMPD/e" >&2; fail "ljsnap $*: not one line on stderr"; }
	grep -qF -- "$want" "$TMPD/e" || { cat "$TMPD/e" >&2; fail "ljsnap $*: the error does not say '$want'"; }
	[ ! -e "$TMPD/out.ljsnap" ] || fail "ljsnap $*: a capture was written"
}
R="record -q -o $TMPD/out.ljsnap"
for v in 4294967395 18446744073709551615 18446744073709551616 0 -5 +5 " 5" 99x "" 100001 0x186a1; do
	refused "-F wants 1..100000" $R -F "$v" -- true
done
for v in 4096 2048 3 0 -1 4294967297 1k; do
	refused "--ringbuf-mb wants a power of two, 1..1024" $R --ringbuf-mb "$v" -- true
done
for v in 99999999999999999999 1M 65537 0 7 -8 17179869184k; do
	refused "--stack-bytes wants 8..65536" $R --stack-bytes "$v" -- true
done
refused "--lua-stack-bytes wants 8..131072" $R --lua-stack-bytes 131073 -- true
for v in -1 0 nan inf 1e999 31536001 5s; do
	refused "-d wants seconds" $R -d "$v" -- true
done
refused "-p wants pids 1..4194304" $R -p 0
refused "-p wants pids 1..4194304" $R -p 4194305
refused "-p wants pids 1..4194304" $R -p 1,-2
for v in 0 100001 18446744073709551617 -1; do
	refused "--top wants 1..100000" report --top "$v" "$TMPD/g.ljsnap"
done
for v in -1 4294967296 1x; do
	refused "--pid wants a number, 0..4294967295" report --pid "$v" "$TMPD/g.ljsnap"
	refused "--tid wants a number, 0..4294967295" report --tid "$v" "$TMPD/g.ljsnap"
done
refused "PID wants 1..4194304" doctor 0
refused "PID wants 1..4194304" doctor 4294967297
refused "SECONDS wants more than 0 and at most 600" doctor 1 0
refused "SECONDS wants more than 0 and at most 600" doctor 1 nan

# The edges are accepted.
"$LJSNAP" report --top 100000 --pid 4294967295 -f text "$TMPD/g.ljsnap" > "$TMPD/t" 2>&1 ||
	{ cat "$TMPD/t" >&2; fail "report --top 100000 --pid 4294967295 refused"; }
"$LJSNAP" record -q -F 1 -d 0.3 --stack-bytes 8 --lua-stack-bytes 128k --ringbuf-mb 1 \
	-o "$TMPD/edge.ljsnap" -- sleep 0.5 > "$TMPD/r" 2>&1 || { cat "$TMPD/r" >&2; fail "record at the edges failed"; }
grep -q '^options:    1 Hz, stack 8 bytes, Lua stack 131072 bytes' "$("$LJSNAP" info "$TMPD/edge.ljsnap" > "$TMPD/i"; echo "$TMPD/i")" ||
	{ cat "$TMPD/i" >&2; fail "record did not keep the edge values"; }
exit 0
