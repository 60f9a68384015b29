-- report_churn.lua [SECONDS]: Lua stacks over prototypes that come and go,
-- for tests/e2e/report_memory.sh.  Forty functions compiled with load()
-- are called in turn, nine levels deep, making garbage on the way, so that
-- the GC runs cycle after cycle: each cycle rewrites the mark byte of every
-- live prototype, a new version of its bytes for the recorder to keep.
-- Every 25 calls one of the forty is replaced by a fresh chunk (new
-- GCproto objects; the GC frees the old ones and others take their
-- addresses).  Each lives about 200 ms: long enough for the recorder,
-- which reads a sample's functions a few milliseconds after it was taken,
-- to find them still there.
-- SPDX-License-Identifier: GPL-2.0-or-later
local secs = tonumber(arg and arg[1]) or 2
local t0 = os.clock()
local n = 0

local function leaf(x)
	local s = 0
	for i = 1, 30000 do s = s + (x * i) % 7 end
	return s
end

local tmpl = [[
local leaf = ...
local function churn_%d(d, x)
	if d == 0 then return leaf(x) end
	local t = {}
	for i = 1, 40 do t[i] = { i } end
	return 1 + churn_%d(d - 1, x + #t)
end
return churn_%d
]]

local function fresh(k)
	return assert(load(tmpl:format(k, k, k), "=churn" .. k))(leaf)
end

local fns = {}
for k = 0, 39 do fns[k] = fresh(k) end
while os.clock() - t0 < secs do
	n = n + 1
	if n % 25 == 0 then
		local k = (n / 25) % 40
		fns[k] = fresh(k)
	end
	fns[n % 40](8, n)
end
