-- A fixed amount of CPU work (not time-bound), for side-by-side overhead
-- measurements.  usage: luajit fixed_work.lua [ROUNDS]
local rounds = tonumber(arg and arg[1]) or 200

local function leaf(n)
  local s = 0
  for i = 1, n do s = s + (i * 7) % 13 end
  return s
end
local function mid(n) return leaf(n) + leaf(n) end
local function top(n)
  local t = {}
  for i = 1, 64 do t[i] = tostring(i) end
  return mid(n) + #table.concat(t)
end

local acc = 0
for _ = 1, rounds do
  for _ = 1, 50 do acc = acc + top(20000) end
end
print(acc)
-- SPDX-License-Identifier: GPL-2.0-or-later
