-- Coroutines nested three deep (resume inside resume inside resume), and
-- coroutine.wrap.  RESUMED_BY[co] = the thread that resumed co (true: main),
-- so the harness can build the ground truth of the whole chain.
RESUMED_BY = setmetatable({}, { __mode = "k" })
local N = JIT and 40 or 3

local function me()
  local co, ismain = coroutine.running()
  if co == nil or ismain then return true end
  return co
end

local function level3(i)
  capture("co-depth3")
  coroutine.yield(i)
  capture("co-depth3-again")
end

local function level2(i)
  capture("co-depth2")
  local co = coroutine.create(level3)
  RESUMED_BY[co] = me()
  assert(coroutine.resume(co, i))
  RESUMED_BY[co] = me()
  assert(coroutine.resume(co))
  return i
end

local function level1(i)
  local co = coroutine.create(level2)
  RESUMED_BY[co] = me()
  local ok, v = coroutine.resume(co, i)
  assert(ok, v)
  return v
end

local function wrapped(i)
  local parent = me()
  local gen = coroutine.wrap(function(a)
    local self = coroutine.running()
    RESUMED_BY[self] = parent
    local inner = coroutine.wrap(function(b)
      RESUMED_BY[coroutine.running()] = self
      capture("wrap-depth2")
      return b
    end)
    local r = inner(a)
    capture("wrap-depth1")
    return r
  end)
  return gen(i)
end

for i = 1, N do
  local co = coroutine.create(level1)
  RESUMED_BY[co] = me()
  local ok, v = coroutine.resume(co, i)
  assert(ok and v == i, v)
  assert(wrapped(i) == i)
end
-- SPDX-License-Identifier: GPL-2.0-or-later
