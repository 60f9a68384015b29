-- trace_check.lua -- shared ground-truth checks for the trace scenarios
-- (tests/lua/trace_walk_*.lua) of the in-process harness.  Not a scenario:
--   local tc = dofile(dir .. "trace_check.lua")
--   tc.record()                      -- before the hot code: what traces record
--   async_start(); <hot code>; local samples = async_walk()
--   tc.check(samples, { [fn] = "name", ... }, limits)
-- Ground truth, all independent of the walker's decoding:
--   * jit.attach(.., "record"): the (function, bytecode index) of every
--     instruction each trace recorded.  A snapshot's PC is one of them, or
--     the exit of a recorded loop or branch (the guard of FORL's "i <= n"
--     exits to the instruction after the loop, a comparison's to the branch
--     it did not take: never recorded), so the walker's innermost frame
--     (function, position) must be too.
--   * jit.util.tracesnap + tracek: the snapshot's entries and constants as
--     LuaJIT decodes them.  The functions of its frames above the base
--     frame must be, innermost first, the walker's LJW_F_INLINED frames for
--     the snapshot it chose (a vararg function's two frames count once).
--   * jit.util.tracemc + traceexitstub: every guard jcc/jmp in a trace's
--     machine code (after its head) that targets the exit stub of exit k
--     belongs to snapshot k, so the walker's snapshot search (trace_snapno)
--     must return k for that offset.
local jutil = require("jit.util")
local ffi = require("ffi")
local bit = require("bit")
local M = {}
local rec = {}
local flushed = false

-- Start keeping what every trace records: rec[tr][fn][pc] = true.  (A
-- flush, e.g. at maxtrace, makes the samples taken before it stale: noted.)
local function on_trace(what, tr)
  if what == "start" then rec[tr] = {} elseif what == "flush" then flushed = true end
end
local function on_record(tr, fn, pc)
  local r = rec[tr]
  if r then
    r[fn] = r[fn] or {}
    r[fn][pc] = true
  end
end

function M.record()
  jit.opt.start("maxtrace=8000", "maxmcode=16384")
  jit.attach(on_trace, "trace")
  jit.attach(on_record, "record")
end

-- Stop keeping it.  M.check does this first: check's own loops get compiled
-- too, and a trace recorded while pairs(rec) runs would add a key to rec
-- during the traversal (undefined in Lua: it hung the harness at times).
function M.stop()
  jit.attach(on_trace)
  jit.attach(on_record)
end

-- Address of a function object (tostring gives "function: 0x..."); for a
-- builtin ("function: builtin#N") the string "builtin#N".
local function addr(f)
  local s = tostring(f)
  local h = s:match("0x(%x+)")
  return h and tonumber(h, 16) or s:match("builtin#%d+")
end
M.addr = addr

local u64 = ffi.new("union { double d; uint64_t u; }")
local fr2 = ffi.abi("gc64")

-- The frames LuaJIT's own view of snapshot sn of trace tr holds above the
-- base frame, innermost first, as function addresses.  FR2 (GC64): a
-- SNAP_FRAME entry marks a frame's link slot, its function is the entry
-- below; a vararg frame's link (a KNUM) has FRAME_VARG (3) in its low bits
-- and the copy counts once.  Non-FR2: the SNAP_FRAME entry is the function
-- slot itself (slot 0 is the base frame) and jit.util does not expose the
-- link words, so a vararg function's two adjacent frames are merged by
-- function identity (jit.util.funcinfo isvararg).
local function snapframes_nofr2(snap, tr)
  local fr = {}
  for i = 2, #snap do
    local e = snap[i]
    local slot = bit.rshift(e, 24)
    if slot == 255 then break end
    if slot >= 1 and bit.band(e, 0x10000) ~= 0 then
      local fn = jutil.tracek(tr, bit.band(e, 0xffff) - 0x8000)
      local info = type(fn) == "function" and jutil.funcinfo(fn)
      if #fr > 0 and fr[#fr] == addr(fn) and info and info.isvararg then
        -- the vararg copy of the frame below: shown once
      else
        fr[#fr + 1] = addr(fn) or -1
      end
    end
  end
  local out = {}
  for i = #fr, 1, -1 do out[#out + 1] = fr[i] end
  return out
end

local function snapframes(tr, sn)
  local snap = jutil.tracesnap(tr, sn)
  if not snap then return nil end
  if not fr2 then return snapframes_nofr2(snap, tr) end
  local byslot = {}
  for i = 2, #snap do
    local e = snap[i]
    local slot = bit.rshift(e, 24)
    if slot == 255 then break end
    byslot[slot] = e
  end
  local fr = {}
  for slot = 2, 254 do
    local e = byslot[slot]
    if e and bit.band(e, 0x10000) ~= 0 then
      local fe = byslot[slot - 1]
      local fn = fe and jutil.tracek(tr, bit.band(fe, 0xffff) - 0x8000)
      local link = jutil.tracek(tr, bit.band(e, 0xffff) - 0x8000)
      u64.d = link or 0
      local vararg = tonumber(u64.u % 8) == 3
      if vararg and #fr > 0 then fr[#fr] = addr(fn) or -1 else fr[#fr + 1] = addr(fn) or -1 end
    end
  end
  local out = {}
  for i = #fr, 1, -1 do out[#out + 1] = fr[i] end
  return out
end

local function fail(msg, s)
  local t = { msg }
  if s then
    t[#t + 1] = string.format("sample: trace %d src %s snap %d ninlined %d", s.traceno, s.src,
                              s.snapno, s.ninlined)
    for _, f in ipairs(s.frames) do
      t[#t + 1] = "  " .. f.text .. (f.inlined and " _[i]" or f.trace and " _[j]" or "")
    end
  end
  error(table.concat(t, "\n"), 3)
end

-- Where the recorded instruction q of fn exits to without recording it: a
-- loop's way out (after FORL/ITERL, FORI's or LOOP's target) or the branch a
-- comparison (IS* + JMP) did not take.  Does pos of fn qualify?
local bcnames
do
  local ok, vmdef = pcall(require, "jit.vmdef")
  bcnames = ok and vmdef.bcnames
end
local function bcop(fn, pc)
  local ins = bcnames and pc >= 0 and jutil.funcbc(fn, pc)
  if not ins then return nil end
  local op = bit.band(ins, 0xff)
  return (bcnames:sub(op * 6 + 1, op * 6 + 6):gsub(" +$", "")), ins
end
local function jtarget(pc, ins) return pc + 1 + bit.rshift(ins, 16) - 0x8000 end
local function exit_pos(fn, recorded, pos)
  for q in pairs(recorded) do
    local op, ins = bcop(fn, q)
    if op and (op:match("^[IJ]?FORL$") or op:match("^J?FORI$") or op:match("^[IJ]?ITERL$") or
               op:match("^[IJ]?LOOP$")) then
      -- (JFORL, JITERL, JLOOP hold a trace number, not a jump)
      if pos == q + 1 or ((op == "JFORI" or op:sub(1, 1) ~= "J") and pos == jtarget(q, ins)) then
        return true
      end
    elseif op and op:match("^IS") then
      local jop, jins = bcop(fn, q + 1)
      if jop == "JMP" and (pos == q + 2 or pos == jtarget(q + 1, jins)) then return true end
    end
  end
  return false
end

-- Check the walked samples; names maps function objects to the names their
-- callers give them; above = { name = caller name } pairs to count ("inlined
-- directly above its declared caller"); protolines = the linedefined of
-- prototypes a trace may have specialized calls to (frames without a
-- function constant).  Returns the counts.
function M.check(samples, names, above, protolines)
  M.stop()
  local byname, byaddr = {}, {}
  for f, n in pairs(names) do byname[addr(f)] = n end
  for _, r in pairs(rec) do
    for fn in pairs(r) do
      local a = addr(fn)
      if a then byaddr[a] = fn end
    end
  end
  local st = { samples = #samples, ontrace = 0, snap = 0, call = 0, fallback = 0, above = {},
               byproto = 0, exitpos = 0, marked = 0 }
  for _, s in ipairs(samples) do
    if s.traceno >= 0 and s.vmstate_name == "trace" then
      st.ontrace = st.ontrace + 1
      -- C code the trace called between two snapshots with other frames
      -- (or after a call no snapshot follows): one [unknown: call_frames]
      -- stands for the frames no snapshot gives (unwind/ljwalk_trace.c)
      local marked = (s.src == "snap_call_split" or s.src == "snap_call_unsure") and
                     s.nunknown == 1
      if (s.nunknown ~= 0 and not marked) or s["end"] ~= "complete" then
        fail("trace sample walk incomplete", s)
      end
      if marked then st.marked = st.marked + 1 end
      if s.src == "snap" or s.src == "snap_call" then
        if s.src == "snap" then st.snap = st.snap + 1 else st.call = st.call + 1 end
        local fr = s.frames
        local top = fr[1]
        -- (a) the frames above the base frame are the snapshot's
        local want = snapframes(s.traceno, s.snapno)
        if not want then fail("jit.util.tracesnap has no snapshot " .. s.snapno, s) end
        local n = 0
        while fr[n + 1] and fr[n + 1].inlined do n = n + 1 end
        if n ~= #want or n ~= s.ninlined then
          fail(string.format("%d inlined frames, LuaJIT's snapshot %d has %d", n, s.snapno, #want), s)
        end
        for i = 1, n do
          local w = want[i]
          if w == -1 then
            -- no function constant: a call LuaJIT specialized to the
            -- prototype; the walker knows the prototype, not the closure
            if fr[i].fn ~= 0 or fr[i].pt == 0 or fr[i].kind ~= 0 or
               not (protolines or {})[fr[i].linedefined] then
              fail("inlined frame " .. i .. " (no function constant) not shown by its prototype", s)
            end
            st.byproto = st.byproto + 1
          elseif (type(w) == "string" and "builtin#" .. fr[i].ffid ~= w) or
                 (type(w) ~= "string" and fr[i].fn ~= w) then
            fail("inlined frame " .. i .. " is not the snapshot's function", s)
          end
        end
        if not fr[n + 1] or not fr[n + 1].trace then fail("no _[j] frame below the inlined ones", s) end
        -- (b) the innermost Lua position is an instruction the trace
        -- recorded, or the exit of a recorded loop or branch
        if top.kind == 0 and top.fn ~= 0 then
          local fn = byaddr[top.fn]
          local r = fn and rec[s.traceno] and rec[s.traceno][fn]
          if r and not r[top.pos] and exit_pos(fn, r, top.pos) then
            st.exitpos = st.exitpos + 1
          elseif not r or not r[top.pos] then
            fail("innermost frame position " .. top.pos .. " was not recorded by trace " .. s.traceno, s)
          end
        end
        -- (c) inlined frames are named from their callers' bytecode
        for i = 1, n do
          local nm = byname[fr[i].fn]
          if nm and fr[i].name ~= nm then
            fail("inlined " .. nm .. " named '" .. tostring(fr[i].name) .. "'", s)
          end
        end
        for callee, callers in pairs(above) do
          for k = 1, n do
            if byname[fr[k].fn] == callee and byname[fr[k + 1].fn] == callers then
              st.above[callee] = (st.above[callee] or 0) + 1
              break
            end
          end
        end
      else
        st.fallback = st.fallback + 1
        if s.src == "badsnap" or s.src == "nohdr" or (s.src == "stale" and not flushed) then
          fail("trace sample fell back: " .. s.src, s)
        end
      end
    end
  end
  -- The snapshot search against the exit stubs the machine code jumps to.
  st.guards, st.traces = 0, 0
  for tr in pairs(rec) do
    local info = jutil.traceinfo(tr)
    local mc, base = jutil.tracemc(tr)
    if info and mc then
      st.traces = st.traces + 1
      local stub = {}
      for k = 0, info.nexit - 1 do
        local a = jutil.traceexitstub(k) or jutil.traceexitstub(tr, k)
        if a then stub[a] = k end
      end
      -- The head (before the trace stores its number in g->vmstate: x64
      -- "mov dword [r14+disp32], traceno" in GC64, "mov dword [abs32],
      -- traceno" otherwise) holds the Lua stack check, whose exit is chosen
      -- for what it must restore, not by position: skip it.
      local head = 0
      for j = 1, math.min(#mc, 256) - 10 do
        local a0, a1, a2 = mc:byte(j, j + 2)
        if (a0 == 0x41 and a1 == 0xc7 and a2 == 0x86) or (a0 == 0xc7 and a1 == 0x04 and a2 == 0x25) then
          local i0, i1, i2, i3 = mc:byte(j + 7, j + 10)
          if i0 + i1 * 256 + i2 * 65536 + i3 * 16777216 == tr then head = j + 10; break end
        end
      end
      local i, len = head + 1, #mc
      while i <= len - 5 do
        local b0, b1 = mc:byte(i, i + 1)
        local ilen, dpos
        if b0 == 0x0f and b1 >= 0x80 and b1 <= 0x8f then ilen, dpos = 6, i + 2
        elseif b0 == 0xe9 then ilen, dpos = 5, i + 1 end
        if ilen and dpos + 3 <= len then
          local d0, d1, d2, d3 = mc:byte(dpos, dpos + 3)
          local disp = d0 + d1 * 256 + d2 * 65536 + d3 * 16777216
          if disp >= 2^31 then disp = disp - 2^32 end
          local k = stub[base + (i - 1) + ilen + disp]
          if k then
            local got, err = trace_snapno(tr, i - 1)
            if got ~= k then
              fail(string.format("trace %d: guard at +%d exits to %d, snapshot search says %s",
                                 tr, i - 1, k, tostring(got or err)))
            end
            st.guards = st.guards + 1
          end
        end
        i = i + 1
      end
    end
  end
  return st
end

return M
-- SPDX-License-Identifier: GPL-2.0-or-later
