-- SPDX-License-Identifier: GPL-2.0-or-later
-- A workload busy in LuaJIT's own C code, for tests/e2e/names_stripped.sh:
-- string interning (new keys), table resizing (growing arrays and hashes),
-- the GC (collectgarbage("step")), string.format and table.sort.
-- usage: <lua> names_cheavy.lua SECONDS
local secs = tonumber(arg and arg[1]) or 3
local t0 = os.clock()
local rounds, sink = 0, 0
while os.clock() - t0 < secs do
  local t = {}
  for i = 1, 2000 do t[i] = string.format("%d:%s:%5.2f", i, "k" .. i, i / 7) end
  table.sort(t)
  local h = {}
  for i = 1, 2000 do h[t[i] .. "x"] = i end
  sink = sink + #t
  collectgarbage("step", 10)
  rounds = rounds + 1
end
print("ROUNDS " .. rounds .. " " .. sink)
