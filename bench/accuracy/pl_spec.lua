-- SPDX-License-Identifier: GPL-2.0-or-later
-- Specs for bench/accuracy.sh's busted run: busted, luassert and penlight
-- (none written here) do the work; BUSTED_CASES sets how many cases.
local stringx = require 'pl.stringx'
local tablex = require 'pl.tablex'
local List = require 'pl.List'
describe("penlight", function()
	for i = 1, tonumber(os.getenv("BUSTED_CASES") or "3000") do
		it("case " .. i, function()
			local parts = stringx.split(("word" .. i .. " "):rep(50))
			assert.are.equal(50, #parts)
			assert.is_true(List(parts):map(string.upper):len() == 50)
			local t = tablex.range(1, 200)
			assert.are.same(tablex.map(function(x) return x end, t), t)
		end)
	end
end)
