#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# prepare.sh -- unpack or build the LuaJIT variants the tests run on, once,
# into a cache directory.  Idempotent (a stamp per variant records the
# package version and build flags; a change rebuilds), and safe to run from
# several tests at once (flock).  Only Debian's archive is used.
#
#   sh tests/variants/prepare.sh NAME...     print each variant's directory
#   sh tests/variants/prepare.sh --sources   (root) add deb-src entries for
#                                            the machine's deb entries
# NAME:
#   or-deb      OpenResty's luajit2 and the nginx Lua module from Debian
#               packages, unpacked with dpkg -x (never installed: they conflict
#               with Debian's luajit): DIR/root/usr/{bin/luajit,lib/...,
#               lib/nginx/modules/*.so, share/lua/5.1/resty}.  GC64.
#   up-nogc64   Debian's upstream LuaJIT source, -DLUAJIT_DISABLE_GC64.
#   or-dualnum  Debian's luajit2 source, -DLUAJIT_NUMMODE=2
#               -DLUAJIT_ENABLE_LUA52COMPAT (as OpenResty ships it).  GC64.
#   up-unknown  upstream source with three pointers inserted at the start of
#               global_State: a build no built-in table describes.  GC64.
#   up-badlstate  upstream source with lua_State grown to 104 bytes, a size no
#               fork has: detection cannot calibrate it (tests the honest
#               failure).  GC64.
#   up-amalg, or-amalg  Debian's upstream and luajit2 sources built the way
#               their Debian packages are (`make amalg`, dpkg-buildflags'
#               CFLAGS and LDFLAGS), with symbols: twins of the stripped
#               binaries Debian ships.  GC64.
# A built variant has DIR/luajit, DIR/lib/libluajit.a, DIR/include/*.h, the
# source tree in DIR/src (objects removed) and its XCFLAGS in DIR/xcflags.
#
# Cache: $LJSNAP_VARIANTS_DIR, default $top_builddir/variants (top_builddir
# defaults to the source tree's build-tests, as tests/run.sh uses).
# Exit status: 0, or 1 with a message saying what failed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../../build-tests}"
V=${LJSNAP_VARIANTS_DIR:-$top_builddir/variants}
JOBS=${LJSNAP_VARIANTS_JOBS:-2}

die() { echo "prepare.sh: $*" >&2; exit 1; }
log() { echo "prepare.sh: $*" >&2; }

