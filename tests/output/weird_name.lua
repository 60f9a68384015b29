-- SPDX-License-Identifier: GPL-2.0-or-later
-- The workload of tests/output/weird_name.ljsnap.gz (see make-fixture.sh):
-- a function in a chunk named with a quote, a backslash, a control byte and
-- a byte that is not UTF-8, so that the outputs must escape its frame names;
-- and the same work on a second thread, so that the capture has two threads.
-- usage: luajit weird_name.lua SECONDS (CPU time on each thread, at most 5)
local ffi = require("ffi")
ffi.cdef [[
typedef unsigned long ljsnap_pthread_t;
int pthread_create(ljsnap_pthread_t *t, const void *attr, void *(*fn)(void *), void *arg);
int pthread_join(ljsnap_pthread_t t, void **ret);
]]
local seconds = math.min(tonumber(arg and arg[1]) or 1, 5)

local spin = assert(load([[
local function spin(n)
  local s = 0
  for i = 1, n do s = s + (i * 7) % 13 end
  return s
end
return spin
]], "=we\"ird\\name\1\255"))()

local function burn()
  local t0 = os.clock()
  while os.clock() - t0 < seconds do spin(20000) end
end

burn()
-- The second thread runs Lua through a callback while this one waits in
-- pthread_join: the VM is entered from C as by any callback, never by two
-- threads at once.
local cb = ffi.cast("void *(*)(void *)", function() burn() return nil end)
local t = ffi.new("ljsnap_pthread_t[1]")
assert(ffi.C.pthread_create(t, nil, cb, nil) == 0)
assert(ffi.C.pthread_join(t[0], nil) == 0)
cb:free()
print("done")
