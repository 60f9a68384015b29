#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install everything ljsnap needs to build and to run its whole test suite on
# Debian 12 (as root).  Only Debian's archive is used.
set -e
export DEBIAN_FRONTEND=noninteractive
top=$(cd "$(dirname "$0")/.." && pwd)
pkgs="autoconf automake libtool pkg-config make gcc clang llvm bpftool
      libbpf-dev libelf-dev libdw-dev binutils-dev libmsgpack-dev zlib1g-dev libzstd-dev
      luajit libluajit-5.1-dev tarantool wrk linux-perf procps
      nginx dpkg-dev xz-utils util-linux gdb tmux lua-check lua-busted lua-ldoc lua-yaml"
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
# The consumers of the output format tests (tests/output/): speedscope's
# schema from its npm package, checked with Debian's python3-jsonschema;
# Go's own pprof (golang-go); Debian's chromium driven by playwright-core (the version
# tests/output/html.sh pins) for the html page.  npm packages go into the
# build directory's node/.  Debian's npm only where no npm is installed: a
# Node.js from elsewhere that ships its own npm conflicts with it and must
# not be replaced.  The libFuzzer runtime (clang -fsanitize=fuzzer) for
# tests/fuzz/run.sh.
out_pkgs="python3-jsonschema chromium golang-go libclang-rt-14-dev"
command -v npm >/dev/null 2>&1 || out_pkgs="$out_pkgs npm"
missing=""
for p in $out_pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing
fi
node_dir=${LJSNAP_BUILD_DIR:-$top/build-tests}/node
grep -qs '"version": "1.25.0"' "$node_dir/node_modules/speedscope/package.json" ||
	npm install --no-audit --no-fund --prefix "$node_dir" speedscope@1.25.0 > /dev/null
[ -d "$node_dir/node_modules/playwright-core" ] ||
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --prefix "$node_dir" \
		"$(sed -n 's/^PLAYWRIGHT=//p' "$top/tests/output/html.sh")" > /dev/null
sh "$top/tests/variants/prepare.sh" --sources
LJSNAP_VARIANTS_DIR=${LJSNAP_VARIANTS_DIR:-${LJSNAP_BUILD_DIR:-$top/build-tests}/variants} \
	sh "$top/tests/variants/prepare.sh" or-deb up-nogc64 or-dualnum up-unknown up-badlstate up-amalg \
	or-amalg > /dev/null
