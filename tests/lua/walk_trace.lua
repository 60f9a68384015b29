-- FFI calls from a hot loop: with the JIT on they run from compiled trace
-- code (vmstate = trace number, g->jit_base valid, L->base stale), which is
-- the walker's trace path.  ffi_capture() samples and walks inside the FFI
-- call; capture_check() on the same line compares that walk with the
-- traceback taken right after.  Each loop sits on one line so the trace's
-- start PC, the FFI call and the check share it.
local ffi = require("ffi")
local ffi_capture = ffi.cast("void (*)(void)", FFI_CAPTURE)
local N = JIT and 300 or 3

local function hot(n)
  for i = 1, n do ffi_capture(); capture_check("ffi-loop") end
  return n
end

function outer(n)
  local r = hot(n)
  return r
end

local function deeper(n)
  local t = { f = outer }
  local r = t.f(n)
  return r
end

outer(N)
deeper(N)
for i = 1, N do ffi_capture(); capture_check("main-loop") end
-- SPDX-License-Identifier: GPL-2.0-or-later
