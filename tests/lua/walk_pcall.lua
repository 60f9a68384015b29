-- pcall / xpcall, error handlers (capture inside the handler), nested pcalls.
local N = JIT and 60 or 4

function handler(msg)
  capture("handler")
  return msg
end

local function boom()
  error("boom")                 -- handler runs above the 'error' builtin
end

local function arith()
  local t = nil
  return t + 1                  -- runtime error inside Lua: handler above a Lua frame
end

local function inner(x)
  capture("in-pcall")
  return x
end

local function nested()
  local ok = pcall(inner, 1)
  assert(ok)
  return xpcall(boom, function(m) capture("nested-handler"); return m end)
end

for i = 1, N do
  assert(pcall(inner, i))
  assert(not xpcall(boom, handler))
  assert(not xpcall(arith, handler))
  assert(pcall(pcall, inner, i))             -- pcall called by the pcall builtin
  assert(pcall(nested))
  local ok = pcall(function()
    local ok2 = xpcall(arith, function(m)
      local t = { capture = capture }
      t.capture("handler-field")             -- called as a field of a local table
      return m
    end)
    return ok2
  end)
  assert(ok)
end
-- SPDX-License-Identifier: GPL-2.0-or-later
