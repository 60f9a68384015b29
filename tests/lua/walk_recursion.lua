-- Deep recursion (1,000 Lua frames), plus shallow hot recursion for the JIT.
local N = JIT and 3 or 2

local function rec(n)
  if n == 0 then
    capture("rec-bottom")
    return 0
  end
  local r = rec(n - 1)   -- not a tail call: every level keeps its frame
  return r + 1
end

function fib(n)
  if n < 2 then
    if n == 0 then capture("fib-leaf") end
    return n
  end
  return fib(n - 1) + fib(n - 2)
end

for i = 1, N do
  assert(rec(1000) == 1000)
end
for i = 1, 12 do
  fib(9)
end
capture("main")
-- SPDX-License-Identifier: GPL-2.0-or-later
