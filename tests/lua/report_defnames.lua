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

-- A module whose main chunk has returned (and was collected): nothing
-- reaches the prototype that defined kk and L.w any more.  kk calls itself,
-- so its own closure holds it as the upvalue "kk"; L.k tail-calls it, so the
-- call site names it "k".  L.w's name can only come from the call site: "w".
local lib = loadstring([[
local L = {}
local function kk(x, d)
  if d > 0 then return kk(x, d - 1) end
  local s = 0
  for i = 1, x do s = s + (i * 13) % 19 end
  return s
end
function L.k(x) return kk(x, 2) end
function L.w(x)
  local s = 0
  for i = 1, x do s = s + (i * 17) % 23 end
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
print("FN kk k " .. line(select(2, debug.getupvalue(lib.k, 1))))
print("FN w w " .. line(lib.w))
io.stdout:flush()

local t0, acc, n = os.clock(), 0, 200000
while os.clock() - t0 < seconds do
  acc = acc + f(n) + M.h(n) + M:m(n) + handlers[1](n) + lib.k(n) + lib.w(n)
end
print("done", acc)
-- SPDX-License-Identifier: GPL-2.0-or-later
