-- SPDX-License-Identifier: GPL-2.0-or-later
-- stitch_threads.lua SECONDS: the Lua thread of tests/e2e/ljthreads.c
-- (tests/e2e/stitch_threads.sh): main chunk -> outer -> inner, a busy loop,
-- with the JIT off (plain frame names), for SECONDS of CPU time.
if jit then jit.off() end
local secs = tonumber(arg[1] or "3")

local function inner(n)
	local x = 0
	for i = 1, n do x = x + i % 7 end
	return x
end

local function outer()
	local r = inner(20000)	-- not a tail call: outer stays on the stack
	return r
end

local t0, s = os.clock(), 0
while os.clock() - t0 < secs do
	s = s + outer()
end
print("SUM " .. s)
