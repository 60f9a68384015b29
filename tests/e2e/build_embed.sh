#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: upstream GC64 LuaJIT (Debian's), found by what a file contains,
# never by its name.
#   system   tests/e2e/ljembed with the system libluajit-5.1.so.2
#   static   the same embedder (tests/e2e/ljembed.c) linked with Debian's
#            libluajit-5.1.a into a stripped executable named
#            "qzx-render-worker": no libluajit mapped, no symbol table
#   renamed  a copy of /usr/bin/luajit named "zzq-daemon"
# Each runs a workload of known call structure (tests/lua/build_chain.lua)
# under ljsnap record with real BPF: detected as upstream GC64 in that
# very file, >= 95% of the samples with Lua code on CPU unwind to the main
# chunk and >= 80% end in the designed chain; `ljsnap doctor` agrees, its
# live check passes, and its offsets are the compiler's offsetof() for
# Debian's luajit source of the installed version (tests/variants/ljoffsets.c).
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/variants/lib.sh"
need_bpf
need_prog luajit luajit
LJA=/usr/lib/x86_64-linux-gnu/libluajit-5.1.a
[ -r "$LJA" ] || fail "$LJA missing (Debian package libluajit-5.1-dev)"
cflags=$(pkg-config --cflags luajit 2>/dev/null) || fail "pkg-config luajit failed (libluajit-5.1-dev)"

STATIC=$TMPD/qzx-render-worker
# shellcheck disable=SC2086
${CC:-cc} -O2 -s $cflags -o "$STATIC" "$top_srcdir/tests/e2e/ljembed.c" "$LJA" -lm -ldl ||
	fail "cannot link ljembed.c with $LJA"
ldd "$STATIC" | grep -q luajit && fail "$STATIC links a shared libluajit"
nm "$STATIC" 2>&1 | grep -q "no symbols" || fail "$STATIC is not stripped"

REN=$TMPD/zzq-daemon
cp "$(command -v luajit)" "$REN" || fail "cannot copy luajit"

EMBED=$top_builddir/tests/e2e/ljembed
[ -x "$EMBED" ] || fail "tests/e2e/ljembed not built (libluajit-5.1-dev missing?)"
SO=$(ldd "$EMBED" | awk '/libluajit-5.1.so/ { print $3 }')
[ -n "$SO" ] || fail "ljembed does not link libluajit-5.1.so"
SO=$(readlink -f "$SO")

for t in system static renamed; do
	case $t in
	system)	bin=$EMBED; where=$SO ;;
	static)	bin=$STATIC; where=$STATIC ;;
	*)	bin=$REN; where=$REN ;;
	esac
	record_chain $t 3 "$bin"
	grep -q "upstream GC64 in $where" "$TMPD/$t.err" ||
		{ cat "$TMPD/$t.err" >&2; fail "$t: not detected as upstream GC64 in $where"; }
	check_chain_run $t
	doctor_chain $t upstream GC64 single-number "$bin"
done
# and Debian's luajit itself
doctor_chain luajit upstream GC64 single-number "$(command -v luajit)"
# The offsets are the compiler's for Debian's source of that package (the
# up-nogc64 variant's tree, compiled here with the default GC64 options).
src=$(variant up-nogc64) || exit 1
ver=$(dpkg-query -W -f='${Version}' luajit)
ver=${ver%+b[0-9]*}	# a binNMU has the source's version
grep -q " luajit $ver " "$src/.stamp" || fail "the luajit source ($(cat "$src/.stamp")) is not version $ver"
for t in system static renamed luajit; do
	ground_truth $t "$src" ""
	doctor_offsets $t
done
exit 0
