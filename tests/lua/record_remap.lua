-- Code that only gets mapped while the process runs, for
-- tests/e2e/record_remap.sh (run by tests/e2e/ljdlopen, which dlopen()s
-- LuaJIT itself after a C phase).  usage: record_remap.lua SECONDS
--   phase 1: lua_spin() runs Lua for SECONDS of CPU time
--   phase 2: ffi.load("libz.so.1") (not mapped before), then zlib_spin()
--            calls crc32() over a 256 KiB buffer for SECONDS of CPU time
-- Prints "FN name linedefined" for both functions and "CPU name SECONDS"
-- for the CPU time (os.clock) each phase took.
local ffi = require("ffi")
local seconds = tonumber(arg and arg[1]) or 1
local clock = os.clock

local function lua_spin()
  local t0, s = clock(), 0
  while clock() - t0 < seconds do
    for i = 1, 100000 do s = (s * 31 + i) % 65521 end
  end
  return s
end

local function zlib_spin(z, buf, n)
  local t0, c = clock(), 0
  while clock() - t0 < seconds do c = z.crc32(c, buf, n) end
  return c
end

for _, f in ipairs({ { "lua_spin", lua_spin }, { "zlib_spin", zlib_spin } }) do
  print("FN " .. f[1] .. " " .. debug.getinfo(f[2], "S").linedefined)
end
local t = clock()
lua_spin()
print(string.format("CPU lua_spin %.3f", clock() - t))
ffi.cdef("unsigned long crc32(unsigned long crc, const unsigned char *buf, unsigned int len);")
local z = ffi.load("libz.so.1")
local n = 256 * 1024
local buf = ffi.new("unsigned char[?]", n)
for i = 0, n - 1 do buf[i] = i % 251 end
t = clock()
zlib_spin(z, buf, n)
print(string.format("CPU zlib_spin %.3f", clock() - t))
print("done")
-- SPDX-License-Identifier: GPL-2.0-or-later
