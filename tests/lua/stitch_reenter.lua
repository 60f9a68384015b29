-- SPDX-License-Identifier: GPL-2.0-or-later
-- stitch_reenter.lua MODE SECONDS: Lua calling C that re-enters the VM
-- without running Lua (tests/e2e/stitch_reenter.sh).  Each round runs one
-- re-entering call from a known Lua chain (main chunk -> work -> reenter)
-- next to a table.sort with a Lua comparator (main chunk -> work -> cmp),
-- so that both halves are on the stack with the VM below them.
--   load   load() of a small chunk (lua_loadx: lj_vm_cpcall -> the parser)
--   jit    jit.flush() then a fresh loop, compiled at once (the recorder runs
--          under lj_vm_cpcall, called from lj_vm_hotloop)
--   ffi    ffi.cdef and ffi.typeof of declaration strings (the C parser runs
--          under lj_vm_cpcall)
--   gc     objects with __gc finalizers (newproxy), collected by the GC
--          (gc_call_finalizer -> lj_vm_pcall from inside the GC)
local mode, secs = arg[1] or "load", tonumber(arg[2] or "3")
local ffi = require("ffi")
local n = 0

local function cmp(a, b) return a > b end

local t = {}
local function sort_part()
	for i = 1, 300 do t[i] = (i * 7919) % 1000 end
	table.sort(t, cmp)
end

local reenter
if mode == "load" then
	reenter = function()
		for i = 1, 200 do
			local f = load("local a, b = ... return a + b + " .. i)
			n = n + f(1, 2)
		end
	end
elseif mode == "jit" then
	reenter = function()
		jit.flush()
		local s = 0
		for i = 1, 200 do s = s + i % 7 end
		for i = 1, 200 do s = s + i % 5 end
		n = n + s
	end
elseif mode == "ffi" then
	-- Every ffi.cdef adds ctypes (LuaJIT has at most 65536): one per round,
	-- up to 20000; the declaration strings of ffi.typeof/ffi.cast are
	-- interned, so they run the parser in every round.
	local ncdef = 0
	reenter = function()
		if ncdef < 20000 then
			ncdef = ncdef + 1
			ffi.cdef("int abs(int);")
		end
		for i = 1, 50 do
			local ct = ffi.typeof("int[" .. (i % 9 + 1) .. "]")
			local p = ffi.cast("const uint32_t *", nil)
			n = n + ffi.sizeof(ct) + (p == nil and 1 or 0)
		end
	end
elseif mode == "gc" then
	-- The finalizer does some work of its own, to be sampled.
	local mt = { __gc = function(u)
		for i = 1, 200 do n = n + i % 3 end
	end }
	reenter = function()
		for i = 1, 2000 do
			local p = newproxy(true)
			getmetatable(p).__gc = mt.__gc
		end
		collectgarbage("step", 50)
	end
else
	error("unknown mode " .. mode)
end

local function work()
	reenter()
	sort_part()
end

local t0 = os.clock()
local rounds = 0
while os.clock() - t0 < secs do
	work()
	rounds = rounds + 1
end
print("ROUNDS " .. rounds .. " " .. n)
