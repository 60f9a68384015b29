#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run the libFuzzer targets (tests/fuzz/fuzz_*.c) for SECONDS each, one at a
# time (-jobs=1: the machine is shared), on their corpora in
# build-fuzz/corpus/NAME, seeded on first use from real data: the golden
# captures (tests/golden/), ELF files and their .eh_frame sections taken
# from this machine's /usr/bin/luajit and small system libraries.  Builds
# first (tests/fuzz/build.sh).  A crash, timeout, leak or OOM input lands
# in build-fuzz/artifacts/NAME/; each one found must become a regression
# input in tests/fuzz/regress/NAME/ (replayed by tests/fuzz/regress.sh).
# Ends with one line: "N execs, N crashes" (all targets together); exits
# non-zero on any crash.  A build failure (no clang, no libclang-rt-14-dev),
# missing seeds or a target that did not run say why on stderr and count
# as a crash, so that the last line never reads as a pass.
#   bash tests/fuzz/run.sh SECONDS [TARGET...]   (targets: capture ljwalk ljtrace ehframe elf)
# CI smoke: bash tests/fuzz/run.sh 20  (5 targets x 20 s, under 2 minutes)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${LJSNAP_FUZZ_DIR:-$top/build-fuzz}
secs=${1:?usage: run.sh SECONDS [TARGET...]}
shift
targets=${*:-capture ljwalk ljtrace ehframe elf}
fail() { echo "run.sh: $*" >&2; echo "0 execs, 1 crashes"; exit 1; }
sh "$top/tests/fuzz/build.sh" "$out" >"$out.build.log" 2>&1 ||
	{ cat "$out.build.log" >&2; fail "build failed"; }

seed_dir() { # NAME: create and fill the corpus of NAME when it is empty
	local c=$out/corpus/$1 s=$out/seeds f sec addr
	mkdir -p "$c" "$s"
	[ -n "$(ls -A "$c")" ] && return 0
	for f in "$top"/tests/golden/*.ljsnap.gz; do
		[ -f "$s/$(basename "$f" .gz)" ] || gzip -dc "$f" > "$s/$(basename "$f" .gz)"
	done
	case $1 in
	capture)
		for f in "$s"/*.ljsnap; do python3 "$top/tests/fuzz/seed.py" "$f" "$c"; done ;;
	ljwalk|ljtrace)
		mkdir -p "$out/corpus/ljwalk" "$out/corpus/ljtrace"
		for f in "$s"/*.ljsnap; do
			"$out/mkseed_lj" "$f" "$out/corpus/ljwalk" "$out/corpus/ljtrace" 40 >/dev/null
		done ;;
	ehframe|elf)
		# Small real ELF files (an executable, shared libraries) and LuaJIT,
		# whose .eh_frame holds the interpreter's FDE.
		for f in /usr/bin/luajit /usr/bin/true /lib/x86_64-linux-gnu/libdl.so.2 \
			 /lib/x86_64-linux-gnu/librt.so.1 /lib/x86_64-linux-gnu/libpthread.so.0 \
			 /lib/x86_64-linux-gnu/libz.so.1; do
			[ -f "$f" ] || continue
			f=$(readlink -f "$f")
			if [ "$1" = elf ]; then
				[ "$(stat -c %s "$f")" -le 200000 ] && cp "$f" "$c/$(basename "$f")"
				continue
			fi
			addr=$(LC_ALL=C readelf -SW "$f" | sed -n 's/.*\] \.eh_frame  *PROGBITS  *\([0-9a-f]*\) .*/\1/p')
			[ -n "$addr" ] || continue
			sec=$c/$(basename "$f").eh_frame
			# u64 LE section address, u8 flags 0, then the section bytes.
			python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<QB", int(sys.argv[1], 16), 0))' \
				"$addr" > "$sec"
			objcopy -O binary --only-section=.eh_frame "$f" "$sec.tmp" && cat "$sec.tmp" >> "$sec"
			rm -f "$sec.tmp"
		done ;;
	esac
	[ -n "$(ls -A "$c")" ] || fail "no seeds for $1"
}

execs=0 crashes=0
for t in $targets; do
	[ -x "$out/fuzz_$t" ] || fail "no target fuzz_$t"
	seed_dir "$t"
	art=$out/artifacts/$t
	mkdir -p "$art"
	before=$(ls "$art" | grep -cE '^(crash|timeout|oom|leak)-')
	# -timeout: an input running 10 s is a hang; -rss_limit_mb: an OOM.
	(cd "$art" && ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0} \
		"$out/fuzz_$t" -max_total_time="$secs" -print_final_stats=1 -timeout=10 \
		-rss_limit_mb=2048 -jobs=1 -artifact_prefix="$art/" "$out/corpus/$t") \
		>"$art/last.log" 2>&1
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$art/last.log" | tail -1)
	after=$(ls "$art" | grep -cE '^(crash|timeout|oom|leak)-')
	echo "$t: ${n:-0} execs, $((after - before)) crashes ($art/last.log)"
	[ -n "$n" ] || { tail -5 "$art/last.log"; [ "$after" -gt "$before" ] || after=$((after + 1)); }
	execs=$((execs + ${n:-0}))
	crashes=$((crashes + after - before))
done
echo "$execs execs, $crashes crashes"
[ "$crashes" = 0 ]
