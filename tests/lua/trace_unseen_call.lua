-- SPDX-License-Identifier: GPL-2.0-or-later
-- Workload for tests/e2e/trace_unseen_call.sh (issue 10 item 3): two hot
-- loops call table.concat on 2,000 strings, one through cat(), a Lua
-- function the JIT inlines into the loop's trace, the other directly.  The
-- builtin becomes a call without side effects (IR CALLL lj_buf_puttab)
-- with no snapshot inside cat, so the snapshots around the call have the
-- same frames in both traces.  By the script's structure every sample
-- inside lj_buf_puttab is via_cat -> cat or direct.
-- usage: luajit [-joff] trace_unseen_call.lua SECONDS
local seconds = tonumber(arg and arg[1]) or 3
local parts = {}
for i = 1, 2000 do parts[i] = "p" .. i end
local seps = { ",", ";" }

local function cat(t, sep)
  local r = table.concat(t, sep)
  return r
end

local function via_cat(iters)
  local n = 0
  for i = 1, iters do
    n = n + #cat(parts, seps[i % 2 + 1])
  end
  return n
end

local function direct(iters)
  local n = 0
  for i = 1, iters do
    n = n + #table.concat(parts, seps[i % 2 + 1])
  end
  return n
end

local t0 = os.clock()
while os.clock() - t0 < seconds do
  via_cat(100)
  direct(100)
end
print("DONE")
