# SPDX-License-Identifier: GPL-2.0-or-later
# dump_lib.sh -- helpers of tests/e2e/dump*.sh (sourced after lib.sh).
# The workload is tests/lua/dump_chain.lua: it writes its own
# debug.traceback() once, then spins in the same call chain.
DUMP_LUA=$top_srcdir/tests/lua/dump_chain.lua

# tb_norm FILE: traceback lines without "stack traceback:", tabs, and the
# current line of Lua frames (the traceback was taken at another line of
# the same functions than the dump's samples)
tb_norm() {
	sed -e '/^stack traceback:$/d' -e 's/^\t//' -e 's/^\([^[].*\):[0-9][0-9]*: in /\1: in /' "$1"
}

# dump_tb NAME PID [OPTION]: one dump of PID, its first thread's traceback
# normalized into NAME.got
dump_tb() {
	local n=$1 pid=$2
	if [ "${3:-}" = --json ]; then
		"$LJSNAP" dump --json "$pid" > "$TMPD/$n.json" || fail "$n: ljsnap dump --json failed"
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
t = [t for t in d["threads"] if t["traceback"]]
print("\n".join(t[0]["traceback"] if t else []))' "$TMPD/$n.json" > "$TMPD/$n.dtb" ||
			fail "$n: --json is not JSON with a traceback"
	else
		"$LJSNAP" dump ${3:-} "$pid" > "$TMPD/$n.dump" 2> "$TMPD/$n.dumperr" ||
			{ cat "$TMPD/$n.dumperr" >&2; fail "$n: ljsnap dump ${3:-} failed"; }
		grep -q '^thread [0-9]* (.*): VM state: ' "$TMPD/$n.dump" ||
			{ cat "$TMPD/$n.dump" >&2; fail "$n: no thread with its VM state"; }
		awk '/^thread / { n++ } n == 1 && /^stack traceback:/ { on = 1; next }
		     on && /^\t/ { print; next } on { exit }' "$TMPD/$n.dump" > "$TMPD/$n.dtb"
	fi
	tb_norm "$TMPD/$n.dtb" > "$TMPD/$n.got"
}

# dump_match NAME PID [OPTION]: the dump shows the chain of NAME.want; the
# process spends ~10% of its time in middle's own loop (then its stack is
# truly one frame shorter) and a little in os.clock: a few tries
dump_match() {
	local i
	for i in 1 2 3 4 5 6; do
		dump_tb "$@"
		cmp -s "$TMPD/$1.want" "$TMPD/$1.got" && return 0
		note "$1${3:+ $3}: try $i showed another stack: $(tr '\n' '|' < "$TMPD/$1.got")"
	done
	diff "$TMPD/$1.want" "$TMPD/$1.got" >&2
	fail "$1${3:+ $3}: the dump's chain is not LuaJIT's traceback"
}

# dump_check NAME PID TBFILE: `ljsnap dump` of PID prints, for one thread,
# the chain of TBFILE (LuaJIT's own traceback); --json says the same;
# --native adds native frames below the Lua ones.
dump_check() {
	local n=$1 pid=$2 tb=$3 t0 t1
	tb_norm "$tb" > "$TMPD/$n.want"
	t0=$(date +%s%N)
	dump_match "$n" "$pid"
	t1=$(date +%s%N)
	note "$n: dump took $(( (t1 - t0) / 1000000 )) ms"
	[ $(( (t1 - t0) / 1000000 )) -lt 10000 ] || fail "$n: the dump did not end within seconds"
	note "$n: $(grep -c . "$TMPD/$n.want") frames as debug.traceback() prints them"
	dump_match "$n" "$pid" --json
	dump_match "$n" "$pid" --native
	awk '/^native and Lua frames/ { on = 1; next } on && /^\t/ { print $1 } on && !/^\t/ { exit }' \
		"$TMPD/$n.dump" > "$TMPD/$n.kinds"
	grep -q '^lua' "$TMPD/$n.kinds" && grep -q '^native' "$TMPD/$n.kinds" ||
		{ cat "$TMPD/$n.dump" >&2; fail "$n: --native does not show Lua and native frames"; }
	# innermost first: no Lua frame below the native frames that called the VM
	awk '/^native/ { nat = 1 } /^lua/ && nat { bad = 1 } END { exit bad }' "$TMPD/$n.kinds" ||
		{ cat "$TMPD/$n.dump" >&2; fail "$n: --native's Lua frames are not above the native ones"; }
}

# start_chain NAME CMD...: run the workload; BG_PID, TB once it is ready
start_chain() {
	local n=$1; shift
	TB=$TMPD/$n.tb
	start_bg "$n" "$@" "$DUMP_LUA" "$TB" 40	# killed when done
	wait_for "$TMPD/$n.bg" '^ready' 10 || { cat "$TMPD/$n.bg" >&2; fail "$n: workload did not start"; }
}
