-- SPDX-License-Identifier: GPL-2.0-or-later
-- Workload for bench/kernel_share.sh: about a tenth of its CPU time in the
-- kernel (64 KiB reads of /dev/zero, open/read/close of /proc/self/stat),
-- the rest in a Lua loop.  usage: luajit kheavy.lua SECONDS
local secs = tonumber(arg and arg[1]) or 2
local t0, n = os.clock(), 0
local z = assert(io.open("/dev/zero", "rb"))
while os.clock() - t0 < secs do
  n = n + #z:read(65536)
  local f = assert(io.open("/proc/self/stat", "rb"))
  n = n + #f:read("*a")
  f:close()
  for i = 1, 20000 do n = (n * 31 + i) % 65521 end
end
print(n)
