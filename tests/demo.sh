#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Profile the bundled example workload (tests/lua/example.lua) with a built
# ljsnap: record it, print a text report, and write folded stacks to
# example.folded (for flamegraph.pl, inferno-flamegraph or speedscope) and
# an interactive flame graph to example.html (open it in a browser).
# Run as root from the top of a built tree.
set -e
cd "$(dirname "$0")/.."
./ljsnap record -F 499 -o example.ljsnap -- luajit tests/lua/example.lua 5
./ljsnap report -f text example.ljsnap
./ljsnap report -f folded -o example.folded example.ljsnap
echo "folded stacks written to $(pwd)/example.folded ($(wc -l < example.folded) distinct stacks)"
./ljsnap report -o example.html example.ljsnap
echo "open example.html in a browser"
