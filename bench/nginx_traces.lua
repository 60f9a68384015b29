-- nginx_traces.lua -- init_worker of bench/record.sh's nginx workload: give
-- the worker N live JIT traces (N distinct functions made with load(), each
-- with a loop compiled into a trace of its own, as tests/lua/trace_count.lua
-- does), under OpenResty-like JIT limits, before it serves requests.
local M = {}

function M.make(n)
  jit.opt.start("maxtrace=12000", "maxmcode=131072", "sizemcode=1024", "hotloop=8",
                "hotexit=60000")
  local src = [[
local k = ...
return function(n, x)
  for i = 1, n do x = x * 0.999 + (i + k) * 1e-6 end
  return x
end
]]
  local x = 1
  M.fns = {}
  for k = 1, n do M.fns[k] = assert(load(src, "=t" .. k))(k) end
  for k = 1, n do x = M.fns[k](100, x) end
  return x
end

-- live traces of this worker
function M.count()
  local jutil, c = require("jit.util"), 0
  for i = 1, 20000 do if jutil.traceinfo(i) then c = c + 1 end end
  return c
end

return M
-- SPDX-License-Identifier: GPL-2.0-or-later
