-- SPDX-License-Identifier: GPL-2.0-or-later
-- Workload for tests/e2e/trace_exit.sh: a hot loop whose trace takes a side
-- exit every third iteration (x is a string there, a number elsewhere), so
-- that the trace exit handler and lj_trace_exit (lj_snap_restore under
-- lj_vm_cpcall) run often; hotexit is set out of reach so that the exit is
-- never compiled into a side trace and stays an exit.
-- usage: luajit trace_exit.lua SECONDS
jit.opt.start("hotexit=1000000", "hotloop=10")
local seconds = tonumber(arg and arg[1]) or 3
local clock = os.clock

local function work(n)
  local x, acc = 0, 0
  for i = 1, n do
    if i % 3 == 0 then x = "s" else x = 1 end
    if type(x) == "string" then acc = acc + 2 else acc = acc + x end
  end
  return acc
end

local t0, s = clock(), 0
while clock() - t0 < seconds do
  for _ = 1, 200 do
    s = s + work(50)
  end
end
print(s)
