#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Record the golden test's captures (tests/golden/*.ljsnap.gz) and write
# their expected outputs (tests/golden/expect/) with the ljsnap given:
#   tests/golden/make-fixtures.sh LJSNAP VARIANTS_DIR
# Run it only to replace the fixtures on purpose (a change of the capture
# format or of the report's output); tests/golden/golden.sh checks that the
# report of these files stays byte-identical.  Needs root (BPF), luajit,
# nginx and wrk, and the variants of tests/variants/prepare.sh (up-nogc64,
# or-deb).  Every server listens on 127.0.0.1 and every load is bounded.
set -eu
LJSNAP=$(realpath "$1")
VARIANTS=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
M=
trap '[ -z "$M" ] || kill "$M" 2>/dev/null; rm -rf "$tmp"' EXIT
chain=$top/tests/lua/build_chain.lua

rec() {	# name, command...
	name=$1; shift
	"$LJSNAP" record -q -F 97 -o "$tmp/$name.ljsnap" -- "$@" > /dev/null
}
rec luajit-joff luajit -joff "$chain" 1.5
rec luajit-jon luajit "$chain" 1.5
rec nogc64-jon "$VARIANTS/up-nogc64/luajit" "$chain" 1.5

# An nginx master with 4 workers (the Lua module and OpenResty's luajit2),
# recorded for 3 s under two bounded loads: / (Lua) and /re (Lua into PCRE).
OR=$VARIANTS/or-deb/root
P=$tmp/ngx
mkdir -p "$P/logs" "$P/tmp"
PORT=$(( 20000 + ($$ * 7) % 30000 ))
sed -e "s|@ORROOT@|$OR|g" -e "s|@PREFIX@|$P|g" -e "s|@PORT@|$PORT|g" \
	-e "s|@TESTDIR@|$top/tests/nginx|g" "$top/tests/nginx/nginx.conf.in" > "$P/nginx.conf"
LD_LIBRARY_PATH=$OR/usr/lib/x86_64-linux-gnu nginx -p "$P" -c "$P/nginx.conf" > "$P/stdout" 2>&1 &
M=$!
for _ in $(seq 50); do [ "$(pgrep -c -P "$M")" = 4 ] && break; sleep 0.1; done
sleep 0.5
"$LJSNAP" record -q -p "$M" -F 97 -d 3 -o "$tmp/nginx.ljsnap" &
R=$!
sleep 0.5
wrk -t1 -c4 -d1s "http://127.0.0.1:$PORT/" > /dev/null
wrk -t1 -c4 -d1s "http://127.0.0.1:$PORT/re" > /dev/null
wait "$R"
kill "$M"; wait "$M" 2>/dev/null || true; M=

# The fixtures stay format 1 (docs/capture-format.md, section 6): golden.sh
# reads each as it is and rewritten as format 2.
REWRITE=$(dirname "$LJSNAP")/tests/golden/rewrite
for f in "$tmp"/*.ljsnap; do
	"$REWRITE" --format 1 "$f" "$f.v1" > /dev/null
	gzip -9 -n -c "$f.v1" > "$here/$(basename "$f").gz"
done
LJSNAP=$LJSNAP sh "$here/golden.sh" --write
