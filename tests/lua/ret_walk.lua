-- Returns and calls in progress in the interpreter, for tests/e2e/walk_return.sh:
-- short ipairs loops (ipairs_aux storing its results over its own frame,
-- ->fff_res2) and a one-line function (BC_RET1 storing its result over the
-- function slot), both with the frame's link already in PC (vm_x64.dasc).
-- usage: luajit -joff ret_walk.lua SECONDS
--   main chunk -> loop -> one / ipairs_aux
local secs = tonumber(arg and arg[1]) or 3
local function one(x) return x end
local function loop(t)
  local s = 0
  for _, v in ipairs(t) do s = s + one(v) end
  return s
end
local t = { 1 }
local acc, t0 = 0, os.clock()
repeat
  for _ = 1, 10000 do acc = acc + loop(t) end
until os.clock() - t0 >= secs
print(acc)
-- SPDX-License-Identifier: GPL-2.0-or-later