# add_sources: a deb-src twin of every deb entry (deb822 and one-line lists).
add_sources() {
	[ "$(id -u)" = 0 ] || die "adding deb-src entries needs root"
	out=/etc/apt/sources.list.d/ljsnap-src.sources
	tmp=$out.tmp
	: > "$tmp"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && [ "$f" != "$out" ] || continue
		# keep only the stanzas whose Types include "deb"
		awk 'BEGIN { RS = ""; ORS = "\n\n" }
		     /(^|\n)Types:[^\n]*(^| )deb( |\n|$)/ {
			sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f" >> "$tmp"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" > "$tmp.list"
		[ -s "$tmp.list" ] && { echo; cat "$tmp.list"; } >> "$tmp.oneline"
		rm -f "$tmp.list"
	done
	if [ -s "$tmp" ]; then mv "$tmp" "$out"; else rm -f "$tmp"; fi
	if [ -s "$tmp.oneline" ]; then
		mv "$tmp.oneline" /etc/apt/sources.list.d/ljsnap-src.list
	else
		rm -f "$tmp.oneline"
	fi
	[ -f "$out" ] || [ -f /etc/apt/sources.list.d/ljsnap-src.list ] ||
		die "no deb entries found in /etc/apt to derive deb-src entries from"
	apt-get update -q >/dev/null || die "apt-get update failed"
}

# have_src PKG: apt knows a source package PKG
have_src() { apt-cache showsrc "$1" 2>/dev/null | grep -q '^Package:'; }

# fetch_src PKG DEST: Debian source package PKG extracted (patches applied) into DEST.
fetch_src() {
	pkg=$1; dest=$2
	if ! have_src "$pkg"; then
		[ "$(id -u)" = 0 ] || die "no deb-src entry for $pkg: run 'sh $0 --sources' as root"
		add_sources
		have_src "$pkg" || die "apt has no source package $pkg even with deb-src entries"
	fi
	mkdir -p "$V/dl/$pkg"
	(cd "$V/dl/$pkg" && apt-get source -q --download-only "$pkg" >/dev/null 2>&1) ||
		die "apt-get source --download-only $pkg failed (network?)"
	dsc=$(ls -t "$V/dl/$pkg"/*.dsc | head -1)
	rm -rf "$dest"
	dpkg-source -q --no-check -x "$dsc" "$dest" >/dev/null 2>&1 ||
		die "dpkg-source -x $dsc failed (is dpkg-dev installed?)"
}

# srcver PKG: candidate source version
srcver() { apt-cache showsrc "$1" 2>/dev/null | awk '/^Version:/ { print $2; exit }'; }

# stamp_ok DIR RECIPE: DIR was made by RECIPE
stamp_ok() { [ -f "$1/.stamp" ] && [ "$(cat "$1/.stamp")" = "$2" ]; }

# build PKG DIR XCFLAGS [PATCH]: static build of LuaJIT from Debian source.
build() {
	pkg=$1; dir=$2; xcflags=$3; patch=${4:-}
	ver=$(srcver "$pkg")
	[ -n "$ver" ] || { [ "$(id -u)" = 0 ] && add_sources; ver=$(srcver "$pkg"); }
	recipe="v2 $pkg $ver static XCFLAGS=$xcflags patch=$patch"
	stamp_ok "$dir" "$recipe" && return 0
	log "building $(basename "$dir") ($recipe); about 30-60 s"
	rm -rf "$dir"
	mkdir -p "$dir"
	fetch_src "$pkg" "$dir/src"
	case $patch in
	pad-g)	# three pointers right after allocd: every global_State field moves
		grep -q '^  void \*allocd;' "$dir/src/src/lj_obj.h" || die "lj_obj.h: allocd not found"
		sed -i 's|^  void \*allocd;.*|&\n  void *ljsnap_pad[3];\t/* ljsnap test: unknown layout */|' \
			"$dir/src/src/lj_obj.h" ;;
	pad-L)	# lua_State grows to 104 bytes: GG_OFS(g) is none of 64/80/96/112
		grep -q '^  MSize stacksize;.*True stack size' "$dir/src/src/lj_obj.h" ||
			die "lj_obj.h: lua_State's stacksize not found"
		sed -i 's|^  MSize stacksize;.*True stack size.*|&\n  uint64_t ljsnap_pad;\t/* ljsnap test: undetectable */|' \
			"$dir/src/src/lj_obj.h" ;;
	esac
	# amalg: one translation unit, with the distribution's compiler flags,
	# as Debian's packages build it (debian/rules: make amalg)
	if [ "$patch" = amalg ]; then
		set -- amalg "CFLAGS=$(dpkg-buildflags --get CFLAGS)" \
			"LDFLAGS=$(dpkg-buildflags --get LDFLAGS)"
	else
		set --
	fi
	make -C "$dir/src/src" -j"$JOBS" "$@" BUILDMODE=static "XCFLAGS=$xcflags" Q= E=@: \
		> "$dir/build.log" 2>&1 || { tail -20 "$dir/build.log" >&2; die "build of $dir failed"; }
	mkdir -p "$dir/lib" "$dir/include"
	cp "$dir/src/src/luajit" "$dir/luajit"
	cp "$dir/src/src/libluajit.a" "$dir/lib/libluajit.a"
	for h in lua.h luaconf.h lualib.h lauxlib.h luajit.h lua.hpp; do
		cp "$dir/src/src/$h" "$dir/include/"
	done
	# keep the jit.* modules (luajit -jv / -jdump), drop the objects
	mkdir -p "$dir/share/jit"
	cp "$dir/src/src/jit/"*.lua "$dir/share/jit/" 2>/dev/null || true
	find "$dir/src" -name '*.o' -delete
	echo "$xcflags" > "$dir/xcflags"
	echo "$recipe" > "$dir/.stamp"
}

# unpack_or_deb DIR: OpenResty luajit2 + nginx Lua module debs, dpkg -x.
unpack_or_deb() {
	dir=$1
	pkgs="luajit2 libluajit2-5.1-2 libluajit2-5.1-common libnginx-mod-http-lua
	      libnginx-mod-http-ndk lua-resty-core lua-resty-lrucache"
	# shellcheck disable=SC2086
	vers=$(apt-cache policy $pkgs 2>/dev/null | awk '
		/^[^ ]/ { p = $1; sub(/:$/, "", p) }
		/Candidate:/ && $2 != "(none)" { printf " %s=%s", p, $2; n++ }
		END { if (n != 7) exit 1 }') ||
		die "apt does not know every one of: $pkgs (apt-get update?)"
	stamp_ok "$dir" "$vers" && return 0
	log "unpacking OpenResty packages into $dir"
	rm -rf "$dir"
	mkdir -p "$dir/debs"
	# shellcheck disable=SC2086
	(cd "$dir/debs" && apt-get download -q $pkgs >/dev/null 2>&1) ||
		die "apt-get download $pkgs failed (network?)"
	for f in "$dir/debs"/*.deb; do
		dpkg -x "$f" "$dir/root" || die "dpkg -x $f failed"
	done
	rm -rf "$dir/debs"
	echo "$vers" > "$dir/.stamp"
}

# prepare NAME: make the variant, print its directory
prepare() {
	d=$V/$1
	case $1 in
	or-deb)		unpack_or_deb "$d" ;;
	up-nogc64)	build luajit "$d" "-DLUAJIT_DISABLE_GC64" ;;
	or-dualnum)	build luajit2 "$d" "-DLUAJIT_NUMMODE=2 -DLUAJIT_ENABLE_LUA52COMPAT" ;;
	up-unknown)	build luajit "$d" "" pad-g ;;
	up-badlstate)	build luajit "$d" "" pad-L ;;
	up-amalg)	build luajit "$d" "" amalg ;;
	or-amalg)	build luajit2 "$d" "" amalg ;;
	*)		die "unknown variant '$1' (or-deb, up-nogc64, or-dualnum, up-unknown, up-badlstate, up-amalg, or-amalg)" ;;
	esac
	echo "$d"
}

[ $# -gt 0 ] || die "usage: prepare.sh --sources | NAME..."
if [ "$1" = --sources ]; then
	have_src luajit && have_src luajit2 || add_sources
	exit 0
fi
mkdir -p "$V"
V=$(cd "$V" && pwd -P)	# physical: tests compare it with /proc paths
command -v flock >/dev/null 2>&1 || die "flock missing (Debian package util-linux)"
exec 9> "$V/.lock"
flock 9
for n in "$@"; do
	prepare "$n"
done
