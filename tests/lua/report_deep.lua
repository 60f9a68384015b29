-- A 300-deep recursion that does its work at the bottom, for the report
-- tests.  usage: luajit [-joff] report_deep.lua SECONDS
-- rec(DEPTH - 1) .. rec(0): every sample taken in the work loop has exactly
-- DEPTH frames of rec() between the main chunk and the loop.  Prints
-- "FN rec <linedefined>" and "DEPTH <frames>".
local seconds = tonumber(arg and arg[1]) or 3
local DEPTH = 300

local function rec(n)
  if n == 0 then
    local s = 0
    for i = 1, 2000000 do s = s + (i * 7) % 13 end
    return s
  end
  local r = rec(n - 1)	-- not a tail call: every level keeps its frame
  return r + 1
end

print("FN rec " .. debug.getinfo(rec, "S").linedefined)
print("DEPTH " .. DEPTH)
io.stdout:flush()

local t0, acc = os.clock(), 0
while os.clock() - t0 < seconds do
  acc = acc + rec(DEPTH - 1)
end
print("done", acc)
-- SPDX-License-Identifier: GPL-2.0-or-later
