-- Functions defined in several ways and called so that the call site names them
-- otherwise, for tests/e2e/report_defnames.sh.
-- usage: luajit [-joff] report_defnames.lua SECONDS
-- Prints "FN <definition name> <callsite name> <linedefined>" for each.
local seconds = tonumber(arg and arg[1]) or 3
local M = {}

local function g(x)		-- a local function, only ever tail-called by f
  local s = 0
  for i = 1, x do s = s + (i * 7) % 13 end
  return s
end

local function f(x)		-- the call site names g "f": g's frame replaces f's
  return g(x)
end

function M.h(x)			-- a field of the module table (call site: "h")
  local s = 0
  for i = 1, x do s = s + (i * 5) % 11 end
  return s
end

function M:m(x)			-- a method (call site: "m")
  local s = 0
  for i = 1, x do s = s + (i * 3) % 7 end
  return s
end

function gfun(x)		-- a global, called through a table slot: the call
  local s = 0			-- site has no name for it
  for i = 1, x do s = s + (i * 11) % 17 end
  return s
end

local handlers = { gfun }

-- A module whose main chunk has returned (and was collected): the parent of
-- L.k is gone, so its name falls back to the call site's ("k").
local lib = loadstring([[
local L = {}
function L.k(x)
  local s = 0
  for i = 1, x do s = s + (i * 13) % 19 end
  return s
end
return L
]], "=defnames_lib")()
collectgarbage()
collectgarbage()

local function line(fn) return debug.getinfo(fn, "S").linedefined end
print("FN g f " .. line(g))
print("FN M.h h " .. line(M.h))
print("FN M:m m " .. line(M.m))
print("FN gfun - " .. line(gfun))
print("FN k k " .. line(lib.k))
io.stdout:flush()

local t0, acc, n = os.clock(), 0, 200000
while os.clock() - t0 < seconds do
  acc = acc + f(n) + M.h(n) + M:m(n) + handlers[1](n) + lib.k(n)
end
print("done", acc)
-- SPDX-License-Identifier: GPL-2.0-or-later
