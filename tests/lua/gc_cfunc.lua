-- SPDX-License-Identifier: GPL-2.0-or-later
-- Workload for tests/e2e/gc_cfunc.sh: a lua_CFunction that allocates
-- (lua-yaml's parser iterator builds a table of strings per event), so GC
-- steps run inside it (lj_gc.h's lj_gc_check in lj_api.c's pushes).
-- Usage: luajit gc_cfunc.lua SECONDS
local yaml = require "yaml"
local parts = {}
for i = 1, 2000 do parts[#parts + 1] = ("- {name: item%d, value: %d, tags: [a, b, c]}"):format(i, i) end
local doc = table.concat(parts, "\n")
local deadline = os.clock() + tonumber(arg[1] or 3)
local n = 0
local function scan()
	for _ in yaml.parser(doc) do n = n + 1 end
end
while os.clock() < deadline do scan() end
print(n)
