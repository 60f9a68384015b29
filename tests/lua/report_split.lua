-- A workload with a known call structure and a known split of the work,
-- for the report tests.
-- usage: luajit [-joff] report_split.lua SECONDS
--
-- The main chunk calls driver() in a loop; each driver() round does 10
-- units of the same loop: 6 in a(), 3 in b(), 1 in c().  So a() holds 60%
-- of the work, b() 30% and c() 10%, whatever the speed of the machine or
-- the JIT.  A unit's length is drawn from a fixed pseudo-random sequence
-- (N/2 to 3N/2 iterations, the same for every function on average), so that
-- a round's length varies: a round lasting a whole number of sampling
-- periods would otherwise put every sample at the same point of it, and
-- the shares off by several points (-joff ran 66% in a() once).  Prints
-- "FN <name> <linedefined>" so the test knows the frames.
local seconds = tonumber(arg and arg[1]) or 3
local N = 20000		-- iterations per unit, on average
local NLEN = 1021	-- unit lengths in the sequence (prime: no round repeats it)

local lens, j = {}, 0
math.randomseed(1)
for k = 1, NLEN do lens[k] = N / 2 + math.random(0, N) end

local function a()
  local s = 0
  for _ = 1, 6 do
    j = j % NLEN + 1
    for i = 1, lens[j] do s = s + (i * 7) % 13 end
  end
  return s
end

local function b()
  local s = 0
  for _ = 1, 3 do
    j = j % NLEN + 1
    for i = 1, lens[j] do s = s + (i * 7) % 13 end
  end
  return s
end

local function c()
  local s = 0
  for _ = 1, 1 do
    j = j % NLEN + 1
    for i = 1, lens[j] do s = s + (i * 7) % 13 end
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
