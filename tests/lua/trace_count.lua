-- Workload for bench/traces.sh: NTRACES distinct functions generated with
-- load(), each with a hot loop compiled into a trace of its own, then run
-- in rotation for SECONDS (the same total work per round whatever NTRACES),
-- so samples land in every trace.  OpenResty-like JIT limits let up to
-- 12,000 traces live at once; side exits are never made hot (hotexit), so
-- the trace count stays what it was once compiled.  Prints "ready N traces".
-- usage: luajit trace_count.lua NTRACES SECONDS
local ntr = tonumber(arg and arg[1]) or 10
local seconds = tonumber(arg and arg[2]) or 5
jit.opt.start("maxtrace=12000", "maxmcode=131072", "sizemcode=1024", "hotloop=8", "hotexit=60000")
local jutil = require("jit.util")

local src = [[
local k = ...
return function(n, x)
  for i = 1, n do x = x * 0.999 + (i + k) * 1e-6 end
  return x
end
]]
local fns, x = {}, 1
for k = 1, ntr do fns[k] = assert(load(src, "=t" .. k))(k) end
for k = 1, ntr do x = fns[k](100, x) end	-- compile each loop
local n = 0
for i = 1, 20000 do if jutil.traceinfo(i) then n = n + 1 end end
io.write(string.format("ready %d traces\n", n))
io.flush()

local per = math.max(100, math.floor(2e6 / ntr))
local t0 = os.clock()
while os.clock() - t0 < seconds do
  for k = 1, ntr do x = fns[k](per, x) end
end
n = 0
for i = 1, 20000 do if jutil.traceinfo(i) then n = n + 1 end end
io.write(string.format("end %d traces x %.3f\n", n, x))
-- SPDX-License-Identifier: GPL-2.0-or-later
