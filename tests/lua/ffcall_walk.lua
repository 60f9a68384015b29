-- A fast function calling C, for tests/e2e/walk_ffcall.sh: ipairs over a
-- table whose integer keys all live in its hash part (table.new(0, n), then
-- t[1..n]), so that ipairs_aux calls lj_tab_getinth for every element, with
-- its next index already stored over its own function slot and BASE kept in
-- rbp (vm_x64.dasc, ->ff_ipairs_aux).
-- usage: luajit -joff ffcall_walk.lua SECONDS
--   main chunk -> loop -> ipairs_aux -> lj_tab_getinth
local tnew = require("table.new")
local secs = tonumber(arg and arg[1]) or 3
local function hashed(n)
  local t = tnew(0, n)
  for i = 1, n do t[i] = i end
  return t
end
local function loop(t)
  local s = 0
  for _, v in ipairs(t) do s = s + v end
  return s
end
local t = hashed(3000)
local acc, t0 = 0, os.clock()
repeat
  for _ = 1, 100 do acc = acc + loop(t) end
until os.clock() - t0 >= secs
print(acc)
-- SPDX-License-Identifier: GPL-2.0-or-later
