-- Metamethods: __index, __newindex, __add, __concat, __lt, __le, __eq,
-- __unm, __call (direct and tail-called), __tostring, __gc.
local N = JIT and 60 or 3
local mt = {}
mt.__index = function(t, k) capture("index") return 1 end
mt.__newindex = function(t, k, v) capture("newindex") end
mt.__add = function(a, b) capture("add") return 2 end
mt.__concat = function(a, b) capture("concat") return "c" end
mt.__lt = function(a, b) capture("lt") return true end
mt.__le = function(a, b) capture("le") return true end
mt.__eq = function(a, b) capture("eq") return true end
mt.__unm = function(a) capture("unm") return 3 end
mt.__call = function(self, x) capture("call") return x end
mt.__tostring = function(self) capture("tostring") return "obj" end

local obj = setmetatable({}, mt)
local obj2 = setmetatable({}, mt)
callable = setmetatable({}, mt)

local function tailcall(x)
  return callable(x)            -- tail call of a callable table
end

for i = 1, N do
  local v = obj.foo + obj.bar   -- __index twice, numbers added
  local w = obj + i             -- __add
  obj.x = i                     -- __newindex
  local s = obj .. "x"          -- __concat
  local l = obj < obj2          -- __lt
  local le = obj <= obj2        -- __le
  local e = obj == obj2         -- __eq
  local u = -obj                -- __unm
  local c = obj(i)              -- __call
  local c2 = callable(i)        -- __call via a global
  tailcall(i)
  local ts = tostring(obj)      -- __tostring from the tostring builtin
end

-- __gc from a full collection (finalizer frame above collectgarbage).
for i = 1, 2 do
  local p = newproxy(true)
  getmetatable(p).__gc = function() capture("gc") end
  p = nil
  collectgarbage()
  collectgarbage()
end
-- SPDX-License-Identifier: GPL-2.0-or-later
