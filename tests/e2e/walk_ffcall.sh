#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: a sample in C code that a fast function called from the interpreter
# has the Lua stack of the fast function's caller.  ipairs_aux over a table
# with its integer keys in the hash part calls lj_tab_getinth for every
# element (tests/lua/ffcall_walk.lua), after storing the next index over its
# own function slot, with BASE saved in rbp and the caller's PC in rbx
# (vm_x64.dasc, ->ff_ipairs_aux); L->base is stale.  Before, 64% of this
# workload's samples (all of those in lj_tab_getinth) were
# "[unknown: no_base]" with no Lua frame: libdw's x86-64 defaults lose rbx
# in every frame whose CFI does not mention it (unwind/native.c,
# native__rbx_through), and the walk read rbp only as a frame that still
# has its function (unwind/ljwalk_base.c).
# Ground truth, the known call structure of the workload:
#   main chunk -> loop -> ipairs_aux -> lj_tab_getinth
# ipairs_aux has no frame of its own there (its slot holds the index), so
# lj_tab_getinth sits right under loop or ipairs_aux.  Samples taken before
# the recorder configured the process have no Lua frames at all and are
# left out.  Asserted for Debian's luajit (GC64, stripped), a non-GC64
# build and OpenResty's luajit2: at most 0.5% of the samples with an
# unknown frame; lj_tab_getinth the leaf of >= 20% of the samples with Lua
# frames, and there only ever under loop or ipairs_aux; >= 95% of those
# rooted at the main chunk.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/variants/lib.sh"
need_bpf
need_prog luajit luajit

check() {	# NAME LUAJIT...
	n=$1; shift
	"$LJSNAP" record -q -F 999 -o "$TMPD/$n.ljsnap" -- "$@" -joff "$top_srcdir/tests/lua/ffcall_walk.lua" 3 \
		> /dev/null 2> "$TMPD/$n.err" || { cat "$TMPD/$n.err" >&2; fail "$n: ljsnap record failed"; }
	"$LJSNAP" report -f folded "$TMPD/$n.ljsnap" > "$TMPD/$n.folded" 2> /dev/null || fail "$n: report failed"
	awk '{ c = $NF; tot += c; sub(/ [0-9]+$/, ""); n = split($0, f, ";")
		if ($0 ~ /\[unknown/) unk += c
		lua = 0
		for (i = 1; i <= n; i++) if (f[i] ~ / [^ ]*ffcall_walk.lua(:[0-9]+)?$/) lua = 1
		if (lua) { withlua += c; for (i = 1; i <= n; i++) if (f[i] ~ /^main [^ ]*ffcall_walk.lua$/) { main += c; break } }
		if (lua && f[n] ~ /^lj_tab_getinth/ || lua && (n > 1 && f[n - 1] ~ /^lj_tab_getinth/ && f[n] ~ /_\[i\]$/)) {
			k = f[n] ~ /^lj_tab_getinth/ ? n : n - 1
			leaf += c
			if (f[k - 1] !~ /^(loop [^ ]*ffcall_walk.lua:[0-9]+|ipairs_aux)$/) bad += c
		} }
		END { printf "total %d\nunknown %d\nwithlua %d\nmain %d\ngetinth %d\nmisplaced %d\n",
			tot, unk, withlua, main, leaf, bad }' "$TMPD/$n.folded" > "$TMPD/$n.check"
	sed "s/^/# $n /" "$TMPD/$n.check"
	total=$(value total "$TMPD/$n.check")
	assert_ge "$total" 500 "$n: too few samples"
	assert_ge "$(( total / 200 ))" "$(value unknown "$TMPD/$n.check")" \
		"$n: more than 0.5% of the samples with an unknown Lua frame"
	assert_ge "$(pct "$(value getinth "$TMPD/$n.check")" "$(value withlua "$TMPD/$n.check")")" 20 \
		"$n: lj_tab_getinth the leaf of < 20% of the samples with Lua frames"
	assert_ge "$(pct "$(value main "$TMPD/$n.check")" "$(value withlua "$TMPD/$n.check")")" 95 \
		"$n: stacks with Lua frames rooted at the main chunk < 95%"
	[ "$(value misplaced "$TMPD/$n.check")" = 0 ] ||
		{ grep lj_tab_getinth "$TMPD/$n.folded" | grep -v "ffcall_walk.lua:[0-9]*;\(ipairs_aux;\)\?lj_tab_getinth" | head -3 >&2
		  fail "$n: lj_tab_getinth away from loop"; }
}

check debian "$(command -v luajit)"
V=$(variant up-nogc64) || exit 1
check nogc64 "$V/luajit"
V=$(variant or-deb) || exit 1
check luajit2 env LD_LIBRARY_PATH="$V/root/usr/lib/x86_64-linux-gnu" "$V/root/usr/bin/luajit"
exit 0
