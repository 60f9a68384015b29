-- ljsnap_work.lua -- the request handler of tests/e2e/nginx_workers.sh,
-- with a known call structure: the content_by_lua chunk calls handle(),
-- which does CPU work in handle() -> level1() -> level2() -> leaf().
-- Every request does a bounded amount of work (ITER iterations).
local M = {}
local ITER = 50000

local function leaf(n)
  local s = 0
  for i = 1, n do s = s + (i * 7) % 13 end
  return s
end

local function level2(n)
  return leaf(n) + 1
end

local function level1(n)
  return level2(n) + 1
end

function M.handle()
  local r = level1(ITER)
  ngx.say("ok ", r)
end

-- /re: Lua calling C: ngx.re.find (the lua module, into PCRE), without
-- PCRE's JIT ("o" only), over a 4 KiB subject that [a-h]+ runs through.
local SUBJECT = string.rep("abcdefgh", 512) .. "needle42"
function M.handle_re()
  local n = 0
  for _ = 1, 200 do
    local from = ngx.re.find(SUBJECT, [[[a-h]+needle(\d+)$]], "o")
    if from then n = n + 1 end
  end
  ngx.say("re ", n)
end

-- "FN name linedefined" lines, as tests/lua/build_chain.lua prints them
function M.frames()
  local t = {}
  for _, p in ipairs({ { "handle", M.handle }, { "level1", level1 }, { "level2", level2 },
                       { "leaf", leaf } }) do
    t[#t + 1] = "FN " .. p[1] .. " " .. debug.getinfo(p[2], "S").linedefined
  end
  return table.concat(t, "\n")
end

return M
-- SPDX-License-Identifier: GPL-2.0-or-later
