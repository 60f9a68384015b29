#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run ljsnap's whole test suite on a fresh Debian 12 machine (as root):
# install the dependencies, build, run `make check` (unit tests, the
# in-process ground-truth harness and the end-to-end BPF tests) and print
# "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
# Build in build-tests/ (a VPATH build), unless the source tree itself is
# configured already (the README's quick start runs ./configure there, and
# configure refuses a VPATH build of a configured tree): then build there.
if [ -z "${LJSNAP_BUILD_DIR:-}" ] && [ -f "$top/config.status" ]; then
	build=$top
	configure_it=:
else
	build=${LJSNAP_BUILD_DIR:-$top/build-tests}
	configure_it='"$top/configure" -q'
fi
# install-deps.sh prepares the LuaJIT variants in $LJSNAP_BUILD_DIR/variants,
# where the tests look for them.
export LJSNAP_BUILD_DIR=$build
bash tests/install-deps.sh || { echo "dependency installation failed"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$build"
( [ -x configure ] || ./autogen.sh ) >/dev/null &&
	(cd "$build" && eval "$configure_it") &&
	make -C "$build" -j"$(nproc)" >"$build/make.log" 2>&1 ||
	{ tail -50 "$build/make.log" 2>/dev/null; echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
make -C "$build" -j1 check >"$build/check.log" 2>&1
status=$?
grep -E '^(PASS|FAIL|XFAIL|XPASS|SKIP|ERROR):' "$build/check.log"
for log in $(find "$build/tests" -name '*.log' ! -name test-suite.log 2>/dev/null); do
	trs=${log%.log}.trs
	grep -qE ':test-result: (FAIL|ERROR|XPASS)' "$trs" 2>/dev/null && { echo "--- $log"; tail -40 "$log"; }
done
pass=$(grep -hE '^:test-result: (PASS|XFAIL)' $(find "$build/tests" -name '*.trs') 2>/dev/null | wc -l)
fail=$(grep -hE '^:test-result: (FAIL|ERROR|XPASS)' $(find "$build/tests" -name '*.trs') 2>/dev/null | wc -l)
skip=$(grep -hE '^:test-result: SKIP' $(find "$build/tests" -name '*.trs') 2>/dev/null | wc -l)
if [ "$status" != 0 ] && [ "$fail" = 0 ]; then
	tail -30 "$build/check.log"
	fail=1
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
