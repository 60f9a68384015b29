-- A C builtin calling back into Lua, two coroutines deep, for the
-- stitched-stack test (tests/e2e/stitch_builtin.sh).
-- usage: luajit [-joff] stitch_builtin.lua SECONDS
--
--   main chunk -> coroutine.resume -> outer (coroutine 1)
--              -> coroutine.resume -> inner (coroutine 2)
--              -> string.gsub (C: lj_cf_string_gsub) -> cb (Lua, through lua_call,
--                 which /usr/bin/luajit's amalgamated build inlines)
--
-- cb spins, so almost all the time is spent there; the CPU time of the
-- string.gsub calls (os.clock) is printed at the end ("CPU g", and "CPU
-- all" for the whole loop).  The first call of cb also calls
-- os.getenv("LJSNAP_STITCH_PROBE"), so that a debugger stopped in getenv
-- sees the native stack cb runs on.  Prints "FN name linedefined" for the
-- Lua functions, and at the end "NAME fn name" with the name LuaJIT itself
-- infers for each function's frame (debug.getinfo "n"; "?" when it has
-- none, as for a function called from C).
local seconds = tonumber(arg and arg[1]) or 3
local SPIN = 20000		-- cb iterations per match
local text = "alpha beta gamma delta"
local names = {}
local probed = false
local clock = os.clock
local cpu_gsub = 0

-- Remember LuaJIT's name for the calling frame (once per function).
local function name_me(fn)
  if not names[fn] then names[fn] = debug.getinfo(2, "n").name or "?" end
end

-- The gsub callback: spins in Lua.
local function cb(w)
  name_me("cb")
  if not probed then
    probed = true
    os.getenv("LJSNAP_STITCH_PROBE")
  end
  local s = 0
  for i = 1, SPIN do s = (s * 31 + i) % 65521 end
  return w .. (s % 2)
end

-- Coroutine 2: string.gsub with a Lua callback, then yield.
local function inner()
  name_me("inner")
  while true do
    local t0 = clock()
    local r = string.gsub(text, "%a+", cb)
    cpu_gsub = cpu_gsub + (clock() - t0)
    coroutine.yield(r)
  end
end

-- Coroutine 1: resumes coroutine 2, then yields.
local function outer()
  name_me("outer")
  local co2 = coroutine.create(inner)
  while true do
    local ok, r = coroutine.resume(co2)
    if not ok then error(r) end
    coroutine.yield(r)
  end
end

for _, p in ipairs({ { "cb", cb }, { "inner", inner }, { "outer", outer } }) do
  print("FN " .. p[1] .. " " .. debug.getinfo(p[2], "S").linedefined)
end
io.stdout:flush()

local co1 = coroutine.create(outer)
local t0, rounds = clock(), 0
while clock() - t0 < seconds do
  local ok, r = coroutine.resume(co1)
  if not ok then error(r) end
  rounds = rounds + 1
end
print(string.format("CPU g %.4f", cpu_gsub))
print(string.format("CPU all %.4f", clock() - t0))
for _, k in ipairs({ "cb", "inner", "outer" }) do
  print("NAME " .. k .. " " .. (names[k] or "?"))
end
print("ROUNDS " .. rounds)
-- SPDX-License-Identifier: GPL-2.0-or-later
