#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: `record --bpf-timing` times the parts of a sample in BPF.
# - kernel: dd copying one byte per system call spends most samples in the
#   kernel.  The BPF count of kernel-mode samples must be the number of
#   samples whose stack has kernel frames in the report, and most of them.
# - lua: a Lua loop has its LuaJIT part timed (g found and validated inside
#   it) and few kernel-mode samples.
# In both, every part is > 0 and all of them together at most bpf_run_ns,
# the kernel's own run time of the programs (kernel.bpf_stats_enabled).
# Without the option every timing counter is 0.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
need_prog dd coreutils

# val NAME FILE: a statistic of `ljsnap info` (lib.sh's value), -1 when missing
val() { v=$(value "$1" "$2"); echo "${v:--1}"; }

run() {	# run CASE [OPTS] -- COMMAND...: record, info, folded
	c=$1; shift
	"$LJSNAP" record -q -F 499 "$@" > "$TMPD/$c.out" 2> "$TMPD/$c.err" ||
		{ cat "$TMPD/$c.err" >&2; fail "$c: ljsnap record failed"; }
	"$LJSNAP" info "$TMPD/$c.ljsnap" > "$TMPD/$c.info" || fail "$c: ljsnap info failed"
	"$LJSNAP" report -f folded "$TMPD/$c.ljsnap" > "$TMPD/$c.folded" 2> "$TMPD/$c.rerr" ||
		{ cat "$TMPD/$c.rerr" >&2; fail "$c: ljsnap report failed"; }
}
# (os.time is time(2) through the vDSO; os.clock would be a system call)
spin='local t, x = os.time(), 0 while os.time() - t < 2 do for i = 1, 1e5 do x = x + i % 7 end end'
run kernel --bpf-timing -o "$TMPD/kernel.ljsnap" -- sh -c "timeout 1.5 dd if=/dev/zero of=/dev/null bs=1 2>/dev/null; true"
run lua --bpf-timing -o "$TMPD/lua.ljsnap" -- luajit -e "$spin"
run off -o "$TMPD/off.ljsnap" -- luajit -e "$spin"

for c in kernel lua; do
	i=$TMPD/$c.info
	s=$(val samples_written "$i") run_ns=$(val bpf_run_ns "$i") ks=$(val bpf_kernel_samples "$i")
	head=$(val bpf_head_ns "$i") us=$(val bpf_ustack_ns "$i") lj=$(val bpf_luajit_ns "$i") g=$(val bpf_luajit_g_ns "$i")
	kf=$(awk '/_\[k\]/ { k += $NF } END { print k + 0 }' "$TMPD/$c.folded")
	note "$c: $s samples, $ks in kernel mode ($kf with kernel frames), run $run_ns ns:" \
	     "head $head, user stack $us, LuaJIT $lj (g $g)"
	assert_ge "$s" 100 "$c: too few samples"
	assert_ge "$head" 1 "$c: head not timed"
	assert_ge "$us" 1 "$c: user stack not timed"
	[ "$run_ns" -gt 0 ] || fail "$c: no bpf_run_ns to compare with"
	[ $((head + us + lj)) -le "$run_ns" ] || fail "$c: the parts ($((head + us + lj)) ns) exceed the run time ($run_ns ns)"
	[ "$ks" = "$kf" ] || fail "$c: $ks kernel-mode samples counted in BPF, $kf with kernel frames in the report"
done
i=$TMPD/kernel.info
[ $(( $(val bpf_kernel_samples "$i") * 2 )) -ge "$(val samples_written "$i")" ] ||
	fail "kernel: fewer than half of dd's samples in kernel mode"
[ "$(val bpf_luajit_ns "$i")" = 0 ] || fail "kernel: dd has a LuaJIT part"
i=$TMPD/lua.info
assert_ge "$(val bpf_luajit_g_ns "$i")" 1 "lua: finding g not timed"
[ "$(val bpf_luajit_g_ns "$i")" -le "$(val bpf_luajit_ns "$i")" ] || fail "lua: finding g took longer than the LuaJIT part"
[ $(( $(val bpf_kernel_samples "$i") * 5 )) -le "$(val samples_written "$i")" ] ||
	fail "lua: more than a fifth of a Lua loop's samples in kernel mode"
for k in bpf_kernel_samples bpf_head_ns bpf_ustack_ns bpf_luajit_ns bpf_luajit_g_ns; do
	[ "$(val $k "$TMPD/off.info")" = 0 ] || fail "without --bpf-timing, $k is $(val $k "$TMPD/off.info")"
done
exit 0
