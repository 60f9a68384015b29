#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: the Lua frames around an FFI call a trace makes, with real BPF
# (issue 10 item 3).  tests/lua/trace_ffi_call.lua: outer() calls clear()
# and check(), inlined into outer's trace, which call ffi.C.memset and
# ffi.C.memcmp (whose result check compares: the snapshot after that call
# is merged with the comparison's); by the script's structure every sample
# inside memset is outer -> clear -> memset, every one inside memcmp
# outer -> check -> memcmp.  With the JIT on, >= 90% of the samples inside
# each must show outer's trace frame with its caller inlined right above it
# (outer_[j];clear_[i];...memset), >= 90% of outer's samples must have
# clear or check above it in the --lua-only view, and the share of samples
# with clear (check) on the stack in that view must be the share of samples
# inside memset (memcmp) within 5 points.  Before the fix, clear was
# missing in ~100% of the memset samples.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/trace_lib.sh"
need_bpf
need_prog luajit luajit
W=$top_srcdir/tests/lua/trace_ffi_call.lua
lo=$(line_of "$W" '^local function outer')
[ -n "$lo" ] || fail "cannot find outer in $W"

record_folded jon luajit "$W" 3
jon=$TMPD/jon.folded
"$LJSNAP" report -f folded --lua-only -o "$TMPD/jon.lua" "$TMPD/jon.ljsnap" 2> "$TMPD/lua.err" ||
	{ cat "$TMPD/lua.err" >&2; fail "report --lua-only failed"; }

o="outer [^;]*trace_ffi_call\\.lua:${lo}_\\[j\\]"
k='(;[^;]*_\[k\])*$'
n=$(total "$jon")
for fc in clear:memset check:memcmp; do
	f=${fc%%:*}; cf=${fc#*:}
	lf=$(line_of "$W" "^local function $f\\(")
	[ -n "$lf" ] || fail "cannot find $f in $W"
	in=$(stack_count "$jon" ";[^;]*$cf[^;]*$k")
	good=$(stack_count "$jon" "$o;$f [^;]*trace_ffi_call\\.lua:${lf}_\\[i\\];[^;]*$cf[^;]*$k")
	note "JIT on: $n samples, $in inside $cf, $good of them under outer_[j];${f}_[i]"
	assert_ge "$(pct "$in" "$n")" 25 "fewer than a quarter of the samples are inside $cf"
	assert_ge "$(pct "$good" "$in")" 90 "$cf not under outer_[j];${f}_[i] (mixed view)"
	# f's inclusive share (on the stack at all, --lua-only) is the share
	# of the samples inside cf (the native frames, in the same run)
	re="(^|;)$f [^;]*trace_ffi_call\\.lua:${lf}(_\\[i\\])?(;|\$)"
	a=$(pct "$(stack_count "$TMPD/jon.lua" "$re")" "$(total "$TMPD/jon.lua")")
	b=$(pct "$in" "$n")
	note "$f on the stack in $a% of the samples (--lua-only), $cf in $b%"
	d=$((a - b)); [ $d -lt 0 ] && d=$((-d))
	[ $d -le 5 ] || fail "$f's inclusive share is not $cf's within 5 points ($a% vs $b%)"
done

lout=$(stack_count "$TMPD/jon.lua" "$o")
lgood=$(stack_count "$TMPD/jon.lua" "$o;(clear|check) [^;]*_\\[i\\]\$")
note "--lua-only: $lout samples in outer's trace, $lgood with clear_[i] or check_[i] above it"
assert_ge "$(pct "$lgood" "$lout")" 90 "clear/check not inlined above outer_[j] (--lua-only view)"
# Nothing is left uncertain here: the snapshot after each call is known.
unsure=$(stack_count "$jon" 'unknown: call_frames')
assert_ge "$(( 100 - $(pct "$unsure" "$n") ))" 95 "more than 5% of the samples have [unknown: call_frames]"
exit 0
