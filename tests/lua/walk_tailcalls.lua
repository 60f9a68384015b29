-- Tail calls: LuaJIT keeps no frame for the tail-calling function, so the
-- callee is named after the slot its replaced caller was called through.
local N = JIT and 80 or 3

local function leaf(x)
  capture("tail-leaf")
  return x
end

local function mid(x)
  return leaf(x)                 -- tail call
end

function top(x)
  return mid(x)                  -- tail call
end

local function loop(n, acc)
  if n == 0 then
    capture("tail-loop")
    return acc
  end
  return loop(n - 1, acc + 1)    -- self tail recursion
end

local obj = { method = function(self, x) return leaf(x) end }

for i = 1, N do
  local a = top(i)
  local b = loop(50, 0)
  local c = obj:method(i)
end
-- SPDX-License-Identifier: GPL-2.0-or-later
