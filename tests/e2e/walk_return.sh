#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: a sample taken while the interpreter returns from a function (BC_RET1,
# a fast function's results) or sets up a call (BC_ITERC) has a Lua stack.
# In those windows the frame at BASE (rdx) has no function in its slot
# (vm_x64.dasc stores the first result there) and L->base is stale; the walk
# takes the caller at PC (rbx), the return point (unwind/ljwalk.c,
# ret__caller).  Before, 6.8% of this workload's samples were
# "[unknown: no_base]" with no Lua frame at all (luacheck with the JIT off:
# 1.3-1.5%).
# Ground truth, the known call structure of tests/lua/ret_walk.lua:
#   main chunk -> loop -> one | ipairs_aux | ipairs
# Asserted: at most 0.5% of the samples with an unknown Lua frame; >= 95% of
# the stacks rooted at the main chunk; one, ipairs_aux and ipairs only ever
# right under loop, and loop only right under the main chunk.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit

"$LJSNAP" record -q -F 999 -o "$TMPD/ret.ljsnap" -- luajit -joff "$top_srcdir/tests/lua/ret_walk.lua" 3 \
	> /dev/null 2> "$TMPD/record.err" || { cat "$TMPD/record.err" >&2; fail "ljsnap record failed"; }
"$LJSNAP" report -f folded --lua-only "$TMPD/ret.ljsnap" > "$TMPD/lua" 2> /dev/null || fail "report failed"
awk '{ c = $NF; tot += c; sub(/ [0-9]+$/, ""); n = split($0, f, ";")
	if ($0 ~ /\[unknown/) unk += c
	for (i = 1; i <= n; i++) if (f[i] ~ /^main [^ ]*ret_walk.lua$/) { main += c; break }
	for (i = 2; i <= n; i++) {
		if (f[i] ~ /^(one|ipairs_aux|ipairs)( |$)/ && f[i - 1] !~ /^loop /) bad += c
		if (f[i] ~ /^loop / && f[i - 1] !~ /^main /) bad += c
		if (f[i] ~ /^loop /) loop += c
	} }
	END { printf "total %d\nunknown %d\nmain %d\nloop %d\nmisplaced %d\n", tot, unk, main, loop, bad }' \
	"$TMPD/lua" > "$TMPD/check"
sed 's/^/# /' "$TMPD/check"
total=$(value total "$TMPD/check")
assert_ge "$total" 500 "too few samples"
assert_ge "$(( total / 200 ))" "$(value unknown "$TMPD/check")" "more than 0.5% of the samples with an unknown Lua frame"
assert_ge "$(pct "$(value main "$TMPD/check")" "$total")" 95 "stacks rooted at the main chunk < 95%"
assert_ge "$(pct "$(value loop "$TMPD/check")" "$total")" 50 "loop in less than half of the stacks"
[ "$(value misplaced "$TMPD/check")" = 0 ] || fail "a function away from its caller in the call structure"
exit 0
