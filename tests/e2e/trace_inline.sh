#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: attribution inside JIT traces with inlined frames, with real BPF.
# tests/lua/trace_inline.lua runs caller() whose hot loop calls helper_a and
# helper_b, inlined into caller's trace; the functions do the same kind of
# work in the proportions 25 / 50 / 25 %.  Recorded with the JIT on and with
# -joff, the share of samples whose innermost frame is each function must
# agree within 5 points, and with the JIT on the helpers must appear as
# inlined frames ("_[i]") right above caller's trace frame ("_[j]").
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/trace_lib.sh"
need_bpf
need_prog luajit luajit
W=$top_srcdir/tests/lua/trace_inline.lua
lc=$(line_of "$W" '^local function caller')
la=$(line_of "$W" '^local function helper_a')
lb=$(line_of "$W" '^local function helper_b')
[ -n "$lc" ] && [ -n "$la" ] && [ -n "$lb" ] || fail "cannot find the functions in $W"

record_folded jon luajit "$W" 3
record_folded joff luajit -joff "$W" 3
jon=$TMPD/jon.folded; joff=$TMPD/joff.folded
n=$(total "$jon"); note "JIT on: $n samples, -joff: $(total "$joff") samples"
assert_ge "$n" 500 "too few samples with the JIT on"

same_share caller "^caller .*trace_inline\\.lua:$lc\$" "$jon" "$joff"
same_share helper_a "^helper_a .*trace_inline\\.lua:$la\$" "$jon" "$joff"
same_share helper_b "^helper_b .*trace_inline\\.lua:$lb\$" "$jon" "$joff"

# Inlined helpers right above their caller's trace frame.
ca="caller [^;]*trace_inline\\.lua:${lc}_\\[j\\];helper_a [^;]*trace_inline\\.lua:${la}_\\[i\\]\$"
cb="caller [^;]*trace_inline\\.lua:${lc}_\\[j\\];helper_b [^;]*trace_inline\\.lua:${lb}_\\[i\\]\$"
a=$(stack_count "$jon" "$ca"); b=$(stack_count "$jon" "$cb")
note "JIT on: helper_a inlined under caller in $a samples, helper_b in $b"
assert_ge "$(pct "$a" "$n")" 35 "helper_a not shown inlined (_[i]) under caller (_[j])"
assert_ge "$(pct "$b" "$n")" 15 "helper_b not shown inlined (_[i]) under caller (_[j])"
assert_ge "$(pct "$(stack_count "$jon" "caller [^;]*trace_inline\\.lua:${lc}_\\[j\\]")" "$n")" 90 \
	"caller not shown as a trace frame (_[j]) in most samples"
# With -joff nothing is a trace frame.
[ "$(stack_count "$joff" '_\[[ij]\]')" = 0 ] || fail "-joff report has trace frames"

# Grouped by trace: most trace samples are in traces that start inside
# caller() (the last function of the file: from line lc on), and most are
# placed by a snapshot.
"$LJSNAP" report -f text --by-trace "$TMPD/jon.ljsnap" > "$TMPD/jon.txt" 2>&1 ||
	fail "report --by-trace failed"
tsamples=$(awk '/^JIT trace samples:/ { gsub(",", "", $4); print $4 }' "$TMPD/jon.txt")
[ -n "$tsamples" ] || { cat "$TMPD/jon.txt" >&2; fail "no JIT trace section in the text report"; }
incaller=$(awk -v lo="$lc" '$3 ~ /^TRACE_[0-9]+::/ && $3 ~ /trace_inline\.lua:/ {
		n = split($3, p, ":"); if (p[n] + 0 >= lo + 0) s += $1 }
	END { print s + 0 }' "$TMPD/jon.txt")
snap=$(awk '$1 == "snap" || $1 == "snap_call" || $1 == "snap_call_prior" { s += $2 } END { print s + 0 }' "$TMPD/jon.txt")
note "by trace: $tsamples trace samples, $incaller in traces starting in caller(), $snap placed by a snapshot"
# each row names the function its trace started in: the top one is caller's
# loop, known by its name and its line (from the script's own source)
grep -A1 '^top traces' "$TMPD/jon.txt" | tail -1 | grep -q "starts in function caller <$W:$lc>" ||
	{ cat "$TMPD/jon.txt" >&2; fail "--by-trace: the top trace does not say it starts in caller (line $lc)"; }
assert_ge "$(pct "$incaller" "$tsamples")" 80 "traces starting in caller() hold < 80% of the trace samples"
assert_ge "$(pct "$snap" "$tsamples")" 80 "< 80% of the trace samples placed by a snapshot"
exit 0
