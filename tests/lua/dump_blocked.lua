-- SPDX-License-Identifier: GPL-2.0-or-later
-- A workload for tests/e2e/dump_blocked.sh: a known call chain that blocks
-- in a C function, whose own debug.traceback() is the ground truth for
-- `ljsnap dump` reading the stack from memory (no thread runs Lua).
-- usage: <lua> dump_blocked.lua TRACEBACK_FILE MODE [FIFO]
--   MODE open: main chunk -> outer() -> inner() -> io.open(FIFO, "r"), which
--              blocks in open(2) until a writer opens FIFO (none does)
--   MODE ffi:  main chunk -> outer() -> waiter() -> ffi.C.sleep(60)
--   MODE idle: print "ready" and return (the host then waits outside Lua)
-- The traceback is written in the innermost Lua function just before the
-- call, then "ready" is printed.
local tbfile, mode, fifo = arg[1], arg[2], arg[3]

local function mark()
  local f = assert(io.open(tbfile, "w"))
  f:write((debug.traceback("", 2):gsub("^\n", "")), "\n")
  f:close()
  print("ready")
  io.stdout:flush()
end

local function inner(path)
  mark()
  local f = io.open(path, "r")
  return f ~= nil
end

local function waiter(n)
  local ffi = require("ffi")
  ffi.cdef("unsigned int sleep(unsigned int);")
  mark()
  ffi.C.sleep(n)
  return n
end

local function outer()
  local r
  if mode == "idle" then print("ready") return true end
  if mode == "ffi" then r = waiter(60) else r = inner(fifo) end
  return r
end

print("done", outer())
