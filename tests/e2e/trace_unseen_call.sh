#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: a builtin called from a Lua function that a trace inlines and that
# no snapshot shows, with real BPF (issue 10 item 3).
# tests/lua/trace_unseen_call.lua: via_cat() loops calling cat(), which
# calls table.concat; direct() loops calling table.concat itself.  By the
# script's structure every sample inside lj_buf_puttab is via_cat -> cat or
# direct.
# * -joff: the interpreter's stacks confirm that structure: >= 90% of the
#   samples inside lj_buf_puttab under via_cat have cat right above.
# * JIT on: cat is inlined into via_cat's trace and the builtin becomes an
#   IR CALLL with no snapshot inside cat: the snapshots around the call have
#   the same frames, as in direct's trace.  Under via_cat_[j], >= 95% of the
#   samples inside lj_buf_puttab must have cat_[i] or
#   [unknown: call_frames] (snap_call_unseen: the trace inlines a Lua
#   function no snapshot has) right above; before, 100% read
#   via_cat_[j];lj_buf_puttab, as if via_cat called table.concat.  Under
#   direct_[j] (whose trace inlines no Lua function) >= 90% must stay right
#   under direct_[j], without the marker.
# JIT on is checked on Debian's luajit (GC64), the up-nogc64 variant and
# OpenResty's luajit2 (tests/variants/prepare.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/trace_lib.sh"
. "$top_srcdir/tests/variants/lib.sh"
need_bpf
need_prog luajit luajit
W=$top_srcdir/tests/lua/trace_unseen_call.lua
k='(;[^;]*_\[k\])*$'
c="trace_unseen_call\\.lua"
lv=$(line_of "$W" "^local function via_cat\\(")
lc=$(line_of "$W" "^local function cat\\(")
ld=$(line_of "$W" "^local function direct\\(")
[ -n "$lv" ] && [ -n "$lc" ] && [ -n "$ld" ] || fail "cannot find the functions in $W"
inside=";lj_buf_puttab(;[^;]*)*$k"

record_folded joff luajit -joff "$W" 2
in=$(stack_count "$TMPD/joff.folded" ";via_cat [^;]*$c:$lv;.*$inside")
good=$(stack_count "$TMPD/joff.folded" ";via_cat [^;]*$c:$lv;cat [^;]*$c:$lc;.*$inside")
note "-joff: $in samples inside lj_buf_puttab under via_cat, $good under cat"
assert_ge "$in" 20 "-joff: too few samples inside lj_buf_puttab under via_cat"
assert_ge "$(pct "$good" "$in")" 90 "-joff: lj_buf_puttab not under cat (the script's structure)"

# jit_on NAME CMD...: record the workload with the JIT on and check it
jit_on() {
	name=$1; shift
	record_folded "$name" "$@" "$W" 4
	grep -q '^DONE' "$TMPD/$name.out" || fail "$name: the workload did not finish"
	v="via_cat [^;]*$c:${lv}_\\[j\\]"
	in=$(stack_count "$TMPD/$name.folded" ";$v(;.*)?$inside")
	own=$(stack_count "$TMPD/$name.folded" ";$v;cat [^;]*$c:${lc}_\\[i\\]$inside")
	unsure=$(stack_count "$TMPD/$name.folded" ";$v;\\[unknown: call_frames\\]$inside")
	bare=$(stack_count "$TMPD/$name.folded" ";$v$inside")
	note "$name: $in samples inside lj_buf_puttab under via_cat_[j]: $own under cat_[i], $unsure under [unknown: call_frames], $bare right under via_cat_[j]"
	assert_ge "$in" 20 "$name: too few samples inside lj_buf_puttab under via_cat_[j]"
	assert_ge "$(pct "$((own + unsure))" "$in")" 95 "$name: lj_buf_puttab not under cat_[i] or the unknown marker"
	d="direct [^;]*$c:${ld}_\\[j\\]"
	in=$(stack_count "$TMPD/$name.folded" ";$d(;.*)?$inside")
	bare=$(stack_count "$TMPD/$name.folded" ";$d$inside")
	note "$name: $in samples inside lj_buf_puttab under direct_[j], $bare right under it"
	assert_ge "$in" 20 "$name: too few samples inside lj_buf_puttab under direct_[j]"
	assert_ge "$(pct "$bare" "$in")" 90 "$name: direct's calls of table.concat were marked or moved"
	"$LJSNAP" report -f text "$TMPD/$name.ljsnap" 2> /dev/null | grep -q 'snap_call_unseen' ||
		fail "$name: the text report does not count snap_call_unseen"
}
jit_on debian luajit
V=$(variant up-nogc64) || exit 1
jit_on nogc64 "$V/luajit"
V=$(variant or-deb) || exit 1
jit_on luajit2 env LD_LIBRARY_PATH="$V/root/usr/lib/x86_64-linux-gnu" "$V/root/usr/bin/luajit"
exit 0
