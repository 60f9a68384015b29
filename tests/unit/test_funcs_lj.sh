#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Function names without debug symbols (symtab/funcs.h) for four LuaJIT
# builds, checked offline against their unstripped twins: upstream LuaJIT
# (the up-nogc64 and up-amalg variants) and OpenResty's luajit2 (or-dualnum,
# or-amalg), built from Debian's sources with symbols by
# tests/variants/prepare.sh (amalg: as Debian's packages are).  Each is
# copied with `objcopy --strip-all` (the build id stays) and
# tests/unit/test_funcs checks every name the stripped copy gets against
# the unstripped file's .symtab.  Also Debian's own /usr/bin/luajit, when
# installed, must fit the upstream IR call table list (no twin: shape only).
# For each, test_funcs also checks that the capture's copy of the file
# (symtab/elfcopy.h, with the names saved) names every address as the file
# does; the unstripped variants are run too, so that a copy of an
# unstripped file is checked to be unchanged.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
T=$top_builddir/tests/unit/test_funcs
TMPD=$(mktemp -d /tmp/ljsnap-funcs.XXXXXX)
trap 'rm -rf "$TMPD"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v objcopy >/dev/null 2>&1 || fail "objcopy (binutils) is not installed"
. "$top_srcdir/tests/variants/lib.sh"
rc=0
for pair in "up-nogc64:LuaJIT 2.1 (2022-03)" "or-dualnum:OpenResty luajit2 2.1-20230119" \
	"up-amalg:LuaJIT 2.1 (2022-03)" "or-amalg:OpenResty luajit2 2.1-20230119"; do
	v=${pair%%:*}
	dir=$(variant "$v") || exit 1
	objcopy --strip-all "$dir/luajit" "$TMPD/$v" || fail "objcopy $v"
	echo "# $v"
	"$T" "$TMPD/$v" "$dir/luajit" "${pair#*:}" || rc=1
	echo "# $v, unstripped (its copy names as it does)"
	"$T" "$dir/luajit" "$dir/luajit" "${pair#*:}" || rc=1
done
if [ -x /usr/bin/luajit ]; then
	lj=$(readlink -f /usr/bin/luajit)
	echo "# $lj"
	"$T" "$lj" "$lj" "LuaJIT 2.1 (2022-03)" || rc=1
fi
exit $rc
