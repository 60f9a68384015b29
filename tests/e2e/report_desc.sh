#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: a description of a process written after its samples that finds no
# LuaJIT in it (the recorder looking again at an nginx worker shutting down
# after a reload) takes nothing away from the samples: an image's LuaJIT
# does not change without an exec (daemon/report_proc.c).  Ground truth:
# the report of the same capture without that description; the two folded
# outputs must be identical, Lua frames included.  Before the fix, every
# sample of the process lost its Lua frames (tests/e2e/nginx_workers.sh saw
# a worker with 443 of 443 Lua samples as "[JIT code]").
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
CD=$top_builddir/tests/e2e/capdesc
[ -x "$CD" ] || fail "tests/e2e/capdesc not built"

"$LJSNAP" record -q -F 499 -o "$TMPD/orig.ljsnap" -- luajit "$top_srcdir/tests/lua/example.lua" 2 \
	> /dev/null 2> "$TMPD/rec.err" || { cat "$TMPD/rec.err" >&2; fail "ljsnap record failed"; }
pid=$("$LJSNAP" info "$TMPD/orig.ljsnap" | awk '/^  pid [0-9]+ \(ppid/ && / luajit / { print $2; exit }')
[ -n "$pid" ] || fail "no luajit process in the capture"
"$CD" "$TMPD/orig.ljsnap" "$TMPD/desc.ljsnap" "$pid" || fail "capdesc failed"
[ "$("$LJSNAP" info "$TMPD/desc.ljsnap" | grep -c "^  pid $pid (ppid")" -gt \
  "$("$LJSNAP" info "$TMPD/orig.ljsnap" | grep -c "^  pid $pid (ppid")" ] ||
	fail "the extra description is not in the copy"
for c in orig desc; do
	"$LJSNAP" report -f folded --pid "$pid" "$TMPD/$c.ljsnap" > "$TMPD/$c.folded" 2> /dev/null ||
		fail "report of $c failed"
done
lua=$(awk '/ [^ ;]*example\.lua/ { s += $NF } END { print s + 0 }' "$TMPD/orig.folded")
note "Lua samples: $lua of $(awk '{ s += $NF } END { print s + 0 }' "$TMPD/orig.folded")"
assert_ge "$lua" 100 "too few samples with Lua frames"
cmp -s "$TMPD/orig.folded" "$TMPD/desc.folded" || {
	diff "$TMPD/orig.folded" "$TMPD/desc.folded" | head -5 >&2
	fail "the description without LuaJIT changed the report"
}
exit 0
