#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: `ljsnap dump PID` on known call chains (tests/lua/dump_chain.lua:
# main chunk -> outer -> middle -> spin), against the traceback LuaJIT's own
# debug.traceback() printed in the same chain: Debian's luajit with the JIT
# on and off, and tarantool (its LuaJIT fork linked in).  The dump, its
# --json and its --native agree with it (dump_lib.sh).  Then the errors:
# no such pid, a process without LuaJIT, no privileges, and a target that
# exits during the dump, each one line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../variants/lib.sh"
. "$(dirname "$0")/dump_lib.sh"
need_bpf
need_prog luajit luajit
need_prog python3 python3

for jit in jon joff; do
	flag=; [ $jit = joff ] && flag=-joff
	start_chain lj-$jit luajit $flag
	dump_check lj-$jit "$BG_PID" "$TB"
	kill "$BG_PID"
done
if command -v tarantool >/dev/null 2>&1; then
	start_chain tt tarantool
	dump_check tt "$BG_PID" "$TB"
	kill "$BG_PID"
else
	note "tarantool is not installed: its dump is not checked"
fi

# errors: one line on stderr, a non-zero status
"$LJSNAP" dump 4194303 > /dev/null 2> "$TMPD/e1" && fail "a missing pid did not fail"
grep -qx 'ljsnap dump: no process 4194303' "$TMPD/e1" || { cat "$TMPD/e1" >&2; fail "missing pid: wrong message"; }
sleep 20 &
S=$!
PIDS_TO_KILL="$PIDS_TO_KILL $S"
# until the forked shell has exec'd sleep (at most 2 s): its name is in the message
i=0
while [ "$(cat "/proc/$S/comm" 2>/dev/null)" != sleep ] && [ $i -lt 200 ]; do sleep 0.01; i=$((i + 1)); done
"$LJSNAP" dump "$S" > /dev/null 2> "$TMPD/e2" && fail "a pid without LuaJIT did not fail"
grep -q "^ljsnap dump: pid $S (sleep): no LuaJIT in it" "$TMPD/e2" || { cat "$TMPD/e2" >&2; fail "no LuaJIT: wrong message"; }
if command -v setpriv >/dev/null 2>&1; then
	start_chain lj-priv luajit
	setpriv --reuid=65534 --regid=65534 --clear-groups "$LJSNAP" dump "$BG_PID" > /dev/null 2> "$TMPD/e3" &&
		fail "an unprivileged dump did not fail"
	grep -q "^ljsnap dump: pid $BG_PID: permission denied (run as root" "$TMPD/e3" ||
		{ cat "$TMPD/e3" >&2; fail "no privileges: wrong message"; }
	kill "$BG_PID"
fi
# a target that exits during the dump (blocked in sleep: no sample ends
# the burst early) is reported; a few tries, the machine may be slow
ok=
for try in 1 2 3 4; do
	luajit -e "os.execute('sleep 0.4')" > /dev/null 2>&1 &
	X=$!
	"$LJSNAP" dump "$X" > "$TMPD/e4.out" 2> "$TMPD/e4" && { wait "$X"; continue; }
	wait "$X"
	grep -qx "ljsnap dump: pid $X (luajit) exited during the dump" "$TMPD/e4" && { ok=1; break; }
	note "exit during the dump, try $try: $(cat "$TMPD/e4")"
done
[ -n "$ok" ] || { cat "$TMPD/e4" >&2; fail "a target exiting during the dump was not reported"; }
for f in e1 e2 e3 e4; do
	[ ! -f "$TMPD/$f" ] || [ "$(wc -l < "$TMPD/$f")" = 1 ] || { cat "$TMPD/$f" >&2; fail "$f: not one line"; }
done
exit 0
