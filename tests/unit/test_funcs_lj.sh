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
# Function signatures (symtab/ljsig.h): the amalg variants are twins of
# the builds whose signatures symtab/ljsig_*.h holds, so at least
# SIG_MIN_AMALG of their ranges must be named by them (fewer: the data no
# longer fits this machine's compiler; regenerate it with
# symtab/ljsig-gen.py); the other two are builds the data does not hold
# (other configurations, other flags), whose few matching signatures are
# checked as every other name is.  Debian's luajit and libluajit-5.1.so.2,
# when installed, and the luajit and libluajit-5.1.so.2 of Debian's luajit2
# packages (variant or-deb) are the packaged builds themselves: shape only,
# and at least SIG_MIN_AMALG signature names.  tests/e2e/ljembed.c linked
# statically with Debian's libluajit-5.1.a (when libluajit-5.1-dev is
# installed): the packaged library's code in another program, at other
# addresses, beside functions that are not LuaJIT's; stripped and checked
# against its unstripped self, with at least SIG_MIN_AMALG signature names.
# Last, the stripped up-amalg with two exported names swapped in .dynstr
# (lua_gettop and lua_settop): its symbols contradict its signatures, which
# must then name nothing.
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
SIG_MIN_AMALG=700
rc=0
# sigs OUT: the signature names test_funcs reported in OUT
sigs() { sed -n 's/.*, signatures \([0-9]*\),.*/\1/p' "$1"; }
# need_sigs OUT WHAT: at least SIG_MIN_AMALG of them, else a failure
need_sigs() {
	[ "$(sigs "$1")" -ge $SIG_MIN_AMALG ] ||
		{ echo "FAIL: $2: $(sigs "$1") ranges named by signatures (< $SIG_MIN_AMALG)"; rc=1; }
}
for pair in "up-nogc64:LuaJIT 2.1 (2022-03)" "or-dualnum:OpenResty luajit2 2.1-20230119" \
	"up-amalg:LuaJIT 2.1 (2022-03)" "or-amalg:OpenResty luajit2 2.1-20230119"; do
	v=${pair%%:*}
	dir=$(variant "$v") || exit 1
	objcopy --strip-all "$dir/luajit" "$TMPD/$v" || fail "objcopy $v"
	echo "# $v"
	"$T" "$TMPD/$v" "$dir/luajit" "${pair#*:}" > "$TMPD/$v.out" || rc=1
	cat "$TMPD/$v.out"
	case $v in
	*-amalg) need_sigs "$TMPD/$v.out" "$v" ;;
	esac
	echo "# $v, unstripped (its copy names as it does)"
	"$T" "$dir/luajit" "$dir/luajit" "${pair#*:}" || rc=1
done
ordeb=$(variant or-deb) || exit 1
for pair in "/usr/bin/luajit:LuaJIT 2.1 (2022-03)" \
	"/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2:LuaJIT 2.1 (2022-03)" \
	"$ordeb/root/usr/bin/luajit:OpenResty luajit2 2.1-20230119" \
	"$ordeb/root/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2:OpenResty luajit2 2.1-20230119"; do
	lj=${pair%%:*}
	[ -e "$lj" ] || continue
	lj=$(readlink -f "$lj")
	echo "# $lj"
	"$T" "$lj" "$lj" "${pair#*:}" > "$TMPD/deb.out" || rc=1
	cat "$TMPD/deb.out"
	need_sigs "$TMPD/deb.out" "$lj"
done
LJA=/usr/lib/x86_64-linux-gnu/libluajit-5.1.a
if [ -r "$LJA" ] && cflags=$(pkg-config --cflags luajit 2>/dev/null); then
	# shellcheck disable=SC2086
	${CC:-cc} -O2 $cflags -o "$TMPD/embed" "$top_srcdir/tests/e2e/ljembed.c" "$LJA" -lm -ldl ||
		fail "cannot link ljembed.c with $LJA"
	objcopy --strip-all "$TMPD/embed" "$TMPD/embed.strip" || fail "objcopy embed"
	echo "# ljembed.c linked with $LJA"
	"$T" "$TMPD/embed.strip" "$TMPD/embed" > "$TMPD/embed.out" || rc=1
	cat "$TMPD/embed.out"
	need_sigs "$TMPD/embed.out" embed
fi
python3 - "$TMPD/up-amalg" "$TMPD/swapped" <<'PY' || fail "cannot swap two names"
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
a, b = d.find(b'\0lua_gettop\0'), d.find(b'\0lua_settop\0')
if a < 0 or b < 0:
    sys.exit(1)
d[a + 1:a + 11], d[b + 1:b + 11] = d[b + 1:b + 11], d[a + 1:a + 11]
open(sys.argv[2], 'wb').write(d)
PY
echo "# up-amalg, lua_gettop and lua_settop swapped"
"$T" "$TMPD/swapped" "$TMPD/swapped" > "$TMPD/swapped.out" || rc=1
cat "$TMPD/swapped.out"
[ "$(sigs "$TMPD/swapped.out")" = 0 ] ||
	{ echo "FAIL: swapped names: $(sigs "$TMPD/swapped.out") ranges named by signatures (not 0)"; rc=1; }
exit $rc
