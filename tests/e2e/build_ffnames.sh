#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: the names of builtin (fast) functions in Lua stacks.
# tests/lua/build_chain.lua's run() calls exactly one builtin, os.clock(), so
# every builtin frame right above run()'s frame must read "os.clock".
# Recorded on builds whose ffid numbering differs from Debian's luajit:
# OpenResty luajit2 built with OpenResty's -DLUAJIT_NUMMODE=2
# -DLUAJIT_ENABLE_LUA52COMPAT (LUA52COMPAT adds and renumbers fast
# functions) and Tarantool 2.6 (its own library set), plus upstream
# non-GC64 for reference.  report names a builtin after the symbol of its C
# function when the build kept its symbols (all three do); a stripped build
# with a renumbered ffid table is not covered.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/variants/lib.sh"
need_bpf
need_prog tarantool tarantool
NG=$(variant up-nogc64) || exit 1
DN=$(variant or-dualnum) || exit 1

# ffcheck FOLDED: builtin frames directly above run()'s frame must be os.clock
ffcheck() {
	awk '{ line = $0; n = $NF; sub(/ [0-9]+$/, "", line); k = split(line, f, ";")
	       for (i = 1; i < k; i++) {
		if (f[i] !~ /^run .*build_chain\.lua:[0-9]+(_\[j\])?$/) continue
		b = f[i + 1]; sub(/_\[[ij]\]$/, "", b)
		# a builtin frame: "os.clock", "print", "builtin#122" (not a native symbol)
		if (b ~ /^lj_/ || b !~ /^(([a-z][a-z0-9_]*\.)?[a-z_][a-z0-9_]*|builtin#[0-9]+)$/) continue
		if (b == "os.clock") ok += n
		else { bad += n; what[b] += n }
	       } }
	     END { printf "ok %d bad %d", ok, bad; for (w in what) printf "; %s (%d)", w, what[w]; print "" }' "$1"
}
nfail=0
for t in nogc64 dualnum tt; do
	case $t in
	nogc64)	cmd=$NG/luajit ;;
	dualnum) cmd=$DN/luajit ;;
	tt)	cmd=$(command -v tarantool) ;;
	esac
	record_chain ff-$t 2 "$cmd"
	r=$(ffcheck "$FOLDED")
	note "ff-$t: builtin frames called by run(): $r"
	ok=$(echo "$r" | awk '{ print $2 + 0 }'); bad=$(echo "$r" | awk '{ print $4 + 0 }')
	assert_ge "$((ok + bad))" 1 "ff-$t: no builtin frame called by run() in any sample"
	[ "$ok" -ge 1 ] && [ "$bad" = 0 ] || { echo "FAIL: ff-$t: run() calls only os.clock, but other builtin names appear" >&2; nfail=$((nfail + 1)); }
done
[ "$nfail" = 0 ] || exit 1
exit 0
