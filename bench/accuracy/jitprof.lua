-- SPDX-License-Identifier: GPL-2.0-or-later
-- The in-process ground truth of bench/accuracy.sh: a collector on
-- jit.profile (the mechanism behind jit.p) in the profiled process itself.
-- usage: luajit jitprof.lua OUT on|off N SCRIPT [ARGS...]
-- Runs SCRIPT N times (as its own main chunk, with arg set; os.exit ends a
-- run, not the process) and writes OUT: one line per distinct stack of Lua
-- functions, root first, each named SOURCE:LINEDEFINED, then the count;
-- and OUT.pid, the process id.
local out, mode, n, script = arg[1], arg[2], tonumber(arg[3]), arg[4]
local args = {}
for i = 5, #arg do args[#args + 1] = arg[i] end
if mode == "off" then jit.off() else jit.on() end
local profile = require "jit.profile"
do	-- OUT.pid: which process of perf record -a is this one
	local ffi = require "ffi"
	ffi.cdef "int getpid(void);"
	local f = assert(io.open(out .. ".pid", "w"))
	f:write(ffi.C.getpid(), "\n")
	f:close()
end
local getinfo, concat = debug.getinfo, table.concat
local counts = {}
local function cb(thread, samples)
	local keys, k = {}, 0
	for level = 0, 400 do
		local ar = getinfo(thread, level, "S")
		if not ar then break end
		if ar.what == "Lua" or ar.what == "main" then
			k = k + 1
			keys[k] = ar.source:gsub("^@", "") .. ":" .. ar.linedefined
		end
	end
	if k == 0 then return end
	local rev = {}
	for i = 1, k do rev[i] = keys[k + 1 - i] end
	local s = concat(rev, ";")
	counts[s] = (counts[s] or 0) + samples
end
local base = {}
for name in pairs(package.loaded) do base[name] = true end
local gbase = {}
for name in pairs(_G) do gbase[name] = true end
local function save()
	profile.stop()
	local f = assert(io.open(out, "w"))
	for s, c in pairs(counts) do f:write(s, " ", c, "\n") end
	f:close()
end
local real_exit, run = os.exit, 0
-- os.exit ends a run; in the last one it ends the process, as it would.
os.exit = function(c)
	if run == n then save() real_exit(c) end
	error({ exit = c }, 0)
end
profile.start("fi1", cb)
for i = 1, n do
	run = i
	for name in pairs(package.loaded) do if not base[name] then package.loaded[name] = nil end end
	for name in pairs(_G) do if not gbase[name] then _G[name] = nil end end
	arg = { [0] = script }
	for j, a in ipairs(args) do arg[j] = a end
	local ok, e = pcall(dofile, script)
	if not ok and not (type(e) == "table" and e.exit ~= nil) then
		io.stderr:write("jitprof: ", tostring(e), "\n")
	end
end
os.exit = real_exit
save()
