#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: the sampling rate is bounded by its cost (daemon/record_rate.c).
#  1. -F above kernel.perf_event_max_sample_rate is refused: one line, exit
#     2, no capture.  The sysctl is lowered only in a private mount
#     namespace (a file bound over it), never for the host.
#  2. -F 100000 on a CPU-bound LuaJIT loop: record limits the rate, says so
#     once, and counts it (STATS rate_limited > 0, freq_final_hz < -F).
#  3. The summary's "bytes per sample in the file" is the file's size over
#     its samples (it counted only what had been flushed, once a second).
# Presence and ratios only: no timings, no absolute counts.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
need_prog unshare util-linux
spin='local t = os.clock() while os.clock() - t < 0.5 do end'

# 1. above the kernel's maximum
echo 5000 > "$TMPD/max_rate"
unshare -m sh -c 'mount --bind "$1" /proc/sys/kernel/perf_event_max_sample_rate &&
	exec "$2" record -F 5001 -o "$3" -- true' sh "$TMPD/max_rate" "$LJSNAP" "$TMPD/refused.ljsnap" \
	> "$TMPD/refused.out" 2> "$TMPD/refused.err"
rc=$?
[ "$rc" = 2 ] || { cat "$TMPD/refused.err" >&2; fail "-F above the maximum: exit $rc, want 2"; }
[ "$(wc -l < "$TMPD/refused.err")" = 1 ] || { cat "$TMPD/refused.err" >&2; fail "-F above the maximum: not one line"; }
grep -q 'above kernel.perf_event_max_sample_rate (5000)' "$TMPD/refused.err" ||
	{ cat "$TMPD/refused.err" >&2; fail "-F above the maximum: the line does not name the sysctl"; }
[ ! -e "$TMPD/refused.ljsnap" ] || fail "-F above the maximum: a capture was written"
note "refused: $(cat "$TMPD/refused.err")"

# 2. a rate the cost does not allow (a 2% bound, so that any host limits it)
"$LJSNAP" record -F 100000 --max-cpu-percent 2 -d 20 -o "$TMPD/fast.ljsnap" -- luajit -e "$spin" \
	> "$TMPD/fast.out" 2> "$TMPD/fast.err" || { cat "$TMPD/fast.err" >&2; fail "record -F 100000 failed"; }
"$LJSNAP" info "$TMPD/fast.ljsnap" > "$TMPD/fast.info" || fail "ljsnap info failed"
limited=$(value rate_limited "$TMPD/fast.info")
final=$(value freq_final_hz "$TMPD/fast.info")
note "fast: rate_limited ${limited:-?}, freq_final_hz ${final:-?}"
assert_ge "${limited:-0}" 1 "-F 100000: the rate was not limited"
[ "${final:-100000}" -lt 100000 ] || fail "-F 100000: freq_final_hz is ${final:-missing}"
[ "$(grep -c 'not 100000: ' "$TMPD/fast.err")" = 1 ] ||
	{ cat "$TMPD/fast.err" >&2; fail "-F 100000: record did not say once that it limited the rate"; }
grep -q 'the sampling cost limited the rate' "$TMPD/fast.err" ||
	{ cat "$TMPD/fast.err" >&2; fail "-F 100000: the summary does not say it"; }

# 3. bytes per sample, at the default bound and a rate it allows
"$LJSNAP" record -F 999 -o "$TMPD/slow.ljsnap" -- luajit -e "$spin" \
	> "$TMPD/slow.out" 2> "$TMPD/slow.err" || { cat "$TMPD/slow.err" >&2; fail "record -F 999 failed"; }
"$LJSNAP" info "$TMPD/slow.ljsnap" > "$TMPD/slow.info" || fail "ljsnap info failed"
for c in fast slow; do
	n=$(value samples_written "$TMPD/$c.info")
	size=$(wc -c < "$TMPD/$c.ljsnap")
	said=$(sed -n 's/.*(\([0-9]*\) bytes per sample in the file.*/\1/p' "$TMPD/$c.err")
	assert_ge "${n:-0}" 50 "$c: too few samples to compare"
	want=$(( (size + n / 2) / n ))
	note "$c: $size bytes, $n samples: $want bytes per sample; record said ${said:-nothing}"
	[ -n "$said" ] && [ "$said" -ge $(( want - 1 )) ] && [ "$said" -le $(( want + 1 )) ] ||
		fail "$c: record said ${said:-nothing} bytes per sample, the file has $want"
done
exit 0
