#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install everything ljsnap needs to build and to run its whole test suite on
# Debian 12 (as root).  Only Debian's archive is used.
set -e
export DEBIAN_FRONTEND=noninteractive
top=$(cd "$(dirname "$0")/.." && pwd)
pkgs="autoconf automake libtool pkg-config make gcc clang llvm bpftool
      libbpf-dev libelf-dev libdw-dev binutils-dev libmsgpack-dev zlib1g-dev
      luajit libluajit-5.1-dev tarantool wrk linux-perf procps
      nginx dpkg-dev xz-utils util-linux gdb"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	# Installing nginx must not start it as a service: the tests run their
	# own on 127.0.0.1.  policy-rc.d is created only if absent, and removed.
	rcd=/usr/sbin/policy-rc.d
	made_rcd=
	if [ ! -e "$rcd" ]; then
		printf '#!/bin/sh\n# ljsnap tests/install-deps.sh: start no service\nexit 101\n' > "$rcd"
		chmod 755 "$rcd"
		made_rcd=1
	fi
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing || { [ -z "$made_rcd" ] || rm -f "$rcd"; exit 1; }
	[ -z "$made_rcd" ] || rm -f "$rcd"
fi
# The LuaJIT builds the tests run on (OpenResty's luajit2 and the nginx Lua
# module unpacked from Debian packages; upstream non-GC64, dual-number and an
# unknown-layout build from Debian sources): deb-src entries, then the
# builds, cached where tests/run.sh's build directory expects them.  The
# tests prepare them on first use too; this does it up front (~2 minutes).
# --no-variants: only what building and profiling need (the README's quick start).
[ "${1:-}" = --no-variants ] && exit 0
# tests/output/pprof.sh: `go tool pprof` reads the pprof output.
pprof_pkgs="golang-go"
missing=""
for p in $pprof_pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing
fi
sh "$top/tests/variants/prepare.sh" --sources
LJSNAP_VARIANTS_DIR=${LJSNAP_VARIANTS_DIR:-${LJSNAP_BUILD_DIR:-$top/build-tests}/variants} \
	sh "$top/tests/variants/prepare.sh" or-deb up-nogc64 or-dualnum up-unknown up-badlstate > /dev/null
