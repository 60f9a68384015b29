-- SPDX-License-Identifier: GPL-2.0-or-later
-- Workload for tests/e2e/trace_ffi_call.sh (issue 10 item 3): outer()'s hot
-- loop calls clear(), which calls ffi.C.memset on 1 MiB, then check(),
-- which calls ffi.C.memcmp on 1 MiB and compares its result; the JIT
-- inlines both into outer's trace.  memset and memcmp are the only C
-- functions the loop calls, clear and check the only functions that call
-- them, so by the script's structure every sample inside memset is
-- outer -> clear -> memset and every one inside memcmp is
-- outer -> check -> memcmp; nearly all of outer's time (a byte load and an
-- add per 2 MiB touched) is spent inside clear or check.
-- usage: luajit [-joff] trace_ffi_call.lua SECONDS
local ffi = require("ffi")
ffi.cdef[[
void *memset(void *s, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
]]
local seconds = tonumber(arg and arg[1]) or 3
local N = 1024 * 1024
local buf = ffi.new("uint8_t[?]", N)
local zero = ffi.new("uint8_t[?]", N)
local bad = 0

local function clear(b, n)
  ffi.C.memset(b, 0, n)
end

local function check(a, b, n)
  local r = ffi.C.memcmp(a, b, n)
  if r ~= 0 then bad = bad + 1 end
end

local function outer(iters)
  local s = 0
  for i = 1, iters do
    clear(buf, N)
    check(buf, zero, N)
    s = s + buf[i % N]
  end
  return s
end

local t0 = os.clock()
while os.clock() - t0 < seconds do
  outer(1000)
end
assert(bad == 0)
