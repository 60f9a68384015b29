#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: `ljsnap top` driven in tmux (an 80x24 terminal, read back with
# capture-pane) on a workload with a known call chain
# (tests/lua/dump_chain.lua: main chunk -> outer -> middle -> spin, nearly
# all the time in spin's loop, some in middle's own loop):
#   - within 3 s the screen shows spin as the hottest function by self share
#     (> 50%), middle and outer with a total share >= spin's self share;
#   - the screen refreshes: the sample count since the start goes up;
#   - keys: l shows Lua frames only (no native row), t sorts by total,
#     p pauses (the screen stays the same) and resumes, q quits with status
#     0 and the terminal settings as they were (stty -g);
#   - SIGTERM and Ctrl-C end it with the terminal restored, and a target that exits
#     is reported ("the targets exited"), not crashed on;
#   - off a terminal (--once -d 2) it prints the same rows as plain text,
#     and -o FILE writes a capture whose report has the same hot function;
#     two processes of the workload each have their line, >= 20% each.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../variants/lib.sh"
. "$(dirname "$0")/dump_lib.sh"
need_bpf
need_prog tmux tmux
need_prog luajit luajit
TS=ljsnap-top-$$
trap 'tmux -L "$TS" kill-server 2>/dev/null; cleanup_all' EXIT

start_chain w luajit
W=$BG_PID

# start_top NAME ARGS...: ljsnap top in a new tmux session; $NAME.rc gets
# its status, $NAME.stty the terminal settings before and after (the status
# is written last, so that a test that waits for it finds both)
start_top() {
	local n=$1; shift
	tmux -L "$TS" new-session -d -s "$n" -x 80 -y 24 \
		"stty -g > $TMPD/$n.stty; $LJSNAP top $*; r=\$?; stty -g >> $TMPD/$n.stty; echo \$r > $TMPD/$n.rc; sleep 60"
}
screen() { tmux -L "$TS" capture-pane -p -t "$1"; }
# row FILE NAME: the line of function NAME (the first)
row() { grep -E "^ +[0-9.]+ +[0-9.]+ +\| +[0-9.]+ +[0-9.]+ +[a-z?]+ +$2 " "$1" | head -1; }
since() { sed -n 's/.*since the start: \([0-9]*\) samples.*/\1/p' "$1"; }

start_top t1 -p "$W"
t0=$(date +%s%N)
ok=
while [ $(( $(date +%s%N) - t0 )) -lt 3000000000 ]; do
	sleep 0.1
	screen t1 > "$TMPD/s1"
	r=$(awk '/KIND FUNCTION/ { getline; print; exit }' "$TMPD/s1")
	case $r in *" lua  spin "*dump_chain.lua:*) ok=1; break ;; esac
done
[ -n "$ok" ] || { cat "$TMPD/s1" >&2; fail "top did not show spin as the hottest function within 3 s"; }
sleep 1.2
screen t1 > "$TMPD/s1"
[ "$(wc -l < "$TMPD/s1")" -le 24 ] || fail "the screen is taller than 24 lines"
awk 'length($0) > 80 { exit 1 }' "$TMPD/s1" || fail "a line is wider than 80 columns"
spin_self=$(row "$TMPD/s1" spin | awk '{ print int($1) }')
[ -n "$spin_self" ] && [ "$spin_self" -gt 50 ] || { cat "$TMPD/s1" >&2; fail "spin's self share is not above 50%"; }
for f in middle outer; do
	tot=$(row "$TMPD/s1" $f | awk '{ print int($2) }')
	[ -n "$tot" ] && [ "$tot" -ge "$spin_self" ] || { cat "$TMPD/s1" >&2; fail "$f's total share is below spin's self share"; }
done
grep -q "^ *$W luajit .*upstream GC64 in " "$TMPD/s1" || { cat "$TMPD/s1" >&2; fail "the process line is missing"; }
grep -qE '^VM: interp [0-9.]+% trace [0-9.]+%' "$TMPD/s1" || fail "no VM state line"
note "top: $(awk '/KIND FUNCTION/ { getline; print; exit }' "$TMPD/s1")"
n1=$(since "$TMPD/s1")
sleep 1.5
screen t1 > "$TMPD/s2"
n2=$(since "$TMPD/s2")
[ "$n2" -gt "$n1" ] || { cat "$TMPD/s2" >&2; fail "the screen did not refresh ($n1 -> $n2 samples)"; }
note "refreshed: $n1 -> $n2 samples since the start"

