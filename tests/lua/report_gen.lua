-- Prototypes freed by the GC and new ones allocated in their place, for the
-- report tests.  usage: luajit [-joff] report_gen.lua SECONDS
-- Generation K is a chunk "=genK" holding leaf_K(), called by an anonymous
-- function of the same chunk, run for ~50 ms and then collected.  A report
-- that confused a freed prototype with the one now at its address would
-- show a frame of one generation under (or named by) another.
local seconds = tonumber(arg and arg[1]) or 3
local template = [[
local function leaf_%d(n)
  local s = 0
  for k = 1, n do s = s + (k * 7) %% 13 end
  return s
end
return function(n) return leaf_%d(n) + %d end
]]

local t0, gens, acc = os.clock(), 0, 0
while os.clock() - t0 < seconds do
  gens = gens + 1
  local f = assert(loadstring(string.format(template, gens, gens, gens), "=gen" .. gens))()
  local t1 = os.clock()
  while os.clock() - t1 < 0.05 do acc = acc + f(20000) end
  f = nil
  collectgarbage()
  collectgarbage()
end
print("GENERATIONS " .. gens)
print("done", acc)
-- SPDX-License-Identifier: GPL-2.0-or-later
