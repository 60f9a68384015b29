#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: `ljsnap dump PID` of a process whose VM runs no Lua during the burst:
# blocked in a C function called from Lua (tests/lua/dump_blocked.lua:
# io.open of a FIFO nobody writes, an FFI call to sleep()).  Its Lua stack
# is read from memory, without registers: the dump prints the chain LuaJIT's
# own debug.traceback() printed just before the call (current lines
# stripped, as dump_luajit.sh does), below the C function's frame, marked as
# read from memory, in text and --json.  Debian's luajit (GC64), a non-GC64
# build, tarantool, and a host whose VM runs in a second thread
# (tests/e2e/ljthreads.c: the owning thread is named).  Then a host waiting
# outside Lua after its script returned (tests/e2e/ljembed.c with
# LJEMBED_IDLE): its VM is idle, with no Lua frames.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../variants/lib.sh"
. "$(dirname "$0")/dump_lib.sh"
need_bpf
need_prog luajit luajit
need_prog python3 python3
BLOCKED_LUA=$top_srcdir/tests/lua/dump_blocked.lua

# start_blocked NAME MODE CMD...: run the workload blocked in MODE; BG_PID, TB
start_blocked() {
	local n=$1 mode=$2; shift 2
	TB=$TMPD/$n.tb
	rm -f "$TMPD/$n.fifo"
	mkfifo "$TMPD/$n.fifo" || fail "$n: mkfifo"
	start_bg "$n" "$@" "$BLOCKED_LUA" "$TB" "$mode" "$TMPD/$n.fifo"
	wait_for "$TMPD/$n.bg" '^ready' 10 || { cat "$TMPD/$n.bg" >&2; fail "$n: workload did not start"; }
	sleep 0.2	# from "ready" into the C call
}

# blocked_check NAME PID TBFILE [COMM]: the dump of PID shows, for the
# thread COMM (default: the first one), the C function's frame on top of
# the chain of TBFILE, read from memory; --json says the same
blocked_check() {
	local n=$1 pid=$2 tb=$3 comm=${4:-}
	tb_norm "$tb" > "$TMPD/$n.want"
	"$LJSNAP" dump "$pid" > "$TMPD/$n.dump" 2> "$TMPD/$n.dumperr" ||
		{ cat "$TMPD/$n.dumperr" >&2; fail "$n: ljsnap dump failed"; }
	grep -q "^thread [0-9]* (${comm:-.*}): VM state: C code (not running Lua); read from memory, without registers\$" \
		"$TMPD/$n.dump" || { cat "$TMPD/$n.dump" >&2; fail "$n: no thread read from memory in C code"; }
	grep -q '^pid [0-9]* (.*): .*, 1 VM read from memory$' "$TMPD/$n.dump" ||
		{ cat "$TMPD/$n.dump" >&2; fail "$n: the summary does not count the stack read from memory"; }
	awk -v c="${comm:-}" '/^thread / { sel = !done && (c == "" || index($0, "(" c "):")) }
	     sel && /^stack traceback:/ { on = 1; next }
	     on && /^\t/ { print; next } on { done = 1; on = 0; sel = 0 }' "$TMPD/$n.dump" > "$TMPD/$n.dtb"
	head -n 1 "$TMPD/$n.dtb" | grep -q "^	\[C\]: in function '" ||
		{ cat "$TMPD/$n.dump" >&2; fail "$n: the top frame is not the C function"; }
	sed 1d "$TMPD/$n.dtb" > "$TMPD/$n.dtb1"
	tb_norm "$TMPD/$n.dtb1" > "$TMPD/$n.got"
	cmp -s "$TMPD/$n.want" "$TMPD/$n.got" ||
		{ diff "$TMPD/$n.want" "$TMPD/$n.got" >&2; cat "$TMPD/$n.dump" >&2;
		  fail "$n: the chain read from memory is not LuaJIT's traceback"; }
	note "$n: $(grep -c . "$TMPD/$n.want") frames as debug.traceback() prints them, read from memory"
	"$LJSNAP" dump --json "$pid" > "$TMPD/$n.json" || fail "$n: ljsnap dump --json failed"
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
t = [t for t in d["threads"] if t["from_memory"] and (not sys.argv[2] or t["comm"] == sys.argv[2])]
assert t and t[0]["vm"] == "C code (not running Lua)" and t[0]["complete"], d
print("\n".join(t[0]["traceback"][1:]))' "$TMPD/$n.json" "$comm" > "$TMPD/$n.jtb" ||
		{ cat "$TMPD/$n.json" >&2; fail "$n: --json has no complete thread read from memory"; }
	tb_norm "$TMPD/$n.jtb" | cmp -s "$TMPD/$n.want" - ||
		{ cat "$TMPD/$n.json" >&2; fail "$n: --json's chain is not LuaJIT's traceback"; }
}

for mode in open ffi; do
	start_blocked lj-$mode $mode luajit
	blocked_check lj-$mode "$BG_PID" "$TB" luajit
	kill "$BG_PID"
done
NG=$(variant up-nogc64) || exit 1
start_blocked ng-open open "$NG/luajit"
blocked_check ng-open "$BG_PID" "$TB" luajit
kill "$BG_PID"
if command -v tarantool >/dev/null 2>&1; then
	start_blocked tt-open open tarantool
	blocked_check tt-open "$BG_PID" "$TB"
	kill "$BG_PID"
else
	note "tarantool is not installed: its dump is not checked"
fi
# the VM in a second thread: the dump names that thread
start_blocked th-open open "$top_builddir/tests/e2e/ljthreads"
blocked_check th-open "$BG_PID" "$TB" ljs-lua
kill "$BG_PID"
# a VM not inside Lua (L->cframe NULL): idle, no traceback
start_bg idle env LJEMBED_IDLE=40 "$top_builddir/tests/e2e/ljembed" "$BLOCKED_LUA" /dev/null idle
wait_for "$TMPD/idle.bg" '^idle' 10 || { cat "$TMPD/idle.bg" >&2; fail "idle: the host did not start"; }
"$LJSNAP" dump "$BG_PID" > "$TMPD/idle.dump" || fail "idle: ljsnap dump failed"
grep -qx "thread $BG_PID (ljembed): VM state: idle (not in Lua); read from memory, without registers" \
	"$TMPD/idle.dump" && ! grep -q '^stack traceback:' "$TMPD/idle.dump" ||
	{ cat "$TMPD/idle.dump" >&2; fail "idle: the VM outside Lua is not shown idle"; }
"$LJSNAP" dump --json "$BG_PID" > "$TMPD/idle.json" || fail "idle: ljsnap dump --json failed"
python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["threads"]
assert len(t) == 1 and t[0]["from_memory"] and t[0]["vm"] == "idle (not in Lua)" and not t[0]["traceback"], t' \
	"$TMPD/idle.json" || { cat "$TMPD/idle.json" >&2; fail "idle: --json does not say idle"; }
note "idle: $(sed -n 3p "$TMPD/idle.dump")"
kill "$BG_PID"
exit 0
