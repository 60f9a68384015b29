-- Vararg functions (FRAME_VARG: the frame is shown once) and select().
local N = JIT and 80 or 3

local function va(...)
  local n = select('#', ...)
  if n >= 3 then capture("va") end
  return ...
end

local function va2(a, ...)
  local r = va(a, ...)
  return r
end

function gva(...)
  local t = { va2(...) }
  return #t
end

local function fixed(a, b, c)
  return va(a, b, c)            -- tail call into a vararg function
end

for i = 1, N do
  va(1, 2, 3)
  va2(1, 2, 3, 4)
  gva(1, 2, 3)
  local x = select(2, va(1, 2, 3))
  fixed(1, 2, 3)
end
-- SPDX-License-Identifier: GPL-2.0-or-later
