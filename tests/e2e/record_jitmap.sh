#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: JIT code mapped after the process was first described is still JIT
# code in --native-only.  luajit runs interpreted for 0.6 s (jit.off), so
# the recorder describes it before LuaJIT maps any machine-code area, then
# turns the JIT on and spins in a trace.  The recorder sees the new
# anonymous executable mapping and describes the process again, so report
# names the trace's frames [JIT code] -- not [unknown]+0xADDRESS, a new
# address at every run (issue: "--native-only loses JIT code").
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
cat > "$TMPD/late.lua" <<'LUA'
jit.off()
local t = os.clock()
local function spin(n) local s = 0 for i = 1, n do s = (s + i * 7) % 65521 end return s end
while os.clock() - t < 0.6 do spin(1000) end
jit.on()
jit.flush()
t = os.clock()
local x = 0
while os.clock() - t < 2 do for i = 1, 200000 do x = (x + i * 7) % 65521 end end
print(x)
LUA
"$LJSNAP" record -q -F 499 -o "$TMPD/late.ljsnap" -- luajit "$TMPD/late.lua" > /dev/null 2> "$TMPD/rec.err" ||
	{ cat "$TMPD/rec.err" >&2; fail "record failed"; }
"$LJSNAP" report -f folded --native-only -o "$TMPD/n.folded" "$TMPD/late.ljsnap" 2> /dev/null ||
	fail "report --native-only failed"
tot=$(awk '{ s += $NF } END { print s + 0 }' "$TMPD/n.folded")
jit=$(awk '/;\[JIT code\] [0-9]+$/ { s += $NF } END { print s + 0 }' "$TMPD/n.folded")
unk=$(awk '/;\[unknown\]\+0x[0-9a-f]+ [0-9]+$/ { s += $NF } END { print s + 0 }' "$TMPD/n.folded")
note "--native-only: $tot samples, $jit end in [JIT code], $unk in [unknown]+0x..."
assert_ge "$(pct "$jit" "$tot")" 40 "< 40% of the samples end in [JIT code]"
[ $(( 100 * unk )) -le $(( 5 * tot )) ] || fail "$unk of $tot samples end in [unknown]+0x...: the JIT mapping was not described"
exit 0
