-- SPDX-License-Identifier: GPL-2.0-or-later
-- Workload for tests/e2e/trace_two_calls.sh (issue 10): a loop whose trace
-- makes two side-effecting builtin calls, io's f:write and f:flush (IR
-- CALLS fwrite, CALLS fflush).  In the loop body LuaJIT keeps no snapshot
-- between them (lj_opt_loop.c), and a CALLS names its function by a call id,
-- not an address, so the sample's call target cannot tell the two apart.
-- In alike() both calls are on one line of one function; in apart() they
-- are on two lines.  By the script's structure every sample inside fwrite
-- or fflush is the loop's function calling it, on its line.  The count
-- after the calls keeps each call's own snapshot (its table load is a
-- guard, so lj_snap_add does not merge the snapshot into a later one).
-- usage: luajit trace_two_calls.lua alike|apart SECONDS
local mode, seconds = arg[1], tonumber(arg[2]) or 3
local f = assert(io.open("/dev/null", "w"))
local s = string.rep("x", 256)
local stats = { n = 0 }

local function alike(n)
  for _ = 1, n do
    f:write(s); f:flush()
    stats.n = stats.n + 1
  end
end

local function apart(n)
  for _ = 1, n do
    f:write(s)
    f:flush()
    stats.n = stats.n + 1
  end
end

local run = mode == "apart" and apart or alike
local t0 = os.clock()
while os.clock() - t0 < seconds do
  run(2000)
end
f:close()
