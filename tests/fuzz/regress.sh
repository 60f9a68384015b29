#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Replay every input the fuzzers found a bug with (tests/fuzz/regress/NAME/)
# through the normal build's libraries: tests/fuzz/NAME_replay is
# tests/fuzz/fuzz_NAME.c with tests/fuzz/replay_main.c (make check builds
# them; under tests/asan.sh, with ASan and UBSan).  Each target also runs
# one empty input.  A crash, a sanitizer report or a non-zero exit fails.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
fail=0 n=0
for t in capture ljwalk ljtrace ehframe elf; do
	bin=$top_builddir/tests/fuzz/${t}_replay
	[ -x "$bin" ] || { echo "FAIL: $bin not built"; fail=1; continue; }
	"$bin" || { echo "FAIL: $t: empty input"; fail=1; }
	for f in "$top_srcdir/tests/fuzz/regress/$t"/*; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		"$bin" "$f" || { echo "FAIL: $t: $f"; fail=1; }
	done
done
echo "regress.sh: $n regression inputs replayed"
exit $fail
