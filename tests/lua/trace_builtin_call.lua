-- SPDX-License-Identifier: GPL-2.0-or-later
-- Workload for tests/e2e/trace_builtin_call.sh (issue 10 item 3): outer()'s
-- hot loop calls find(), which calls string.find on a 200 KB string, and
-- cat(), which calls table.concat on 2,000 strings; the JIT inlines both
-- into outer's trace, where the builtins become calls without side effects
-- (IR CALLN lj_str_find, CALLL lj_buf_puttab) that no snapshot marks.  By
-- the script's structure only find calls string.find and only cat calls
-- table.concat, so every sample inside lj_str_find is outer -> find and
-- every one inside lj_buf_puttab is outer -> cat.  The arguments change
-- with i, so that neither call is hoisted out of the loop.
-- usage: luajit [-joff] trace_builtin_call.lua SECONDS
local seconds = tonumber(arg and arg[1]) or 3
local big = string.rep("a", 200000) .. "xyz"
local parts = {}
for i = 1, 2000 do parts[i] = "p" .. i end

local function find(s, init)
  local r = string.find(s, "xyz", init, true)
  return r
end

local function cat(t, sep)
  local r = table.concat(t, sep)
  return r
end

local seps = { ",", ";" }

local function outer(iters)
  local n = 0
  for i = 1, iters do
    n = n + find(big, i % 7 + 1)
    n = n + #cat(parts, seps[i % 2 + 1])
  end
  return n
end

local t0 = os.clock()
while os.clock() - t0 < seconds do
  outer(100)
end
