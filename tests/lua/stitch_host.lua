-- The Lua side of tests/native/lhost.c (run by it, not by luajit): a known
-- native + Lua call structure for the stitched-stack test.
--
--   host_run -> lua_pcall -> entry -> work -> a) c_spin -> spin_inner
--                                          -> b) ffi.C.lhost_ffi_spin
--                                          -> c) c_call_back -> lua_call -> callback_lua
--                                          -> d) table.sort -> (C) -> cmp
--
-- Each work() round runs every branch for a random number of work units
-- (the mean is fixed): a round of fixed length would run in step with the
-- sampling clock, and every sample would then fall at the same few points of
-- the round, over-sampling one branch and under-sampling another.
-- The CPU time of each branch is measured with os.clock() around it and
-- printed at the end ("CPU a 0.812"; "CPU all" for the whole loop), so a
-- test can compare the sample share of a branch with the time the process
-- really spent in it.  Prints "FN name linedefined" for the Lua functions
-- first, and at the end "NAME fn name" with the name LuaJIT itself infers
-- for each function's frame (debug.getinfo "n"; "?" when it has none, as
-- for a function called from C).
local ffi = require("ffi")
ffi.cdef[[void lhost_ffi_spin(long units);]]
local C = ffi.C
local clock = os.clock
local random = math.random

local A_UNITS, B_UNITS = 4, 4		-- mean C work units (lhost.c: 100,000 iterations each)
local C_ITERS = 60000			-- mean callback_lua iterations per round
local D_ITERS = 10000			-- cmp iterations per comparison
local cpu = { a = 0, b = 0, c = 0, d = 0 }
local names = {}

-- Remember LuaJIT's name for the calling frame (once per function).
local function name_me(fn)
  if not names[fn] then names[fn] = debug.getinfo(2, "n").name or "?" end
end

-- Branch c: spins in Lua, called from C (c_call_back) through lua_call.
function callback_lua(units)
  name_me("callback_lua")
  local s = 0
  for i = 1, units do s = (s * 31 + i) % 65521 end
  return s
end

-- Branch d: the comparator table.sort calls back into Lua.
local function cmp(x, y)
  name_me("cmp")
  local s = 0
  for i = 1, D_ITERS do s = (s * 31 + i) % 65521 end
  return x + s * 0 < y
end

-- One round: the four branches, each timed.
function work()
  name_me("work")
  local a, b, c = random(A_UNITS - 2, A_UNITS + 2), random(B_UNITS - 2, B_UNITS + 2),
    random(C_ITERS / 2, C_ITERS * 3 / 2)
  local t0 = clock()
  c_spin(a)
  local t1 = clock()
  C.lhost_ffi_spin(b)
  local t2 = clock()
  c_call_back(c)
  local t3 = clock()
  local t = { 3, 1, 2 }
  table.sort(t, cmp)
  local t4 = clock()
  cpu.a = cpu.a + (t1 - t0)
  cpu.b = cpu.b + (t2 - t1)
  cpu.c = cpu.c + (t3 - t2)
  cpu.d = cpu.d + (t4 - t3)
end

-- Called by the host through lua_pcall: run rounds for `seconds`.
function entry(seconds, mode)
  name_me("entry")
  if mode == "joff" then jit.off() end
  for _, p in ipairs({ { "entry", entry }, { "work", work }, { "callback_lua", callback_lua },
                       { "cmp", cmp } }) do
    print("FN " .. p[1] .. " " .. debug.getinfo(p[2], "S").linedefined)
  end
  io.stdout:flush()
  local t0, rounds = clock(), 0
  while clock() - t0 < seconds do
    work()
    rounds = rounds + 1
  end
  cpu.all = clock() - t0
  for _, k in ipairs({ "a", "b", "c", "d", "all" }) do
    print(string.format("CPU %s %.4f", k, cpu[k]))
  end
  for _, k in ipairs({ "entry", "work", "callback_lua", "cmp" }) do
    print("NAME " .. k .. " " .. (names[k] or "?"))
  end
  print("ROUNDS " .. rounds)
end
-- SPDX-License-Identifier: GPL-2.0-or-later
