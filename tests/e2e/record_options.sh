#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: record's target options and report's filters, against known pids.
# Three luajit processes run spin functions named after them (a_spin,
# b_spin, c_spin; each calls os.clock, a syscall, so some samples carry
# kernel frames).
#   record -p A,B   samples of A and B, each under its own function, none
#                   of C
#   record -a       samples of A, B and C (and others)
#   report --tid A  only A's stacks (single-threaded: tid = pid), as many
#                   samples as A has in the capture
#   --no-kernel     the same samples, no "_[k]" frame, where the default
#                   report has some
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/variants/lib.sh"	# start_bg, wait_for
need_bpf
need_prog luajit luajit
# Each workload calls os.clock() (a clock_gettime system call for the
# process CPU clock) every 100 iterations, so that ~20% of its samples are in
# the kernel: --no-kernel below has kernel frames to take away.
for k in a b c; do
	cat > "$TMPD/$k.lua" <<LUA
local function ${k}_spin(t) local s = 0 while os.clock() < t do for i = 1, 100 do s = (s + i) % 7919 end end return s end
print("up") io.stdout:flush()
${k}_spin(8)
LUA
	start_bg "$k" luajit "$TMPD/$k.lua"
	eval "P_$k=\$BG_PID"
	wait_for "$TMPD/$k.bg" '^up' 10 || fail "workload $k did not start"
done
note "pids: a $P_a, b $P_b, c $P_c"

# Counts depend on how much CPU a busy machine leaves the workloads: the
# checks are on presence and shares (each named process has at least half
# its fair share of the samples of the processes named), never on counts.
# fair NAME N TOTAL K: N is at least half of TOTAL / K, and not 0
fair() {
	[ "$2" -gt 0 ] || fail "$1: no samples"
	[ $(( 2 * $4 * $2 )) -ge "$3" ] || fail "$1: $2 of $3 samples, less than half of a fair share (1/$4)"
}

# samples per pid in a capture, from the capture itself
pid_samples() { "$LJSNAP" info "$1" | awk -v p="$2" '$1 == "pid" && $2 == p && $NF == "samples" { print $(NF - 1) }'; }

# -p A,B
"$LJSNAP" record -q -F 199 -d 2 -p "$P_a,$P_b" -o "$TMPD/p.ljsnap" 2> "$TMPD/p.err" ||
	{ cat "$TMPD/p.err" >&2; fail "record -p failed"; }
"$LJSNAP" info "$TMPD/p.ljsnap" > "$TMPD/p.info"
for k in a b c; do eval "n_$k=\$(pid_samples \"$TMPD/p.ljsnap\" \$P_$k)"; done
note "-p a,b: samples a ${n_a:-0}, b ${n_b:-0}, c ${n_c:-0}"
fair "-p: a" "${n_a:-0}" $(( ${n_a:-0} + ${n_b:-0} )) 2
fair "-p: b" "${n_b:-0}" $(( ${n_a:-0} + ${n_b:-0} )) 2
[ -z "${n_c:-}" ] || [ "${n_c:-0}" = 0 ] || fail "-p: samples of c, which was not named"
for k in a b; do
	eval "p=\$P_$k"
	"$LJSNAP" report -f folded --pid "$p" -o "$TMPD/p.$k.folded" "$TMPD/p.ljsnap" 2>/dev/null ||
		fail "report --pid $p failed"
	good=$(awk -v f="${k}_spin $TMPD/$k.lua:1" 'index($0, f) { s += $NF } END { print s + 0 }' "$TMPD/p.$k.folded")
	tot=$(awk '{ s += $NF } END { print s + 0 }' "$TMPD/p.$k.folded")
	note "-p: $k: $good of $tot samples under ${k}_spin"
	assert_ge "$(( 100 * good ))" "$(( 90 * tot ))" "-p: $k: < 90% of its samples under ${k}_spin"
done

# -a
"$LJSNAP" record -q -F 99 -d 2 -a -o "$TMPD/a.ljsnap" 2> "$TMPD/a.err" ||
	{ cat "$TMPD/a.err" >&2; fail "record -a failed"; }
sum=0
for k in a b c; do
	eval "p=\$P_$k"
	n=$(pid_samples "$TMPD/a.ljsnap" "$p")
	eval "a_$k=${n:-0}"
	sum=$(( sum + ${n:-0} ))
	note "-a: samples of $k: ${n:-0}"
done
for k in a b c; do eval "fair \"-a: $k\" \$a_$k $sum 3"; done

# report --tid
"$LJSNAP" report -f folded --tid "$P_a" -o "$TMPD/tid.folded" "$TMPD/p.ljsnap" 2>/dev/null ||
	fail "report --tid failed"
tot=$(awk '{ s += $NF } END { print s + 0 }' "$TMPD/tid.folded")
[ "$tot" = "$n_a" ] || fail "--tid $P_a: $tot samples, the capture has $n_a for that thread"
grep -q "b_spin" "$TMPD/tid.folded" && fail "--tid $P_a: stacks of b"

# --no-kernel
"$LJSNAP" report -f folded -o "$TMPD/k.folded" "$TMPD/p.ljsnap" 2>/dev/null || fail "report failed"
"$LJSNAP" report -f folded --no-kernel -o "$TMPD/nok.folded" "$TMPD/p.ljsnap" 2>/dev/null ||
	fail "report --no-kernel failed"
kern=$(awk '/_\[k\]/ { s += $NF } END { print s + 0 }' "$TMPD/k.folded")
t1=$(awk '{ s += $NF } END { print s + 0 }' "$TMPD/k.folded")
t2=$(awk '{ s += $NF } END { print s + 0 }' "$TMPD/nok.folded")
note "--no-kernel: $kern of $t1 samples have kernel frames by default"
assert_ge "$kern" 1 "no sample with kernel frames: --no-kernel tested nothing"
# the text report's top lists mark kernel functions as the stacks do: every
# kernel function of the stacks is listed with its "_[k]", none without
"$LJSNAP" report -f text --top 100000 "$TMPD/p.ljsnap" > "$TMPD/k.txt" 2>/dev/null || fail "report -f text failed"
tr ';' '\n' < "$TMPD/k.folded" | sed 's/ [0-9]*$//' | grep '_\[k\]$' | sort -u > "$TMPD/kfn"
sed -n '/^top functions by total/,/^$/p' "$TMPD/k.txt" | awk 'NR > 2 && NF { print $NF }' | sort -u > "$TMPD/top"
missing=$(comm -23 "$TMPD/kfn" "$TMPD/top" | head -3)
bare=$(sed 's/_\[k\]$//' "$TMPD/kfn" | comm -12 - "$TMPD/top" | head -3)
[ -z "$missing" ] || fail "kernel functions missing from the top list as NAME_[k]: $missing"
[ -z "$bare" ] || fail "kernel functions in the top list without their _[k]: $bare"
grep -q '_\[k\]' "$TMPD/nok.folded" && fail "--no-kernel: kernel frames left"
[ "$t1" = "$t2" ] || fail "--no-kernel: $t2 samples instead of $t1"
exit 0
