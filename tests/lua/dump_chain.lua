-- SPDX-License-Identifier: GPL-2.0-or-later
-- A workload for tests/e2e/dump*.sh and top*.sh: a known call chain whose
-- own debug.traceback() is the ground truth for `ljsnap dump`.
-- usage: <lua> dump_chain.lua TRACEBACK_FILE SECONDS
-- (in nginx, content_by_lua_file: the file from $LJSNAP_DUMP_TB, 10 s)
--
-- main chunk -> outer() -> middle() -> spin(): spin() writes
-- debug.traceback() to TRACEBACK_FILE once, prints "ready", then loops in
-- the same chain for SECONDS of CPU time (at most 60).  Nearly all the time
-- is in spin()'s loop, some in middle() (hot_middle's own loop).
local tbfile = arg and arg[1] or os.getenv("LJSNAP_DUMP_TB") or "/dev/null"
local seconds = math.min(tonumber(arg and arg[2]) or 10, 60)
local written = false

local function spin(n)
  if not written then
    local f = assert(io.open(tbfile, "w"))
    f:write(debug.traceback(), "\n")
    f:close()
    written = true
    print("ready")
    io.stdout:flush()
  end
  local s = 0
  for i = 1, n do s = s + (i * 7) % 13 end
  return s
end

local function middle(n)
  local s = 0
  for i = 1, n / 10 do s = s + i % 3 end
  return spin(n) + s
end

local function outer(sec)
  local t0, acc = os.clock(), 0
  while os.clock() - t0 < sec do
    acc = acc + middle(200000)
  end
  return acc
end

print("done", outer(seconds))
