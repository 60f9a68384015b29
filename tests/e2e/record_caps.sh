#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: privileges.  As user nobody with no capabilities, `ljsnap record`
# fails with one sentence that names what it needs (CAP_BPF, CAP_PERFMON,
# CAP_SYS_PTRACE), exit status != 0, and writes no file.  As nobody with
# exactly those capabilities (ambient, as `setcap` on the binary would give
# them), it records a luajit workload whose samples unwind to the main
# chunk (>= 90%): the advice in that sentence is enough.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog setpriv util-linux
need_prog luajit luajit
# nobody must be able to run the binary and write the capture
cp "$LJSNAP" "$TMPD/ljsnap" && chmod 755 "$TMPD" "$TMPD/ljsnap"
mkdir "$TMPD/out" && chmod 777 "$TMPD/out"
SCRIPT=$TMPD/spin.lua
cat > "$SCRIPT" <<'LUA'
local function spin(n) local s = 0 for i = 1, n do s = (s + i * 7) % 1000003 end return s end
local t0 = os.clock()
while os.clock() - t0 < 1.5 do spin(100000) end
print("done")
LUA
chmod 644 "$SCRIPT"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# no capabilities
rc=0
as_nobody --inh-caps=-all "$TMPD/ljsnap" record -d 1 -o "$TMPD/out/none.ljsnap" -- true \
	> "$TMPD/none.out" 2> "$TMPD/none.err" || rc=$?
cat "$TMPD/none.err" | sed 's/^/# no caps: /'
[ "$rc" != 0 ] || fail "no caps: record exited 0"
[ "$(grep -c . "$TMPD/none.err")" = 1 ] || fail "no caps: not exactly one line on stderr"
grep -q 'CAP_BPF, CAP_PERFMON' "$TMPD/none.err" && grep -q 'CAP_SYS_PTRACE' "$TMPD/none.err" ||
	fail "no caps: the message does not name the capabilities"
[ ! -e "$TMPD/out/none.ljsnap" ] || fail "no caps: a capture file was written"

# exactly the capabilities the message names
caps=+bpf,+perfmon,+sys_ptrace
as_nobody --inh-caps=$caps --ambient-caps=$caps "$TMPD/ljsnap" record -F 499 \
	-o "$TMPD/out/caps.ljsnap" -- luajit "$SCRIPT" > "$TMPD/caps.out" 2> "$TMPD/caps.err" ||
	{ cat "$TMPD/caps.err" >&2; fail "with $caps: record failed"; }
grep -q '^done' "$TMPD/caps.out" || fail "with $caps: the workload did not run"
"$LJSNAP" report -f folded -o "$TMPD/caps.folded" "$TMPD/out/caps.ljsnap" 2> "$TMPD/caps.rerr" ||
	{ cat "$TMPD/caps.rerr" >&2; fail "report of the capture failed"; }
tot=$(awk '$1 ~ /^luajit/ { s += $NF } END { print s + 0 }' "$TMPD/caps.folded")
main=$(awk -v m=";main $SCRIPT" 'index($0, m) { s += $NF } END { print s + 0 }' "$TMPD/caps.folded")
note "with $caps: $main of $tot luajit samples unwound to the main chunk"
assert_ge "$tot" 300 "with $caps: too few samples"
assert_ge "$(( 100 * main ))" "$(( 90 * tot ))" "with $caps: < 90% of the samples reach the main chunk"
exit 0
