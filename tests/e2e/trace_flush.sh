#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: no sample attributed to a stale trace.  tests/lua/trace_flush.lua runs
# ~100 short phases; each loads a fresh pair runner/F (chunk "phaseNNN"),
# runs runner's loop with F inlined into its trace, then calls jit.flush(),
# so the next phase compiles other functions at the same trace numbers and
# mostly the same GCtrace and machine-code addresses.  runner's frame comes
# from the sampled Lua stack, F's from the trace's snapshot: a stack showing
# runner of one phase with F of another is a sample attributed to a trace
# that was not running then.  There must be none, and most samples must show
# the right pair.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/trace_lib.sh"
need_bpf
need_prog luajit luajit
W=$top_srcdir/tests/lua/trace_flush.lua

"$LJSNAP" record -q -F 999 -o "$TMPD/fl.ljsnap" -- luajit "$W" 3 > "$TMPD/fl.out" 2> "$TMPD/fl.err" ||
	{ cat "$TMPD/fl.err" >&2; fail "ljsnap record failed"; }
"$LJSNAP" report -f folded -o "$TMPD/fl.folded" "$TMPD/fl.ljsnap" 2> "$TMPD/fl.rerr" ||
	{ cat "$TMPD/fl.rerr" >&2; fail "ljsnap report failed"; }
phases=$(awk '$1 == "phases" { print $2 }' "$TMPD/fl.out")
assert_ge "${phases:-0}" 30 "too few flush phases ran"
awk '{
	n = $NF
	if (match($0, /runner phase[0-9]+:10_\[j\];F phase[0-9]+:2_\[i\]/)) {
		s = substr($0, RSTART, RLENGTH); split(s, a, /phase/)
		if (substr(a[2], 1, 3) == substr(a[3], 1, 3)) ok += n; else { bad += n; print > "/dev/stderr" }
	}
	t += n
} END { printf "ok %d\nbad %d\ntotal %d\n", ok, bad, t }' "$TMPD/fl.folded" > "$TMPD/fl.pairs"
ok=$(value ok "$TMPD/fl.pairs"); bad=$(value bad "$TMPD/fl.pairs"); n=$(value total "$TMPD/fl.pairs")
note "$phases phases, $n samples: $ok show runner and its own F inlined, $bad a runner with another phase's F"
[ "$bad" -eq 0 ] || fail "$bad samples attributed to a stale trace (another phase's F)"
if [ "$(pct "$ok" "$n")" -lt 40 ]; then
	# what the samples showed instead, and what record and report said
	awk '{ print $NF "\t" $0 }' "$TMPD/fl.folded" | sort -nr | head -5 | cut -c1-400 >&2
	cat "$TMPD/fl.err" "$TMPD/fl.rerr" >&2
	"$LJSNAP" info "$TMPD/fl.ljsnap" | grep -E 'LuaJIT|layout|walk|lost' >&2
fi
assert_ge "$(pct "$ok" "$n")" 40 "too few samples show runner with its F inlined"
exit 0
