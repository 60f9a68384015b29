#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Rules every source file keeps (see docs/architecture.md, "Rules"):
#   - an SPDX-License-Identifier line (LICENSE says what each one means), in
#     C, shell, Lua, Python, JavaScript, Go, HTML and template files;
#   - no C file over 800 lines;
#   - comments cite LuaJIT's own files or the project's docs, never
#     documents users do not have (the design notes outside the repository).
# The checker runs on a planted copy too, so that it cannot pass by
# checking nothing.
#   check-sources.sh [DIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/source-files.sh"

# The names looked for, spelled in pieces so that this file does not match.
outside="LUAJIT-INTER""NALS|ARCHI""TECTURE\\.md|\\.\\./sha""red/|ljwalk_""gdb"

check() {
	root=$1
	bad=0
	n=0
	files=$(source_files "$root" |
		grep -E '(\.(c|h|sh|lua|in|py|js|go|html)|/run)$' | grep -v '/golden/expect/' | sort)
	for f in $files; do
		n=$((n + 1))
		if ! grep -q 'SPDX-License-Identifier: ' "$root/$f"; then
			echo "$f: no SPDX-License-Identifier line"
			bad=$((bad + 1))
		fi
		case $f in
		*.c | *.h)
			l=$(wc -l < "$root/$f")
			if [ "$l" -gt 800 ]; then
				echo "$f: $l lines (at most 800: split it where it does two things)"
				bad=$((bad + 1))
			fi ;;
		esac
		if grep -qE "$outside" "$root/$f"; then
			grep -nE "$outside" "$root/$f" |
				sed "s|^|$f:|; s|$|  (cite LuaJIT's files or docs/)|"
			bad=$((bad + 1))
		fi
	done
	[ "$n" -gt 0 ] || { echo "no source files found under $root"; return 1; }
	echo "$n files, $bad problems"
	[ "$bad" = 0 ]
}

if [ $# -gt 0 ]; then
	check "$1"
	exit $?
fi
check "${top_srcdir:-$here/..}" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/unwind"
printf '/* no license line; see %s.md */\n' "LUAJIT-INTER""NALS" > "$tmp/unwind/planted.c"
seq 900 | sed 's/^/\/\/ /' >> "$tmp/unwind/planted.c"
out=$(check "$tmp")
echo "$out" | grep -q 'planted.c: no SPDX' && echo "$out" | grep -q 'planted.c: 901 lines' &&
	echo "$out" | grep -q 'planted.c:1:.*NALS\.md' ||
	{ echo "the check missed a planted problem:"; echo "$out"; exit 1; }
echo "self-test: the 3 planted problems were caught"
