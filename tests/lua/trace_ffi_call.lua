-- SPDX-License-Identifier: GPL-2.0-or-later
-- Workload for tests/e2e/trace_ffi_call.sh (issue 10 item 3): outer()'s hot
-- loop calls clear(), which the JIT inlines into outer's trace and which
-- calls ffi.C.memset on 1 MiB.  memset is the only C function the loop
-- calls and clear the only function that calls it, so by the script's
-- structure every sample inside memset is outer -> clear -> memset, and
-- nearly all of outer's time (one byte load and an add per 1 MiB cleared)
-- is spent inside clear.
-- usage: luajit [-joff] trace_ffi_call.lua SECONDS
local ffi = require("ffi")
ffi.cdef[[void *memset(void *s, int c, size_t n);]]
local seconds = tonumber(arg and arg[1]) or 3
local N = 1024 * 1024
local buf = ffi.new("uint8_t[?]", N)

local function clear(b, n)
  ffi.C.memset(b, 0, n)
end

local function outer(iters)
  local s = 0
  for i = 1, iters do
    clear(buf, N)
    s = s + buf[i % N]
  end
  return s
end

local t0 = os.clock()
while os.clock() - t0 < seconds do
  outer(1000)
end
