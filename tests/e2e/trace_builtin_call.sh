#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: the Lua frames around a builtin's library call a trace makes, with
# real BPF (issue 10 item 3).  tests/lua/trace_builtin_call.lua: outer()
# calls find(), which calls string.find, and cat(), which calls
# table.concat; only find reaches lj_str_find and only cat reaches
# lj_buf_puttab, by the script's structure.
# * -joff: the interpreter's stacks confirm that structure: >= 90% of the
#   samples inside each C function are under its caller (cat;table.concat).
# * JIT on: both are inlined into outer's trace, where the builtins become
#   IR CALLL/CALLN calls that no snapshot marks, and the snapshots before
#   and after a call can hold other inlined frames (find's, when the call
#   is cat's).  >= 95% of the samples inside each C function must have
#   their own caller inlined right above them (cat_[i]) or
#   [unknown: call_frames] (snap_call_split), and at most 2% the other
#   function.  Before the fix, 97% of the samples inside lj_buf_puttab
#   showed find_[i].
# * The startup: the script enters its trace at once, where r14 holds no
#   DISPATCH in the C functions, so BPF found no g until the recorder saw
#   one; the recorder now finds it among a sample's saved words.  At most
#   4% of the samples may lack the LuaJIT state (10% before).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/trace_lib.sh"
need_bpf
need_prog luajit luajit
W=$top_srcdir/tests/lua/trace_builtin_call.lua
k='(;[^;]*_\[k\])*$'
c="trace_builtin_call\\.lua"

record_folded joff luajit -joff "$W" 2
record_folded jon luajit "$W" 4
for fc in find:lj_str_find:cat cat:lj_buf_puttab:find; do
	f=${fc%%:*}; rest=${fc#*:}; cf=${rest%%:*}; other=${rest#*:}
	lf=$(line_of "$W" "^local function $f\\(")
	[ -n "$lf" ] || fail "cannot find $f in $W"
	# the C function and what it calls (memchr, memmove, ...)
	inside=";$cf(;[^;]*)*$k"
	in=$(stack_count "$TMPD/joff.folded" "$inside")
	good=$(stack_count "$TMPD/joff.folded" ";$f [^;]*$c:$lf;[^;]*;([^;]*;)?$cf(;[^;]*)*$k")
	note "-joff: $in samples inside $cf, $good under $f"
	assert_ge "$in" 20 "-joff: too few samples inside $cf"
	assert_ge "$(pct "$good" "$in")" 90 "-joff: $cf not under $f (the script's structure)"

	in=$(stack_count "$TMPD/jon.folded" "$inside")
	own=$(stack_count "$TMPD/jon.folded" ";$f [^;]*$c:${lf}_\\[i\\];$cf(;[^;]*)*$k")
	unsure=$(stack_count "$TMPD/jon.folded" ";\\[unknown: call_frames\\];$cf(;[^;]*)*$k")
	lo=$(line_of "$W" "^local function $other\\(")
	wrong=$(stack_count "$TMPD/jon.folded" ";$other [^;]*$c:${lo}_\\[i\\];$cf(;[^;]*)*$k")
	note "JIT on: $in samples inside $cf: $own under ${f}_[i], $unsure under [unknown: call_frames], $wrong under ${other}_[i]"
	assert_ge "$in" 20 "JIT on: too few samples inside $cf"
	assert_ge "$(pct "$((own + unsure))" "$in")" 95 "JIT on: $cf not under ${f}_[i] or the unknown marker"
	[ "$(pct "$wrong" "$in")" -le 2 ] || fail "JIT on: $cf attributed to $other in $wrong of $in samples"
done
n=$(total "$TMPD/jon.folded")
nog=$(stack_count "$TMPD/jon.folded" 'unknown: no_g')
note "JIT on: $nog of $n samples without the LuaJIT state"
[ "$(pct "$nog" "$n")" -le 4 ] || fail "JIT on: $nog of $n samples found no global_State"
"$LJSNAP" report -f text "$TMPD/jon.ljsnap" 2> /dev/null | grep -q 'snap_call_split' ||
	fail "the text report does not count snap_call_split"
exit 0
