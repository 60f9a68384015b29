# SPDX-License-Identifier: GPL-2.0-or-later
# lib.sh -- shared helpers for the end-to-end shell tests (sourced).
# Exit codes follow automake: 0 pass, 77 skip, 99 hard error, else fail.
# A test skips only when BPF is truly unavailable (not root, no BTF); with
# CI=true a skip is turned into a failure, since CI runs as root.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${LJSNAP:=$top_builddir/ljsnap}"
TMPD=$(mktemp -d /tmp/ljsnap-test.XXXXXX)
trap 'cleanup_all' EXIT
PIDS_TO_KILL=""

cleanup_all() {
	for p in $PIDS_TO_KILL; do kill "$p" 2>/dev/null; done
	# LJSNAP_TEST_KEEP=1 keeps the captures and reports, to look at a failure
	if [ -n "${LJSNAP_TEST_KEEP:-}" ]; then echo "# kept $TMPD" >&2; else rm -rf "$TMPD"; fi
}

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "# $*"; }

skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL (skip not allowed on CI): $*" >&2
		exit 1
	fi
	echo "SKIP: $*" >&2
	exit 77
}

need_bpf() {
	[ "$(id -u)" = 0 ] || skip "needs root for BPF and perf events"
	[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
}

need_prog() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed${2:+ (Debian package $2)}"
}

# value KEY FILE: the value of a "key value" line
value() { awk -v k="$1" '$1 == k { print $2; exit }' "$2"; }

# assert_ge A B MSG: A >= B (integers)
assert_ge() { [ "$1" -ge "$2" ] || fail "$3 ($1 < $2)"; }

# pct A B: 100*A/B rounded down (0 if B is 0)
pct() { if [ "$2" -gt 0 ]; then echo $(( 100 * $1 / $2 )); else echo 0; fi; }
