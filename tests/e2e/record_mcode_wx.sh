#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: JIT code stays JIT code in --native-only while LuaJIT compiles.
# LuaJIT makes the machine-code area it compiles into writable and not
# executable until the trace is done (lj_mcode.c: MCPROT_GEN, then
# MCPROT_RUN), so a look at /proc/PID/maps taken then lacks an area an
# earlier look had; report used to let the last description of a process
# stand for all its samples, and the frames of trace code in such an area
# printed [unknown]+0xADDRESS (12.8% of the samples of this run).  The
# workload is Debian's luacheck (a linter nobody here wrote) on the Lua
# tree Debian ships, with the JIT on: it compiles traces all the time.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
[ -f /usr/share/lua/5.1/luacheck/main.lua ] || skip "lua-check is not installed (tests/install-deps.sh)"
cat > "$TMPD/lc.lua" <<'LUA'
package.path = "/usr/share/lua/5.1/?.lua;/usr/share/lua/5.1/?/init.lua;" .. package.path
arg = { [0] = "luacheck", "/usr/share/lua/5.1", "--no-cache", "-qq" }
require "luacheck.main"
LUA
"$LJSNAP" record -q -F 999 -o "$TMPD/lc.ljsnap" -- luajit "$TMPD/lc.lua" > /dev/null 2> "$TMPD/rec.err"
grep -v "^ljsnap" "$TMPD/rec.err" | grep -q . && { cat "$TMPD/rec.err" >&2; fail "record failed"; }
"$LJSNAP" report -f folded --native-only -o "$TMPD/n.folded" "$TMPD/lc.ljsnap" 2> /dev/null ||
	fail "report --native-only failed"
tot=$(awk '/^luajit;/ { s += $NF } END { print s + 0 }' "$TMPD/n.folded")
jit=$(awk '/^luajit;.*\[JIT code\]/ { s += $NF } END { print s + 0 }' "$TMPD/n.folded")
unk=$(awk '/^luajit;.*\[unknown\]\+0x/ { s += $NF } END { print s + 0 }' "$TMPD/n.folded")
note "--native-only: $tot luajit samples, $jit through [JIT code], $unk through [unknown]+0x..."
assert_ge "$tot" 200 "too few luajit samples to judge"
assert_ge "$(pct "$jit" "$tot")" 3 "< 3% of the samples pass through [JIT code]"
[ $(( 100 * unk )) -le $(( 4 * tot )) ] ||
	fail "$unk of $tot samples pass through [unknown]+0x...: a machine-code area was lost"
exit 0
