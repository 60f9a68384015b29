-- Workload for tests/e2e/trace_flush.sh: short phases, each running a
-- fresh pair of functions generated with load() under the chunk name
-- "=phaseNNN": runner (line 10) loops and calls F (line 2), which the JIT
-- inlines into runner's trace.  After each phase jit.flush() frees every
-- trace, so the next phase's traces reuse the same trace numbers and, most
-- of the time, the same GCtrace and machine-code addresses.  A sample whose
-- trace data were read from the wrong phase shows runner of one phase with
-- an F of another: the test counts those (there must be none).
-- usage: luajit trace_flush.lua SECONDS [PHASE_SECONDS]
local seconds = tonumber(arg and arg[1]) or 3
local phase_s = tonumber(arg and arg[2]) or 0.03
local sink, tab = {}, {}
for i = 1, 64 do tab[i] = i / 64 end

local src = [[
local sink, tab, k = ...
local function F(x, i)
  sink[2] = i
  x = x + tab[(i * k) % 64 + 1] * 1e-9
  x = (x * 0.9999 + 0.25) * 1.0001 - 0.125
  x = (x * 0.9998 + 0.5) * 1.0001 - 0.125
  x = (x * 0.9997 + 0.75) * 1.0001 - 0.125
  return x
end
local function runner(n, x)
  for i = 1, n do
    sink[1] = i
    x = x + tab[(i + k) % 64 + 1] * 1e-9
    x = (x * 0.9999 + 0.25) * 1.0001 - 0.125
    x = F(x, i)
  end
  return x
end
return runner
]]

local t0, x, p = os.clock(), 1, 0
while os.clock() - t0 < seconds do
  p = p + 1
  local runner = assert(load(src, string.format("=phase%03d", p)))(sink, tab, p % 7 + 1)
  local tp = os.clock()
  while os.clock() - tp < phase_s do x = runner(2000, x) end
  jit.flush()
end
print(string.format("phases %d x %.3f", p, x))
-- SPDX-License-Identifier: GPL-2.0-or-later
