-- Lua called back from C builtins: table.sort comparator, string.gsub
-- callback (as function and as method), and the FFI callback of qsort.
local N = JIT and 30 or 2

local function cmp(a, b)
  if a == 7 then capture("sort-cmp") end
  return a < b
end

local function repl(c)
  if c == "b" then capture("gsub-cb") end
  return c:upper()
end

local function sorter()
  local t = {}
  for i = 1, 16 do t[i] = (i * 7) % 17 end
  table.sort(t, cmp)
  return t
end

for i = 1, N do
  sorter()
  string.gsub("abc", "%w", repl)
  local s = ("abc"):gsub("%w", repl)
  table.sort({ 3, 1, 2 }, function(a, b) capture("sort-anon") return a < b end)
end

-- FFI callback from C (qsort): a CONT frame with LJ_CONT_FFI_CALLBACK that
-- consumes one C frame.  Calling back from JIT-compiled FFI calls is not
-- allowed, so the caller is kept in the interpreter.
local ffi = require("ffi")
ffi.cdef [[
void qsort(void *base, size_t n, size_t size, int (*cmp)(const int *, const int *));
]]
local cb = ffi.cast("int (*)(const int *, const int *)", function(a, b)
  if a[0] == 5 or b[0] == 5 then capture("ffi-cb") end
  return a[0] - b[0]
end)
local function ffisort()
  local arr = ffi.new("int[4]", { 4, 5, 1, 3 })
  ffi.C.qsort(arr, 4, 4, cb)
  return arr[0]
end
jit.off(ffisort)
for i = 1, 2 do
  ffisort()
end
cb:free()
-- SPDX-License-Identifier: GPL-2.0-or-later
