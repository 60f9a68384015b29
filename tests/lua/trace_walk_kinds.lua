-- Frames of every kind LuaJIT inlines into a trace, sampled asynchronously
-- and checked against LuaJIT's own view (tests/lua/trace_check.lua): a
-- vararg function (two frames on the real stack, shown once), an __index
-- metamethod (continuation frame), a function called through pcall (the
-- pcall builtin frame between it and its caller), a tail call, and
-- closures of one prototype called in turn (LuaJIT specializes such calls
-- to the prototype: the snapshot holds no function constant, the walker
-- finds the prototype from the trace's guard).  With the JIT off the
-- scenario only runs.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
capture("start")

local tab, sink = {}, {}
for i = 1, 256 do tab[i] = i * 3 end

local function va(...)
  local a, b = ...
  sink[1] = a
  local w = tab[(a * 7 + b) % 256 + 1]
  sink[2] = w
  return w
end

local mt = {}
mt.__index = function(t, k)
  sink[3] = k
  local w = tab[(k * 5) % 256 + 1]
  sink[4] = w
  return w
end
local proxy = setmetatable({}, mt)

local function guarded(x)
  sink[5] = x
  local w = tab[(x * 3) % 256 + 1]
  sink[6] = w
  return w
end

local function tailee(x)
  sink[7] = x
  local w = tab[(x * 17) % 256 + 1]
  sink[8] = w
  return w
end
local function tailer(x)
  sink[9] = x
  return tailee(x + 1)
end

local function mk(k)
  return function(x, i)
    sink[10] = i
    local w = tab[(i * k) % 256 + 1]
    sink[11] = w
    return x + w
  end
end
local poly = {}
for k = 1, 8 do poly[k] = mk(k) end

local function caller(n)
  local s = 0
  for i = 1, n do
    local _, g = pcall(guarded, i)
    s = (s + va(i, 2) + proxy[i % 200 + 300] + g + tailer(i)) % 1000003
    s = poly[i % 8 + 1](s, i) % 1000003
  end
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
-- (guarded is called by pcall, a builtin: like LuaJIT, no name)
local st = tc.check(async_walk(), { [caller] = "caller", [va] = "va", [mt.__index] = "__index",
                                    [tailer] = "tailer", [tailee] = "tailer" },
                    { va = "caller", __index = "caller", tailer = "caller" },
                    { [debug.getinfo(poly[1], "S").linedefined] = true })
local ab = st.above
io.stderr:write(string.format("trace_walk_kinds: %d samples, %d on trace (%d snapshot, %d call " ..
  "site, %d start fallback; %d at a loop or branch exit; %d in C code under [unknown: call_frames]); above caller: " ..
  "va %d, __index %d, tail-called %d, closure known " ..
  "by its prototype %d; %d guards of %d traces matched their snapshot\n", st.samples,
  st.ontrace, st.snap, st.call, st.fallback, st.exitpos, st.marked, ab.va or 0, ab.__index or 0,
  ab.tailer or 0, st.byproto, st.guards, st.traces))
assert(st.ontrace >= 100, "too few samples on trace: " .. st.ontrace)
assert(st.snap >= 0.9 * st.ontrace, "fewer than 90% of trace samples resolved by snapshot")
assert(st.marked <= 0.1 * st.ontrace, "more than 10% of trace samples with frames unknown at a call")
assert((ab.va or 0) >= 3, "vararg function rarely seen inlined in caller")
assert((ab.__index or 0) >= 3, "__index metamethod rarely seen inlined in caller")
assert(st.byproto >= 3, "closures specialized to their prototype rarely seen inlined")
assert(st.guards >= 50, "too few guards checked against the snapshot search: " .. st.guards)
capture("end")
-- SPDX-License-Identifier: GPL-2.0-or-later
