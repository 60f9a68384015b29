-- A workload with a known call structure and a known split of the work,
-- for the report tests.
-- usage: luajit [-joff] report_split.lua SECONDS
--
-- The main chunk calls driver() in a loop; each driver() round does 10
-- units of the same loop: 6 in a(), 3 in b(), 1 in c().  So a() holds 60%
-- of the work, b() 30% and c() 10%, whatever the speed of the machine or
-- the JIT.  Prints "FN <name> <linedefined>" so the test knows the frames.
local seconds = tonumber(arg and arg[1]) or 3
local N = 20000		-- iterations per unit

local function a()
  local s = 0
  for _ = 1, 6 do
    for i = 1, N do s = s + (i * 7) % 13 end
  end
  return s
end

local function b()
  local s = 0
  for _ = 1, 3 do
    for i = 1, N do s = s + (i * 7) % 13 end
  end
  return s
end

local function c()
  local s = 0
  for _ = 1, 1 do
    for i = 1, N do s = s + (i * 7) % 13 end
  end
  return s
end

local function driver()
  return a() + b() + c()
end

for _, p in ipairs({ { "driver", driver }, { "a", a }, { "b", b }, { "c", c } }) do
  print("FN " .. p[1] .. " " .. debug.getinfo(p[2], "S").linedefined)
end
io.stdout:flush()

local t0, acc, rounds = os.clock(), 0, 0
while os.clock() - t0 < seconds do
  acc = acc + driver()
  rounds = rounds + 1
end
print("done", rounds, acc)
-- SPDX-License-Identifier: GPL-2.0-or-later
