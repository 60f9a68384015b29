#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: when detection fails, nothing is guessed.  tests/variants/prepare.sh
# builds Debian's upstream source with lua_State grown to 104 bytes
# ("up-badlstate"), a size no LuaJIT fork has: the table layout is wrong
# and the live calibration cannot find GG_State (GG_OFS(g) is none of
# 64/80/96/112).  Recording a workload (tests/lua/build_chain.lua) there:
#   - the recorder says the Lua frames will be missing and names doctor;
#   - no stack holds a Lua frame of the workload (nothing guessed), and
#     >= 90% of the samples are counted with a reason: BPF's g_reg_invalid
#     counter and the report's [unknown: no_g] frames;
# and `ljsnap doctor` says the live calibration failed and that no sample
# found a valid global_State.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/variants/lib.sh"
need_bpf
V=$(variant up-badlstate) || exit 1
LJ=$V/luajit

record_chain bad 2 "$LJ"
grep -q "Lua frames will be missing (run 'ljsnap doctor $CPID')" "$TMPD/bad.err" ||
	{ cat "$TMPD/bad.err" >&2; fail "bad: the recorder did not say that Lua frames will be missing"; }
total=$(awk '{ s += $NF } END { print s + 0 }' "$FOLDED")
assert_ge "$total" 300 "bad: too few samples"
guessed=$(grep -c "$CHAIN_LUA" "$FOLDED")
[ "$guessed" = 0 ] || { grep "$CHAIN_LUA" "$FOLDED" | head >&2; fail "bad: Lua frames were guessed"; }
# the samples in Lua are counted with their reason: an [unknown: no_g] frame
nog=$(awk '/;\[unknown: no_g\]/ { s += $NF } END { print s + 0 }' "$FOLDED")
assert_ge "$(( 100 * ${nog:-0} ))" "$(( 90 * total ))" "bad: < 90% of the samples counted as [unknown: no_g]"
"$LJSNAP" info "$CAP" > "$TMPD/bad.info"
assert_ge "$(( 100 * $(value g_reg_invalid "$TMPD/bad.info") ))" "$(( 90 * total ))" \
	"bad: BPF's g_reg_invalid counter does not count the samples"
note "bad: $total samples, $nog counted [unknown: no_g], g_reg_invalid $(value g_reg_invalid "$TMPD/bad.info"), no_g $(value no_g "$TMPD/bad.info")"

start_bg bad-doc "$LJ" "$CHAIN_LUA" 6
wait_for "$TMPD/bad-doc.bg" '^FN leaf' 10 || fail "bad: workload did not start"
"$LJSNAP" doctor "$BG_PID" 2 > "$TMPD/bad.doctor" 2>&1 || { cat "$TMPD/bad.doctor" >&2; fail "bad: doctor failed"; }
grep -E '^  (LuaJIT|live check|live calibration|result):' "$TMPD/bad.doctor" | sed 's/^/# bad: doctor:/'
grep -qE '^  LuaJIT: +upstream, GC64 ' "$TMPD/bad.doctor" || fail "bad: doctor does not name the build"
grep -qE '^  live calibration: failed from DISPATCH 0x[0-9a-f]+' "$TMPD/bad.doctor" ||
	{ cat "$TMPD/bad.doctor" >&2; fail "bad: doctor's live calibration did not fail"; }
grep -q '^  result:      no sample found a valid global_State and the live calibration failed' "$TMPD/bad.doctor" ||
	{ cat "$TMPD/bad.doctor" >&2; fail "bad: doctor's result is not the honest failure"; }
exit 0
