#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: recording two CPU-bound luajit processes at 4999 Hz (2 CPUs' worth
# of samples) keeps up, and what it saves is still enough for report:
#  1. no sample lost (STATS samples_lost 0), every LuaJIT sample walked
#     live or counted as not walked (walked + walk_skipped_lag = the LuaJIT
#     samples), and at most 1% not walked, at the rate asked for
#     (freq_final_hz: a rate the recorder held lower would lose nothing
#     trivially; --max-cpu-percent 50 keeps the cost bound out of it);
#  2. the walks' memory is mostly validated in batches (harvest_prefetched
#     above harvest_live_reads: bpf/ljsnap.bpf.c does not wake the recorder
#     per sample, formats/capture/harvest.c prefetches);
#  3. report, from the file alone: >= 95% of the stacks reach _start
#     natively and hold the Lua chain main chunk -> top, and the stacks in
#     leaf hold main chunk -> top -> mid -> leaf (top's own C calls,
#     tostring, table.concat and the table stores, take a share that
#     depends on the machine: 3-7%).
# Shares and presence only: no timings, no absolute counts.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo 0)
hz=4999
[ "$max" -ge "$hz" ] || hz=$max
[ "$hz" -ge 1000 ] || skip "kernel.perf_event_max_sample_rate is $max"
W=$top_srcdir/tests/lua/fixed_work.lua
"$LJSNAP" record -F "$hz" --max-cpu-percent 50 -o "$TMPD/fast.ljsnap" -- sh -c "luajit '$W' 400 & luajit '$W' 400; wait" \
	> "$TMPD/rec.out" 2> "$TMPD/rec.err" || { cat "$TMPD/rec.err" >&2; fail "ljsnap record failed"; }
"$LJSNAP" info "$TMPD/fast.ljsnap" > "$TMPD/info" || fail "ljsnap info failed"
samples=$(value samples_written "$TMPD/info")
lost=$(value samples_lost "$TMPD/info")
walked=$(value walked "$TMPD/info")
skipped=$(value walk_skipped_lag "$TMPD/info")
pf=$(value harvest_prefetched "$TMPD/info")
live=$(value harvest_live_reads "$TMPD/info")
final=$(value freq_final_hz "$TMPD/info")
note "at $hz Hz (final $final Hz): $samples samples, $lost lost, $walked walked, $skipped not walked; ranges validated in batches $pf, read one by one $live"
assert_ge "$samples" 1000 "too few samples"
[ "$final" = "$hz" ] || { cat "$TMPD/rec.err" >&2; fail "the rate ended at $final Hz, not $hz"; }
[ "$lost" = 0 ] || fail "$lost samples lost"
assert_ge "$(( walked + skipped ))" "$(( samples * 95 / 100 ))" "LuaJIT samples neither walked nor counted"
assert_ge "$(( samples / 100 ))" "$skipped" "more than 1% of the samples not walked"
assert_ge "${pf:-0}" "${live:-1}" "memory not validated in batches"
"$LJSNAP" report -f folded -o "$TMPD/fast.folded" "$TMPD/fast.ljsnap" 2> "$TMPD/rep.err" ||
	{ cat "$TMPD/rep.err" >&2; fail "ljsnap report failed"; }
awk '{ n = $NF; tot += n }
     /^luajit;_start;/ { start += n }
     /;main [^;]*fixed_work.lua;top / { top += n }
     /;leaf / { leaf += n }
     /;main [^;]*fixed_work.lua;top [^;]*;mid [^;]*;leaf / { chain += n }
     END { print "total", tot + 0; print "start", start + 0; print "top", top + 0
	   print "leaf", leaf + 0; print "chain", chain + 0 }' \
	"$TMPD/fast.folded" > "$TMPD/check"
sed 's/^/# /' "$TMPD/check"
total=$(value total "$TMPD/check")
assert_ge "$total" 1000 "too few stacks in the report"
assert_ge "$(pct "$(value start "$TMPD/check")" "$total")" 95 "stacks that reach _start < 95%"
assert_ge "$(pct "$(value top "$TMPD/check")" "$total")" 95 "main -> top in < 95% of the stacks"
leaf=$(value leaf "$TMPD/check")
assert_ge "$leaf" "$(( total / 2 ))" "leaf in less than half of the stacks"
assert_ge "$(pct "$(value chain "$TMPD/check")" "$leaf")" 99 "main -> top -> mid -> leaf in < 99% of the stacks in leaf"
exit 0
