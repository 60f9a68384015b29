#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: garbage in a capture does not crash or hang the reader, the walker
# or the native unwinder.  A real capture of tests/lua/example.lua
# (coroutines, callbacks, GC, JIT) is copied 8 times with 200 frames each
# changed in random bytes and their CRCs recomputed (tests/e2e/capmutate,
# fixed seeds), so that the garbage reaches the decoders: sample registers
# and windows, memory records, process descriptions, trace headers.  The
# mutation works on format 1 frames: the capture is rewritten as format 1
# first (tests/golden/rewrite), and each mutated copy is read both as it is
# and rewritten back as format 2 (the records that still decode).
# `ljsnap report` (folded, text with --by-trace and --lines, --lua-only)
# and `ljsnap info` must exit 0 or 1 with no signal and within 120 s each.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
MUT=$top_builddir/tests/e2e/capmutate
RW=$top_builddir/tests/golden/rewrite
[ -x "$MUT" ] || fail "tests/e2e/capmutate not built"
[ -x "$RW" ] || fail "tests/golden/rewrite not built"
"$LJSNAP" record -q -F 499 -o "$TMPD/orig.ljsnap" -- luajit "$top_srcdir/tests/lua/example.lua" \
	> /dev/null 2> "$TMPD/rec.err" || { cat "$TMPD/rec.err" >&2; fail "ljsnap record failed"; }
"$LJSNAP" report -f folded -o "$TMPD/orig.folded" "$TMPD/orig.ljsnap" 2> "$TMPD/orig.err" ||
	{ rc=$?; tail -5 "$TMPD/orig.err" >&2; cp "$TMPD/orig.ljsnap" /tmp/ljsnap-fuzz-orig.ljsnap 2>/dev/null
	  fail "the unmutated capture does not report (exit $rc; kept as /tmp/ljsnap-fuzz-orig.ljsnap)"; }
"$RW" --format 1 "$TMPD/orig.ljsnap" "$TMPD/orig1.ljsnap" > /dev/null || fail "rewrite as format 1 failed"
runs=0
for seed in 1 2 3 4 5 6 7 8; do
	"$MUT" "$TMPD/orig1.ljsnap" "$TMPD/m.ljsnap" "$seed" 200 || fail "capmutate failed"
	"$RW" --format 2 "$TMPD/m.ljsnap" "$TMPD/m2.ljsnap" > /dev/null 2>&1 || fail "rewrite as format 2 failed"
	for m in m m2; do
	for args in "report -f folded" "report -f text --by-trace --lines" "report -f folded --lua-only" "info"; do
		rc=0
		# shellcheck disable=SC2086
		timeout 120 "$LJSNAP" $args "$TMPD/$m.ljsnap" > /dev/null 2> "$TMPD/err" || rc=$?
		runs=$((runs + 1))
		if [ "$rc" -gt 1 ]; then
			cp "$TMPD/$m.ljsnap" "/tmp/ljsnap-fuzz-seed$seed-$m.ljsnap" 2>/dev/null
			tail -5 "$TMPD/err" >&2
			fail "seed $seed: 'ljsnap $args' on $m exited $rc (kept as /tmp/ljsnap-fuzz-seed$seed-$m.ljsnap)"
		fi
	done
	done
done
note "$runs runs over 16 mutated captures (8 in each format): every one exited 0 or 1"
exit 0
