#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: OpenResty's luajit2 (GC64, 112-byte lua_State, its own family table)
# with a workload of known call structure (tests/lua/build_chain.lua),
# recorded with real BPF, three ways:
#   or-bin   Debian's luajit2 executable, unpacked (dpkg -x, never installed)
#   or-so    libluajit-5.1.so.2 of the same packages under our embedder
#            tests/e2e/ljembed (LD_LIBRARY_PATH)
#   dualnum  luajit2 built from Debian's source with -DLUAJIT_NUMMODE=2
#            -DLUAJIT_ENABLE_LUA52COMPAT, as OpenResty ships it
# Each: detected as openresty GC64 (dual-number only for the last, from the
# code of lua_pushinteger), >= 95% of the samples with Lua code on CPU
# unwind to the main chunk, >= 80% end in the designed chain; `ljsnap
# doctor` says so and its live check passes; for the source build, its
# offsets are the compiler's (tests/variants/ljoffsets.c).
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/variants/lib.sh"
need_bpf
OR=$(variant or-deb) || exit 1
DN=$(variant or-dualnum) || exit 1
EMBED=$top_builddir/tests/e2e/ljembed
[ -x "$EMBED" ] || fail "tests/e2e/ljembed not built (libluajit-5.1-dev missing?)"
ORBIN=$OR/root/usr/bin/luajit
ORLIB=$OR/root/usr/lib/x86_64-linux-gnu
[ -x "$ORBIN" ] && [ -e "$ORLIB/libluajit-5.1.so.2" ] || fail "or-deb variant incomplete in $OR"
# The embedder must really load luajit2's library, not the system one.
LD_LIBRARY_PATH=$ORLIB ldd "$EMBED" | grep -q "$ORLIB/libluajit-5.1.so.2" ||
	fail "ljembed does not resolve libluajit-5.1.so.2 to $ORLIB"

# expect NAME WHAT: the recorder named the build WHAT
expect() {
	grep -q "$2" "$TMPD/$1.err" || { cat "$TMPD/$1.err" >&2; fail "$1: recorder did not say '$2'"; }
}

record_chain or-bin 3 "$ORBIN"
expect or-bin "openresty GC64 in $ORBIN"
check_chain_run or-bin

record_chain or-so 3 env LD_LIBRARY_PATH="$ORLIB" "$EMBED"
expect or-so "openresty GC64 in $ORLIB/libluajit-5.1.so.2"
check_chain_run or-so

record_chain dualnum 3 "$DN/luajit"
expect dualnum "openresty GC64 in $DN/luajit"
check_chain_run dualnum
"$LJSNAP" info "$CAP" | grep -q "dual-number" || fail "dualnum: the capture's layout lacks the DUALNUM flag"
"$LJSNAP" info "$TMPD/or-bin.ljsnap" | grep -q "dual-number" && fail "or-bin: flagged dual-number"

doctor_chain or-bin openresty GC64 single-number "$ORBIN"
doctor_chain or-so openresty GC64 single-number env LD_LIBRARY_PATH="$ORLIB" "$EMBED"
doctor_chain dualnum openresty GC64 dual-number "$DN/luajit"
ground_truth dualnum "$DN"
grep -q '^dualnum 1$' "$TMPD/dualnum.gt" || fail "dualnum: the source's LJ_DUALNUM is not 1"
doctor_offsets dualnum
# Debian's luajit2 packages come from the same source, built with defaults.
ver=$(awk '/luajit2=/ { for (i = 1; i <= NF; i++) if ($i ~ /^luajit2=/) { sub(/^luajit2=/, "", $i); print $i } }' "$OR/.stamp")
ver=${ver%+b[0-9]*}	# a binNMU has the source's version
grep -q " luajit2 $ver " "$DN/.stamp" || fail "luajit2 source ($(cat "$DN/.stamp")) is not the packages' version $ver"
for t in or-bin or-so; do
	ground_truth $t "$DN" ""
	doctor_offsets $t
done
exit 0
