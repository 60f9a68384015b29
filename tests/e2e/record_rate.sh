#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: the sampling rate is bounded by its cost (daemon/record_rate.c).
#  1. -F above kernel.perf_event_max_sample_rate is refused: one line, exit
#     2, no capture.  The sysctl is lowered only in a private mount
#     namespace (a file bound over it), never for the host.
#  2. -F 100000 on a CPU-bound LuaJIT loop: record limits the rate, says so
#     once, and counts it (STATS rate_limited > 0, freq_final_hz < -F).
#     The loop runs 2 s: the rate doubles from RECORD_FREQ_START every
#     0.1 s, and a cheap BPF program (1.2 us) is still under the 2% bound
#     at 16000 Hz, which it reached 0.4 s in (a 0.5 s loop then ended
#     before anything limited it).
#  3. The summary's "bytes per sample in the file" is the file's size over
#     its samples (it counted only what had been flushed, once a second).
#  4. -F 4999 on a LuaJIT loop that sleeps half of the time: the rate
#     reaches -F (freq_final_hz, no limitation) and the samples are at
#     least half of 4999 per second of the target's CPU time (its own
#     os.clock(), the ground truth).  The events skip the idle task, so a
#     CPU has sampling periods only while it is busy; counted against the
#     wall clock, too few of them "ran", and the rate stayed at 1000 Hz
#     (a fifth of the samples).  The cost bound is raised to 50% so that
#     only that count could hold the rate.
# Presence and ratios only: no timings, no absolute counts.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
need_prog unshare util-linux
spin='local t = os.clock() while os.clock() - t < 0.5 do end'
spin2='local t = os.clock() while os.clock() - t < 2 do end'

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
"$LJSNAP" record -F 100000 --max-cpu-percent 2 -d 20 -o "$TMPD/fast.ljsnap" -- luajit -e "$spin2" \
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

# 4. a target idle half of the time
cat > "$TMPD/half.lua" <<'EOF'
local ffi = require("ffi")
ffi.cdef("int usleep(unsigned int);")
local x = 0
for _ = 1, 50 do
	local t = os.clock()
	while os.clock() - t < 0.02 do for i = 1, 1000 do x = x + i end end
	ffi.C.usleep(20000)
end
io.write(string.format("%.3f\n", os.clock()))
EOF
"$LJSNAP" record -F 4999 --max-cpu-percent 50 -o "$TMPD/half.ljsnap" -- luajit "$TMPD/half.lua" \
	> "$TMPD/half.out" 2> "$TMPD/half.err" || { cat "$TMPD/half.err" >&2; fail "record -F 4999 failed"; }
"$LJSNAP" info "$TMPD/half.ljsnap" > "$TMPD/half.info" || fail "ljsnap info failed"
final=$(value freq_final_hz "$TMPD/half.info")
limited=$(value rate_limited "$TMPD/half.info")
n=$(value samples_written "$TMPD/half.info")
cpu=$(tail -1 "$TMPD/half.out")
note "half idle: freq_final_hz ${final:-?}, rate_limited ${limited:-?}, $n samples for $cpu s of CPU"
[ "${final:-0}" = 4999 ] || { cat "$TMPD/half.err" >&2; fail "half idle: the rate ended at ${final:-?} Hz, not 4999"; }
[ "${limited:-1}" = 0 ] || { cat "$TMPD/half.err" >&2; fail "half idle: the rate was limited"; }
awk -v n="${n:-0}" -v c="${cpu:-0}" 'BEGIN { exit !(c > 0.3 && n >= 0.5 * 4999 * c) }' ||
	fail "half idle: $n samples for $cpu s of CPU at 4999 Hz (fewer than half)"
exit 0
