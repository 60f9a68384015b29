#!/bin/sh
# Install everything ljsnap needs to build and to run its whole test suite on
# Debian 12 (as root).  Only Debian's archive is used.
set -e
export DEBIAN_FRONTEND=noninteractive
pkgs="autoconf automake libtool pkg-config make gcc clang llvm bpftool
      libbpf-dev libelf-dev libdw-dev binutils-dev libmsgpack-dev zlib1g-dev
      luajit libluajit-5.1-dev tarantool wrk linux-perf procps"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	apt-get update -q
	apt-get install -y -q --no-install-recommends $missing
fi
