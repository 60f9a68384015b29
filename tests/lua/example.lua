-- The bundled example workload for `tests/demo.sh`: a small "request
-- handler" mixing string building, table sorting with a Lua comparator,
-- pattern matching (a C builtin calling back into Lua) and a coroutine
-- pipeline.  usage: luajit example.lua [SECONDS]
local seconds = tonumber(arg and arg[1]) or 5

local function escape(s)
  return (s:gsub('[%c"\\]', function(c) return string.format("\\u%04x", c:byte()) end))
end

local function encode(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return a < b end)
  local out = {}
  for i, k in ipairs(keys) do
    out[i] = '"' .. escape(k) .. '":"' .. escape(tostring(t[k])) .. '"'
  end
  return "{" .. table.concat(out, ",") .. "}"
end

local function parse_query(q)
  local args = {}
  for k, v in q:gmatch("([^&=]+)=([^&=]*)") do args[k] = v end
  return args
end

local function producer(n)
  return coroutine.wrap(function()
    for i = 1, n do coroutine.yield("id=" .. i .. "&name=user" .. i .. "&tag=\"x\"") end
  end)
end

local function handle_request(q)
  return encode(parse_query(q))
end

local function checksum(s)
  local h = 0
  for i = 1, #s do h = (h * 31 + s:byte(i)) % 2147483647 end
  return h
end

local t0, total = os.clock(), 0
while os.clock() - t0 < seconds do
  for q in producer(200) do
    local body = handle_request(q)
    total = total + checksum(body)
  end
end
print("checksum", total)
-- SPDX-License-Identifier: GPL-2.0-or-later
