-- Asynchronous SIGPROF samples inside JIT traces, checked against what
-- LuaJIT itself says about its traces (tests/lua/trace_check.lua: the
-- instructions each trace recorded, its snapshots as jit.util decodes them,
-- the exit stubs its guards jump to).  A hot loop in caller() calls helpers
-- the JIT inlines; inner() is inlined two levels deep.  Every helper stores
-- to a table, so the trace takes snapshots inside them.  With the JIT off
-- the scenario only runs.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
capture("start")

local tab, sink = {}, {}
for i = 1, 256 do tab[i] = i * 3 end

local function inner(v)
  sink[3] = v
  local w = tab[(v * 5) % 256 + 1]
  sink[4] = w
  return w
end

local function helper_a(x)
  local v = tab[x % 256 + 1]
  sink[1] = v
  local w = inner(v)
  sink[2] = w
  return w + v
end

local function helper_b(x)
  local v = tab[(x * 11) % 256 + 1]
  sink[5] = v
  local w = tab[(v * 13) % 256 + 1]
  sink[6] = w
  return v - w
end

local function caller(n)
  local s = 0
  for i = 1, n do s = (s + helper_a(i) + helper_b(i)) % 1000003 end
  return s
end

if not JIT then
  caller(1e5)
  return
end

local tc = dofile(dir .. "trace_check.lua")
tc.record()
async_start()
local t0 = os.clock()
while os.clock() - t0 < 1.0 do caller(1e6) end
local st = tc.check(async_walk(), { [caller] = "caller", [helper_a] = "helper_a",
                                    [helper_b] = "helper_b", [inner] = "inner" },
                    { helper_a = "caller", helper_b = "caller", inner = "helper_a" })
local ab = st.above
io.stderr:write(string.format("trace_walk_inline: %d samples, %d on trace (%d snapshot, %d call " ..
  "site, %d start fallback); helper_a inlined above caller %d, helper_b %d, inner above " ..
  "helper_a %d; %d guards of %d traces matched their snapshot\n", st.samples, st.ontrace,
  st.snap, st.call, st.fallback, ab.helper_a or 0, ab.helper_b or 0, ab.inner or 0, st.guards,
  st.traces))
assert(st.ontrace >= 100, "too few samples on trace: " .. st.ontrace)
assert(st.snap >= 0.9 * st.ontrace, "fewer than 90% of trace samples resolved by snapshot")
assert((ab.helper_a or 0) >= 0.05 * st.ontrace, "helper_a rarely seen inlined in caller")
assert((ab.helper_b or 0) >= 0.05 * st.ontrace, "helper_b rarely seen inlined in caller")
assert((ab.inner or 0) >= 3, "inner rarely seen inlined two levels deep")
assert(st.guards >= 50, "too few guards checked against the snapshot search: " .. st.guards)
capture("end")
-- SPDX-License-Identifier: GPL-2.0-or-later