tmux -L "$TS" send-keys -t t1 l
sleep 0.3
screen t1 > "$TMPD/s3"
grep -q '\[Lua only\]' "$TMPD/s3" || { cat "$TMPD/s3" >&2; fail "l did not switch to Lua frames only"; }
grep -qE '^ +[0-9.]+ +[0-9.]+ +\| +[0-9.]+ +[0-9.]+ +nat ' "$TMPD/s3" && { cat "$TMPD/s3" >&2; fail "Lua only shows native rows"; }
tmux -L "$TS" send-keys -t t1 t
sleep 0.3
screen t1 > "$TMPD/s4"
grep -q '\[sort: total\]' "$TMPD/s4" || fail "t did not sort by total"
tmux -L "$TS" send-keys -t t1 p
sleep 0.3
screen t1 > "$TMPD/s5"
grep -q 'PAUSED' "$TMPD/s5" || fail "p did not pause"
sleep 1.5
screen t1 > "$TMPD/s6"
cmp -s "$TMPD/s5" "$TMPD/s6" || { diff "$TMPD/s5" "$TMPD/s6" >&2; fail "the screen changed while paused"; }
tmux -L "$TS" send-keys -t t1 p
sleep 1.5
screen t1 > "$TMPD/s7"
[ "$(since "$TMPD/s7")" -gt "$(since "$TMPD/s6")" ] || fail "the screen did not refresh after the pause"
tmux -L "$TS" send-keys -t t1 q
wait_for "$TMPD/t1.rc" . 5 || fail "q did not quit"
[ "$(cat "$TMPD/t1.rc")" = 0 ] || fail "q: exit status $(cat "$TMPD/t1.rc")"
[ "$(sed -n 1p "$TMPD/t1.stty")" = "$(sed -n 2p "$TMPD/t1.stty")" ] || fail "q: the terminal settings were not restored"

# SIGTERM
start_top t2 -p "$W"
sleep 1.5
tp=$(pgrep -f "^$LJSNAP top -p $W\$" | head -1)
[ -n "$tp" ] || fail "no ljsnap top process to signal"
kill -TERM "$tp"
wait_for "$TMPD/t2.rc" . 5 || fail "SIGTERM did not end top"
[ "$(sed -n 1p "$TMPD/t2.stty")" = "$(sed -n 2p "$TMPD/t2.stty")" ] || fail "SIGTERM: the terminal settings were not restored"
kill -0 "$tp" 2>/dev/null && fail "top still runs after SIGTERM"

# Ctrl-C
start_top t4 -p "$W"
sleep 1.5
tmux -L "$TS" send-keys -t t4 C-c
wait_for "$TMPD/t4.rc" . 5 || fail "Ctrl-C did not end top"
[ "$(sed -n 1p "$TMPD/t4.stty")" = "$(sed -n 2p "$TMPD/t4.stty")" ] || fail "Ctrl-C: the terminal settings were not restored"

# a target that exits in the middle
start_bg short luajit "$DUMP_LUA" "$TMPD/short.tb" 2
wait_for "$TMPD/short.bg" '^ready' 10 || fail "short workload did not start"
start_top t3 -p "$BG_PID"
wait_for "$TMPD/t3.rc" . 15 || fail "top did not end when its target exited"
screen t3 > "$TMPD/s8"
grep -q 'ljsnap top: the targets exited' "$TMPD/s8" || { cat "$TMPD/s8" >&2; fail "the target's exit was not reported"; }
[ "$(cat "$TMPD/t3.rc")" = 0 ] || fail "target exit: status $(cat "$TMPD/t3.rc")"

# plain text, and a capture written at the same time; two processes of the
# same workload: each has its line, with about half the samples
start_chain w2 luajit
W2=$BG_PID
"$LJSNAP" top --once -d 2 -p "$W,$W2" -o "$TMPD/top.ljsnap" > "$TMPD/plain" 2> "$TMPD/plain.err" ||
	{ cat "$TMPD/plain.err" >&2; fail "top --once failed"; }
grep -q "$(printf '\033')" "$TMPD/plain" && fail "plain text holds escapes"
r=$(awk '/KIND FUNCTION/ { getline; print; exit }' "$TMPD/plain")
case $r in *" spin "*dump_chain.lua*) ;; *) cat "$TMPD/plain" >&2; fail "plain text: spin is not the hottest";; esac
for p in $W $W2; do
	sh=$(awk -v p="$p" '$1 == p && $2 == "luajit" { sub(/%/, "", $4); print int($4) }' "$TMPD/plain")
	[ -n "$sh" ] && [ "$sh" -ge 20 ] || { cat "$TMPD/plain" >&2; fail "plain text: pid $p has no line or less than 20% of the samples"; }
	note "top -p $W,$W2: pid $p has $sh% of the samples"
done
"$LJSNAP" report -f folded --lua-only "$TMPD/top.ljsnap" > "$TMPD/top.folded" 2>/dev/null ||
	fail "the capture top wrote does not report"
tot=$(awk '{ s += $NF } END { print s + 0 }' "$TMPD/top.folded")
sp=$(awk '$0 ~ /;spin [^;]*dump_chain.lua:[0-9]+(_\[j\])? [0-9]+$/ { s += $NF } END { print s + 0 }' "$TMPD/top.folded")
assert_ge "$(( 100 * sp ))" "$(( 50 * tot ))" "the capture of top -o: spin has less than half the samples"
note "top -o: spin self in $sp of $tot samples of the capture"
exit 0
