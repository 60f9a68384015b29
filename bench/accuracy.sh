#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/accuracy.sh -- ljsnap's stacks on real Lua programs that this project
# did not write, against the ground truths taken in the same run:
#   * an in-process collector on jit.profile (the mechanism behind jit.p):
#     top-10 Lua functions by self and inclusive share;
#   * perf record -a at the same rate: top-10 native leaf functions;
#   * --native-only's order of VM activations: the share of mixed stacks
#     whose native frames sit around other VM activations than in
#     --native-only (misordered; tests/e2e/stitch_order.awk defines it).
# The programs are from Debian's archive (tests/install-deps.sh installs
# them): luacheck (lua-check) on the Lua tree Debian ships; busted
# (lua-busted, with luassert and penlight) on bench/accuracy/pl_spec.lua;
# ldoc (lua-ldoc) on penlight's sources, thirty times in one process.  Each
# runs under Debian's luajit with the JIT on and off.
#
# usage: sudo bench/accuracy.sh [PROGRAM...]   (from a built tree; root)
#        PROGRAM: luacheck busted ldoc (default: all three)
#        LJSNAP=path/to/ljsnap  HZ=997 (sampling rate of both profilers; not
#        999, at which on a 250 Hz kernel ljsnap's and perf -g's kernel leaf
#        shares of one run were up to 6 points apart either way, against 2.8
#        at 997: bench/kernel_share.sh)
# Not part of `make check`: a benchmark, not a test; its figures are shares.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
LJSNAP=${LJSNAP:-$here/../build-tests/ljsnap}
[ -x "$LJSNAP" ] || LJSNAP=$here/../ljsnap
[ -x "$LJSNAP" ] || { echo "accuracy.sh: build ljsnap first (or set LJSNAP)" >&2; exit 1; }
HZ=${HZ:-997}
[ "$(id -u)" = 0 ] || { echo "accuracy.sh: run as root (BPF and perf -a)" >&2; exit 1; }
for p in luajit perf python3; do
	command -v $p > /dev/null || { echo "accuracy.sh: $p is missing (tests/install-deps.sh)" >&2; exit 1; }
done
progs=${*:-luacheck busted ldoc}
work=$(mktemp -d /tmp/ljsnap-accuracy.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
prof=$here/accuracy/jitprof.lua
mkdir -p "$work/bt/spec"
cp "$here/accuracy/pl_spec.lua" "$work/bt/spec/"

# The command of PROGRAM under the collector: jitprof.lua OUT MODE N SCRIPT ARGS
run_args() {
	case $1 in
	luacheck) echo "/usr/bin/luacheck /usr/share/lua/5.1 --no-cache -qq" ;;
	busted) echo "/usr/bin/busted -o TAP $work/bt/spec" ;;
	ldoc) echo "/usr/bin/ldoc -q -d $work/ldoc-out /usr/share/lua/5.1/pl" ;;
	esac
}
# Repetitions in one process, so each run has a few thousand samples.
reps() {
	case $1:$2 in
	luacheck:on) echo 2 ;; luacheck:off) echo 8 ;;
	busted:*) echo 1 ;;
	ldoc:*) echo 30 ;;
	esac
}

summary=""
for prog in $progs; do
	[ -e "/usr/bin/$prog" ] || { echo "accuracy.sh: /usr/bin/$prog is missing (tests/install-deps.sh)" >&2; exit 1; }
	for mode in on off; do
		d=$work/$prog-$mode
		mkdir -p "$d"
		perf record -q -a -e cpu-clock -F "$HZ" -o "$d/perf.data" > /dev/null 2>&1 &
		perf_pid=$!
		sleep 0.5
		# shellcheck disable=SC2046
		(cd "$work/bt" && BUSTED_CASES=40000 "$LJSNAP" record -q -F "$HZ" -o "$d/cap.ljsnap" -- \
			luajit "$prof" "$d/gt.folded" "$mode" "$(reps "$prog" "$mode")" $(run_args "$prog")) \
			> "$d/out.log" 2> "$d/err.log" || true
		kill -INT "$perf_pid"
		wait "$perf_pid" || true
		[ -s "$d/gt.folded" ] || { cat "$d/err.log" >&2; echo "accuracy.sh: $prog ($mode) left no ground truth" >&2; exit 1; }
		perf script -i "$d/perf.data" -F pid,ip,sym,dso > "$d/perf.txt" 2> /dev/null
		"$LJSNAP" report -f folded --lua-only -o "$d/lua.folded" "$d/cap.ljsnap" 2> /dev/null
		"$LJSNAP" report -f folded --native-only -o "$d/native.folded" "$d/cap.ljsnap" 2> /dev/null
		"$LJSNAP" report -f folded -o "$d/mixed.folded" "$d/cap.ljsnap" 2> /dev/null
		# shellcheck disable=SC2046
		set -- $(awk -v entry=_start -f "$here/../tests/e2e/stitch_order.awk" \
			"$d/native.folded" "$d/mixed.folded" "$d/lua.folded")
		echo "== $prog, JIT $mode =="
		python3 "$here/accuracy.py" "$prog (JIT $mode)" "$d/gt.folded" "$d/lua.folded" \
			"$d/native.folded" "$d/perf.txt" "$(cat "$d/gt.folded.pid")" "$2" "$4" | tee "$d/table.txt" | grep -v '^SUMMARY'
		summary="$summary$(grep '^SUMMARY' "$d/table.txt")
"
	done
done
echo "== summary: largest top-10 share difference, in points; misordered share =="
printf '%s' "$summary" | sed 's/^SUMMARY /  /'
