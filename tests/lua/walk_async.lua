-- Asynchronous SIGPROF samples of running Lua, in the interpreter (JIT off:
-- BASE/PC from rdx/rbx) or in a trace (JIT on: g->jit_base).  async_stop()
-- checks every sample against the declared stack, innermost first (suffixes
-- of traceback lines; the top frame is matched by name only, as a sample can
-- land mid-call).  Call-site lines come from debug.getinfo on the same line.
local function leaf(n)
  local x = 0
  for i = 1, n do x = (x * 3 + i) % 1000003 end
  return x
end

local function mid(n)
  local r = leaf(n); L_MID = debug.getinfo(1, "l").currentline
  return r
end

function outer(n)
  local r = mid(n); L_OUTER = debug.getinfo(1, "l").currentline
  return r
end

async_start()
outer(JIT and 6e7 or 3e7); L_MAIN = debug.getinfo(1, "l").currentline
local n = async_stop({
  ": in function 'leaf'",
  "walk_async.lua:" .. L_MID .. ": in function 'mid'",
  "walk_async.lua:" .. L_OUTER .. ": in function 'outer'",
  "walk_async.lua:" .. L_MAIN .. ": in main chunk",
})
assert(n > 20, "too few async samples checked: " .. n)

-- A loop that calls a Lua function every iteration: samples land in
-- BC_CALL / BC_RET* too, where BASE and PC are switching.
local function step(x, i)
  return (x * 3 + i) % 1000003
end

local function caller(n)
  local x = 0
  for i = 1, n do x = step(x, i) end; L_CALLER = debug.getinfo(1, "l").currentline
  return x
end

async_start()
caller(JIT and 6e7 or 1e7); L_MAIN = debug.getinfo(1, "l").currentline
n = async_stop({
  ": in function 'step'",
  "walk_async.lua:" .. L_CALLER .. ": in function 'caller'",
  "walk_async.lua:" .. L_MAIN .. ": in main chunk",
})
assert(n > 20, "too few async samples checked: " .. n)
capture("after-async")
-- SPDX-License-Identifier: GPL-2.0-or-later
