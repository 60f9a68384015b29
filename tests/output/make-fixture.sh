#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Record tests/output/weird_name.ljsnap.gz, the capture the output format
# tests use besides tests/golden's: Debian's luajit (JIT off) running
# weird_name.lua, one second of CPU on each of two threads, in a function
# whose chunk is named with a quote, a backslash, a control byte and a byte
# that is not UTF-8.  Needs root (BPF) and luajit:
#   tests/output/make-fixture.sh LJSNAP
# Run it only to replace the fixture on purpose.
set -eu
LJSNAP=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# From here, so that the main chunk's name is the same on every machine.
cd "$here"
"$LJSNAP" record -q -F 97 -o "$tmp/weird_name.ljsnap" -- luajit -joff weird_name.lua 1 > /dev/null
gzip -9 -n -c "$tmp/weird_name.ljsnap" > "$here/weird_name.ljsnap.gz"
