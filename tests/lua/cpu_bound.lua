-- A CPU-bound workload with a known call structure, for the capture tests.
-- usage: luajit [-joff] cpu_bound.lua SECONDS
-- Prints "FN <name> <address>" for the functions the test looks for in the
-- captured Lua stack windows, then burns CPU for SECONDS.
local seconds = tonumber(arg and arg[1]) or 3

local function leaf(n)
  local s = 0
  for i = 1, n do s = s + (i * 7) % 13 end
  return s
end

function hot_a(n) return leaf(n) + 1 end
function hot_b(n) return leaf(n) - 1 end

local main = debug.getinfo(1, "f").func
for _, p in ipairs({ { "main", main }, { "hot_a", hot_a }, { "hot_b", hot_b }, { "leaf", leaf } }) do
  print("FN " .. p[1] .. " " .. tostring(p[2]):match("0x%x+"))
end
io.stdout:flush()

local t0, acc = os.clock(), 0
while os.clock() - t0 < seconds do
  for _ = 1, 20 do acc = acc + hot_a(2000) end
  for _ = 1, 10 do acc = acc + hot_b(2000) end
end
print("done", acc)
-- SPDX-License-Identifier: GPL-2.0-or-later
