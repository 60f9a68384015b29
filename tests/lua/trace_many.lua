-- Workload for tests/e2e/trace_many.sh: 40 distinct functions generated
-- from source strings with load(), chunk names "=gen01" .. "=gen40", each
-- with a hot loop compiled into a trace of its own (and side traces).  All
-- loop bodies are the same kind of work; a function's time share is
-- set by how many iterations it runs per round: gen01..gen37 1 unit each,
-- gen38 10, gen39 20, gen40 30 (97 units).  Each generated function calls
-- a generated helper inlined into its loop, "helper" of the same chunk.
-- usage: luajit [-joff] trace_many.lua SECONDS
local seconds = tonumber(arg and arg[1]) or 3
local sink, tab = {}, {}
for i = 1, 64 do tab[i] = i / 64 end

local src = [[
local sink, tab, k = ...
local function helper(x, i)
  sink[2] = i
  x = x + tab[(i * k) % 64 + 1] * 1e-9
  x = (x * 0.9999 + 0.25) * 1.0001 - 0.125
  x = (x * 0.9998 + 0.5) * 1.0001 - 0.125
  x = (x * 0.9997 + 0.75) * 1.0001 - 0.125
  return x
end
return function(n, x)
  for i = 1, n do
    sink[1] = i
    x = x + tab[(i + k) % 64 + 1] * 1e-9
    x = (x * 0.9999 + 0.25) * 1.0001 - 0.125
    x = (x * 0.9998 + 0.5) * 1.0001 - 0.125
    x = (x * 0.9997 + 0.75) * 1.0001 - 0.125
    x = helper(x, i)
  end
  return x
end
]]

local fns, units = {}, {}
for k = 1, 40 do
  fns[k] = assert(load(src, string.format("=gen%02d", k)))(sink, tab, k)
  units[k] = k == 38 and 10 or k == 39 and 20 or k == 40 and 30 or 1
end

local t0, x = os.clock(), 1
while os.clock() - t0 < seconds do
  for k = 1, 40 do x = fns[k](units[k] * 300, x) end
end
print(string.format("x %.3f", x))
-- SPDX-License-Identifier: GPL-2.0-or-later
