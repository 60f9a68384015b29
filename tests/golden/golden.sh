#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Golden test: the report of a few small real captures (tests/golden/*.ljsnap.gz:
# luajit with the JIT off and on, a non-GC64 build, 4 nginx workers with
# OpenResty's luajit2) must stay byte-identical to tests/golden/expect/.
# It holds the output of the code as it was when the fixtures were recorded
# (tests/golden/make-fixtures.sh), so that moving code between layers is
# proven to change no behaviour.  The fixtures are format 1 files (kept so
# forever: docs/capture-format.md, section 4); each is also rewritten as
# formats 2 and 3 (tests/golden/rewrite; format 3 gets stack references
# where a thread's stacks repeat) and must report the same.
#
# Two ways of finding the recorded files:
#   --sysroot EMPTY  nothing of this machine's is used: the Lua walk, the
#                    stitching and the names from the capture alone (native
#                    frames fall back to frame pointers and module+offset);
#                    the same on every machine.
#   this machine's   for the luajit fixtures, whose files (Debian's luajit,
#                    libc...) are checked first against the sha256 sums taken
#                    when they were recorded (expect/host-files.sha256):
#                    symbolization, CFI unwinding and inline frames too.
# `golden.sh --write` rewrites expect/ (only make-fixtures.sh does that).
set -u
here=$(cd "$(dirname "$0")" && pwd)
LJSNAP=$(realpath "${LJSNAP:-${top_builddir:-$here/../..}/ljsnap}")
REWRITE=${REWRITE:-$(dirname "$LJSNAP")/tests/golden/rewrite}
exp=$here/expect
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/empty" "$tmp/v2/empty" "$tmp/v3/empty"
fmt=
write=0
[ "${1:-}" = --write ] && write=1 && mkdir -p "$exp"
fails=0

# check NAME OUTFILE: compare with (or write) expect/NAME
check() {
	if [ $write = 1 ]; then
		cp "$2" "$exp/$1"
	elif ! cmp -s "$2" "$exp/$1"; then
		echo "FAIL: $1$fmt differs from tests/golden/expect/$1:"
		diff -u "$exp/$1" "$2" | head -40
		fails=$((fails + 1))
	else
		echo "ok: $1$fmt ($(wc -l < "$2") lines)"
	fi
}

# view LABEL ENV VIEW OPTION...: `ljsnap report VIEW OPTION... $cap` with the
# environment assignment ENV ("" for none), against expect/$n.$tag.<VIEW's
# name>; LABEL follows the name in what is printed.
view() {
	label=$1; envv=$2; view=$3; shift 3
	v=$(echo "$view" | sed -e 's/-f //' -e 's/ --/-/g' -e 's/ //g')
	# shellcheck disable=SC2086
	if ! env $envv "$LJSNAP" report $view "$@" "$cap" > "$tmp/out" 2> "$tmp/err"; then
		echo "FAIL: $n.$tag.$v$label: ljsnap report failed:"; cat "$tmp/err"
		fails=$((fails + 1))
		return
	fi
	f0=$fmt; fmt="$fmt$label"; check "$n.$tag.$v" "$tmp/out"; fmt=$f0
}

# outputs NAME CAPTURE TAG ARGS...: every view of one capture
outputs() {
	n=$1; cap=$2; tag=$3; shift 3
	for view in "-f folded" "-f folded --lua-only" "-f folded --native-only" \
		"-f folded --lines --no-kernel" "-f text --by-trace"; do
		view "" "" "$view" "$@"
	done
	[ $write = 1 ] && return
	# Read in the sample pass's own thread (the default reads ahead in a
	# second one where there is a second CPU): the same output.
	view " (--threads 1)" "" "-f folded" --threads 1 "$@"
	# Every sample walked (no walk remembered from an earlier sample's,
	# unwind/ljwalk_memo.c): the same output.
	for view in "-f folded" "-f folded --lines --no-kernel"; do
		view " (LJSNAP_REPORT_NO_MEMO=1)" LJSNAP_REPORT_NO_MEMO=1 "$view" "$@"
	done
}

for gz in "$here"/*.ljsnap.gz; do
	n=$(basename "$gz" .ljsnap.gz)
	# the report names the file it read in the text summary: the same name
	cap=$tmp/$n.ljsnap
	gzip -dc "$gz" > "$cap" || { echo "FAIL: $gz does not decompress"; fails=$((fails + 1)); continue; }
	# (not in a subshell: its failures must count)
	cd "$tmp" && fmt= && outputs "$n" "$n.ljsnap" sysroot-empty --sysroot empty
	[ $write = 1 ] && continue
	# The same records in formats 2 and 3, under the same name.
	for v in 2 3; do
		if ! "$REWRITE" --format $v "$cap" "$tmp/v$v/$n.ljsnap" > /dev/null; then
			echo "FAIL: $n: rewriting as format $v failed"; fails=$((fails + 1)); continue
		fi
		cd "$tmp/v$v" && fmt=" (format $v)" && outputs "$n" "$n.ljsnap" sysroot-empty --sysroot empty
	done
done

# This machine's files: for the luajit fixtures, when they are the same files.
files="/usr/bin/luajit $(ldd /usr/bin/luajit 2>/dev/null | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u)"
if [ $write = 1 ]; then
	# shellcheck disable=SC2086
	sha256sum $(readlink -f $files) > "$exp/host-files.sha256"
fi
if sha256sum --quiet -c "$exp/host-files.sha256" > /dev/null 2>&1; then
	for n in luajit-joff luajit-jon; do
		cd "$tmp" && fmt= && outputs "$n" "$n.ljsnap" host
		[ $write = 1 ] && continue
		for v in 2 3; do
			cd "$tmp/v$v" && fmt=" (format $v)" && outputs "$n" "$n.ljsnap" host
		done
	done
else
	echo "note: this machine's luajit or its libraries are not the files the fixtures were recorded with; compared without them only"
fi
[ $write = 1 ] && { echo "wrote $exp"; exit 0; }
[ $fails = 0 ] || { echo "$fails golden comparisons failed"; exit 1; }
exit 0
