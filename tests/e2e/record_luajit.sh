#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: record a CPU-bound luajit script with real BPF and check the capture
# by decoding raw bytes independently of ljsnap's walker.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
CAPCHECK=$top_builddir/tests/e2e/capcheck
[ -x "$CAPCHECK" ] || fail "capcheck not built"

# Debian's luajit is upstream 2.1 GC64: g->vmstate is at +184 (offsetof in lj_obj.h's
# global_State for that build; tests/variants/ljoffsets.c prints such offsets).
VMOFF=184

run_case() {	# name, program, flags
	name=$1; prog=$2; shift 2
	out=$TMPD/$name.out
	"$LJSNAP" record -q -F 199 -o "$TMPD/$name.ljsnap" -- \
		$prog "$@" "$top_srcdir/tests/lua/cpu_bound.lua" 3 > "$out" 2> "$TMPD/$name.err" ||
		{ cat "$TMPD/$name.err" >&2; fail "$name: ljsnap record failed"; }
	[ "$(stat -c %a "$TMPD/$name.ljsnap")" = 600 ] || fail "$name: capture file mode is not 0600"
	pid=$("$LJSNAP" info "$TMPD/$name.ljsnap" | awk '/^  pid [0-9]+ \(ppid/ && $0 ~ pat { print $2; exit }' pat="$(basename $prog)")
	[ -n "$pid" ] || { "$LJSNAP" info "$TMPD/$name.ljsnap" >&2; fail "$name: no luajit process in the capture"; }
	# Every sample the BPF program emitted is written or named (ring-buffer
	# losses are never emitted): docs/capture-format.md, STATS.
	"$LJSNAP" info "$TMPD/$name.ljsnap" > "$TMPD/$name.info"
	em=$(value emitted "$TMPD/$name.info")
	acc=0
	for k in samples_written samples_bad samples_write_failed samples_undrained; do
		v=$(value $k "$TMPD/$name.info")
		[ -n "$v" ] || fail "$name: no $k in STATS"
		acc=$((acc + v))
	done
	[ -n "$em" ] && [ "$em" -eq "$acc" ] || fail "$name: emitted $em != written + named drops $acc"
	fns=$(awk '$1 == "FN" { printf "%s=%s ", $2, $3 }' "$out")
	"$CAPCHECK" "$TMPD/$name.ljsnap" "$pid" $VMOFF 1 $fns > "$TMPD/$name.check" || fail "$name: capcheck failed"
	cat "$TMPD/$name.check" | sed "s/^/# $name: /"
	n=$(value samples "$TMPD/$name.check")
	assert_ge "$n" 300 "$name: too few samples of pid $pid"
	assert_ge "$(pct "$(value luajit_part "$TMPD/$name.check")" "$n")" 95 "$name: LuaJIT part present in < 95% of samples"
	assert_ge "$(pct "$(value vmstate_plausible "$TMPD/$name.check")" "$n")" 95 "$name: implausible vmstate values"
}

# Interpreter only: every frame is materialized, so the hot functions'
# objects must be in the Lua stack windows.
run_case joff luajit -joff
c=$TMPD/joff.check; n=$(value samples "$c")
assert_ge "$(pct "$(value fn_main "$c")" "$n")" 95 "joff: main chunk function not in the Lua stack window"
assert_ge "$(pct "$(value fn_leaf "$c")" "$n")" 80 "joff: leaf() not in the Lua stack window"
hab=$(( $(value fn_hot_a "$c") + $(value fn_hot_b "$c") ))
assert_ge "$(pct "$hab" "$n")" 80 "joff: hot_a/hot_b not in the Lua stack window"
assert_ge "$(pct "$(value vmstate_interp "$c")" "$n")" 80 "joff: vmstate is not INTERP in most samples"

# JIT on: most samples run in traces (vmstate = trace number).
run_case jon luajit
c=$TMPD/jon.check; n=$(value samples "$c")
assert_ge "$(pct "$(value vmstate_trace "$c")" "$n")" 50 "jon: too few samples in JIT traces"
assert_ge "$(pct "$(value fn_main "$c")" "$n")" 95 "jon: main chunk function not in the Lua stack window"

# The same through libluajit-5.1.so in a program of our own.
EMBED=$top_builddir/tests/e2e/ljembed
[ -x "$EMBED" ] || fail "ljembed not built (libluajit-5.1-dev missing?)"
run_case embed "$EMBED"
c=$TMPD/embed.check; n=$(value samples "$c")
assert_ge "$(pct "$(value fn_main "$c")" "$n")" 95 "embed: main chunk function not in the Lua stack window"
grep -q "libluajit-5.1.so" "$TMPD/embed.err" || "$LJSNAP" info "$TMPD/embed.ljsnap" | grep -q "LuaJIT: .*libluajit-5.1.so" ||
	fail "embed: LuaJIT not attributed to libluajit-5.1.so"
exit 0
