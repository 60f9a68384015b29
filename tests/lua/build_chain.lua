-- A CPU-bound workload with a known call structure, for the tests that run
-- it on every LuaJIT build (tests/e2e/build_*.sh): luajit, OpenResty's
-- luajit2, a non-GC64 build, tarantool, an embedder.
-- usage: <lua> build_chain.lua SECONDS
--
-- main chunk -> run() -> level1() -> level2() -> leaf(), and nearly all the
-- time is spent in leaf()'s loop (run() also calls os.clock()).  Prints
-- "FN <name> <linedefined>" so the test knows every frame, then "done".
-- Bounded: stops after SECONDS of CPU time (at most 30).
local seconds = math.min(tonumber(arg and arg[1]) or 3, 30)

local function leaf(n)
  local s = 0
  for i = 1, n do s = s + (i * 7) % 13 end
  return s
end

local function level2(n)
  return leaf(n) + 1
end

local function level1(n)
  return level2(n) + 1
end

local function run(sec)
  local t0, acc, rounds = os.clock(), 0, 0
  while os.clock() - t0 < sec do
    acc = acc + level1(20000)
    rounds = rounds + 1
  end
  return acc, rounds
end

for _, p in ipairs({ { "run", run }, { "level1", level1 }, { "level2", level2 }, { "leaf", leaf } }) do
  print("FN " .. p[1] .. " " .. debug.getinfo(p[2], "S").linedefined)
end
io.stdout:flush()
print("done", run(seconds))
io.stdout:flush()
-- SPDX-License-Identifier: GPL-2.0-or-later
