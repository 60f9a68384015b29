#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: a LuaJIT build no built-in table describes.  tests/variants/
# prepare.sh builds Debian's upstream source with three pointers inserted at
# the start of global_State ("up-unknown"), so every global_State field
# moves by 24 bytes while the interpreter code stays consistent with the
# upstream table: the detected layout is wrong, BPF finds no g with it.
# The recorder must find g from a sample's DISPATCH register, calibrate
# the layout from live memory (lj_detect__calibrate_live), republish it,
# and the workload (tests/lua/build_chain.lua) must then unwind: >= 95% of
# the samples with Lua code on CPU reach the main chunk.  The recalibrated
# offsets are checked against the compiler's (tests/variants/ljoffsets.c
# built against the patched source); `ljsnap doctor` recalibrates the same
# way and its live check passes.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/variants/lib.sh"
need_bpf
V=$(variant up-unknown) || exit 1
LJ=$V/luajit
ground_truth unknown "$V"
gt() { value "$1" "$TMPD/unknown.gt"; }

record_chain unknown 3 "$LJ"
grep -q "layout recalibrated from live memory" "$TMPD/unknown.err" ||
	{ cat "$TMPD/unknown.err" >&2; fail "unknown: the recorder did not recalibrate the layout"; }
check_chain_run unknown
# The capture's (last) layout of the process is the compiler's.
lay=$("$LJSNAP" info "$CAP" | grep '^      layout:' | tail -1)
note "unknown: capture layout: $lay"
for k in disp2g g_size; do
	echo "$lay" | grep -q " $k $(gt $k)[,) ]" || fail "unknown: capture's $k is not $(gt $k): $lay"
done

LIVE=recalibrated doctor_chain unknown upstream GC64 single-number "$LJ"
# Every value the live calibration changed must be the compiler's.
line=$(grep '^  live calibration:' "$TMPD/unknown.doctor")
for k in disp2g g2j g_size g_vmstate g_cur_L g_jit_base g_mainthref g_tmpbuf_L g_strempty g_hookmask; do
	got=$(echo "$line" | sed -n "s/.* $k -*[0-9]*->\(-*[0-9]*\).*/\1/p")
	[ -n "$got" ] || fail "unknown: live calibration did not change $k ($line)"
	[ "$got" = "$(gt $k)" ] || fail "unknown: live calibration set $k to $got, the source says $(gt $k)"
done
note "unknown: every recalibrated global_State offset matches the compiler's offsetof()"
exit 0
