#!/bin/sh
# E2E: the names of builtin (fast) functions in Lua stacks, checked against
# the native symbols the report finds right under them: a builtin frame
# "os.clock" must be immediately followed by the C function lj_cf_os_clock.
# tests/lua/build_chain.lua calls os.clock() in its loop; recorded on builds
# that keep their symbols: upstream non-GC64 (source build), OpenResty
# luajit2 built with OpenResty's -DLUAJIT_NUMMODE=2
# -DLUAJIT_ENABLE_LUA52COMPAT, and Tarantool 2.6.
# Expected to fail (XFAIL_TESTS) while the walker's ffid -> name tables do
# not follow LUA52COMPAT (which renumbers the fast functions) and
# Tarantool's own library set: os.clock shows as "os.time" and
# "builtin#122" there.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/variants/lib.sh"
need_bpf
need_prog tarantool tarantool
NG=$(variant up-nogc64) || exit 1
DN=$(variant or-dualnum) || exit 1

# ffcheck NAME: builtin frames directly above an lj_cf_* symbol must name it
ffcheck() {
	awk '{ line = $0; n = $NF; sub(/ [0-9]+$/, "", line); k = split(line, f, ";")
	       for (i = 1; i < k; i++) {
		# a builtin frame: "os.clock", "print", "builtin#122" (not a native symbol)
		if (f[i + 1] !~ /^lj_cf_/ || f[i] ~ /^lj_/ ||
		    f[i] !~ /^(([a-z][a-z0-9_]*\.)?[a-z_][a-z0-9_]*|builtin#[0-9]+)$/) continue
		want = f[i]; gsub(/\./, "_", want); want = "lj_cf_" want
		if (want == f[i + 1]) ok += n
		else { bad += n; what[f[i] " above " f[i + 1]] += n }
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
	note "ff-$t: builtin frames vs the C function under them: $r"
	ok=$(echo "$r" | awk '{ print $2 + 0 }'); bad=$(echo "$r" | awk '{ print $4 + 0 }')
	assert_ge "$((ok + bad))" 1 "ff-$t: no builtin frame above a symbolized lj_cf_ function"
	[ "$ok" -ge 1 ] && [ "$bad" = 0 ] || { echo "FAIL: ff-$t: builtin names differ from their C functions" >&2; nfail=$((nfail + 1)); }
done
[ "$nfail" = 0 ] || exit 1
exit 0
