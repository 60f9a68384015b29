#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Build ljsnap with AddressSanitizer and UndefinedBehaviorSanitizer
# (./configure --enable-asan) in build-asan/, and run the unit tests, the
# ground-truth harness, the golden, output and a few end-to-end tests under
# it.  Any sanitizer report fails the test that triggered it (ASan aborts,
# UBSan is built with -fno-sanitize-recover).  Ends with "N passed, N failed".
#   bash tests/asan.sh            (from the top of the tree, as root)
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
build=${LJSNAP_ASAN_DIR:-$top/build-asan}
variants=${LJSNAP_VARIANTS_DIR:-$top/build-tests/variants}
mkdir -p "$build"
( [ configure -nt configure.ac ] || ./autogen.sh ) >/dev/null &&
	(cd "$build" && "$top/configure" -q --enable-asan) &&
	make -C "$build" -j"$(nproc)" >"$build/make.log" 2>&1 ||
	{ tail -30 "$build/make.log"; echo "0 passed, 1 failed"; exit 1; }
tests=$(cd "$build" && ls tests/unit/test_* 2>/dev/null | grep -v '\.' | tr '\n' ' ')
tests="$tests tests/harness/harness tests/golden/golden.sh tests/e2e/record_luajit.sh
	tests/e2e/report_fuzz.sh tests/e2e/options_values.sh tests/e2e/build_luajit2.sh tests/fuzz/regress.sh"
[ -d "$top/tests/output" ] &&
	tests="$tests $(cd "$top" && ls tests/output/*.sh | grep -v make-fixture | tr '\n' ' ')"
# detect_leaks: the libraries' caches live until exit by design in a few
# tests; leaks are looked at with valgrind instead.
# allocator_may_return_null: the containers' tests ask for absurd sizes on
# purpose and check the -ENOMEM.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LJSNAP_VARIANTS_DIR=$variants
# shellcheck disable=SC2086
make -C "$build" -j1 check TESTS="$tests" >"$build/check.log" 2>&1
grep -E '^(PASS|FAIL|XFAIL|XPASS|SKIP|ERROR):' "$build/check.log"
grep -l 'ERROR: AddressSanitizer\|runtime error:' $(find "$build/tests" -name '*.log') 2>/dev/null |
	sed 's/^/sanitizer report in: /'
pass=$(grep -cE '^(PASS|XFAIL):' "$build/check.log")
fail=$(grep -cE '^(FAIL|XPASS|ERROR):' "$build/check.log")
[ "$pass" -gt 0 ] || { tail -20 "$build/check.log"; fail=$((fail + 1)); }
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
