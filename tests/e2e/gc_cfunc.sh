#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: GC steps inside a lua_CFunction keep the function's one name and place:
# [GC] goes above its entry frame (docs/architecture.md, the pipeline's
# stitching), never between two copies of it, and the stacks of samples in
# and out of GC share the function's frame.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
luajit -e 'require "yaml"' 2>/dev/null || skip "lua-yaml is not installed (Debian package lua-yaml)"

"$LJSNAP" record -q -F 499 -o "$TMPD/gc.ljsnap" -- luajit -joff "$top_srcdir/tests/lua/gc_cfunc.lua" 3 \
	> /dev/null 2> "$TMPD/record.err" || { cat "$TMPD/record.err" >&2; fail "ljsnap record failed"; }
"$LJSNAP" report -f folded "$TMPD/gc.ljsnap" > "$TMPD/mixed" 2> /dev/null || fail "report failed"
# Samples under scan(): the frame right below (callee of) scan, in GC or not.
awk '{ c = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";");
	for (i = 1; i < n; i++) if (f[i] ~ /^scan /) {
		gc = 0; for (j = i + 1; j <= n; j++) if (f[j] == "[GC]") gc = 1;
		if (gc) { g += c; if (f[i + 1] == "[GC]") top += c;
			for (j = 2; j <= n; j++) if (f[j] == "[GC]" && f[j - 1] == f[j + 1]) dup += c }
		else { ng += c; below[f[i + 1]] += c }
		if (gc) gbelow[f[i + 1]] += c
	} }
	END { printf "gc %d\nnogc %d\ngc_at_scan %d\ndup %d\n", g, ng, top, dup;
		for (k in gbelow) if (!(k in below)) miss += gbelow[k];
		printf "gc_unshared %d\n", miss }' "$TMPD/mixed" > "$TMPD/check"
sed 's/^/# /' "$TMPD/check"
assert_ge "$(value gc "$TMPD/check")" 20 "too few samples in [GC] under scan()"
assert_ge "$(value nogc "$TMPD/check")" 100 "too few samples out of GC under scan()"
[ "$(value dup "$TMPD/check")" = 0 ] || fail "a C function on both sides of [GC]"
[ "$(value gc_at_scan "$TMPD/check")" = 0 ] || fail "[GC] between scan() and the C function"
assert_ge "$(pct "$(( $(value gc "$TMPD/check") - $(value gc_unshared "$TMPD/check") ))" \
	"$(value gc "$TMPD/check")")" 95 "GC samples below scan() in a frame no other sample has"
exit 0
