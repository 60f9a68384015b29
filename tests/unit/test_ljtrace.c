/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_ljtrace.c -- trace attribution on synthetic LuaJIT memory, in the
 * GC64 (FR2) and non-GC64 encodings, and on hostile trace data.
 *
 * The world, built by LuaJIT's rules (lj_trace.c trace_save, lj_snap.c,
 * lj_ir.h; see unwind/ljtrace.h): a main chunk "@t.lua" calls the global
 * caller at line 2; caller (firstline 10) runs trace 3, which starts at
 * caller's position 1 (line 11) and inlines the global helper (firstline 20)
 * called at line 12.  Trace 3's machine code is [MCODE, MCODE + 300) and it
 * has four snapshots:
 *     #0 mcofs   0  pc caller:1 (line 11)    no frame above the base
 *     #1 mcofs 100  pc helper:2 (line 22)    helper inlined, called from
 *                                            caller:2 (line 12)
 *     #2 mcofs 200  pc caller:3 (line 13)
 *     #3 mcofs 260  pc helper:3 (line 23)    slot 0 is helper: the base
 *                                            frame was tail-called
 * so LuaJIT's own traceback for a sample at MCODE + 150 would read, had the
 * trace exited there:
 *     t.lua:22: in function 'helper'
 *     t.lua:12: in function 'caller'
 *     t.lua:2: in main chunk
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/ljlayout.h"
#include "unwind/ljtrace.h"
#include "unwind/ljwalk.h"
#include "unwind/memsrc.h"
#include "tests/unit/ljtrace_world.h"
#include "tests/unit/check.h"

int failures, checks;

/* -- Walker tests ---------------------------------------------------------------- */

static struct world wstore;

/* Long on purpose: one list of checks, each changing the same world a step further. */
/* A sample inside the trace's machine code, per snapshot, and the fallbacks. */
/* RIP in C code a side-effecting call of the trace made (ljt__snap_call):
 * snapshot #1 covers IR [REF_BIAS + 2, REF_BIAS + 3), #2 starts at
 * REF_BIAS + 3 with PC caller:3, after the CALL at caller:2.  A CALLXS at
 * REF_BIAS + 2 takes #2's frames, at the CALL (line 12); an instruction
 * that is not the call's result conversion before #2 leaves the frames
 * unknown: #1's under an [unknown: call_frames].  Leaves the world as it
 * was. */
static void test_call_snap(struct world *w, struct ljw *wk, struct ljw_opts *o,
			   struct ljw_stack *st, char ln[][160], const char *mode)
{
	const struct lj_layout *lay = w->lay;
	uint64_t ir, snap;
	struct ljt_hdr h;
	struct ljt t;
	uint32_t cs = 0;
	int n;

	memcpy(&ir, &w->mem[w->T + lay->t_ir - w->sm.base], 8);
	memcpy(&snap, &w->mem[w->T + lay->t_snap - w->sm.base], 8);
	ljt__init(&t);
	CHECKF(ljt_hdr__read(lay, &w->ms_world, w->T, &h) == 0 &&
	      ljt__bind(&t, lay, &w->ms_world, &h) == 0 && ljt__snap_call(&t, 1, 0, &cs) == -ENOENT,
	      "%s: snap_call without a call", mode);
	w_ir(w, ir, REF_BIAS + 2, 0, 9, LJT_IR_CALLXS);
	ljt__bind(&t, lay, &w->ms_world, &h);
	CHECKF(ljt__snap_call(&t, 1, 0, &cs) == 0 && cs == 2, "%s: snap_call -> %u", mode, cs);
	W64(w->cf - 24 - SPADJUST, MCODE + 151);
	world_sample(w, w->T, 0x401000);
	n = world_walk(w, wk, o, st, ln);
	CHECKF(n == 2 && st->trace.src == LJW_TS_SNAP_CALL && st->trace.snapno == 2 &&
	      st->frames[0].fn == w->fn_caller && st->frames[0].line == 12,
	      "%s: frames at the call: %d, src %s snap %d, %s", mode, n,
	      ljw_tsrc__name(st->trace.src), st->trace.snapno, n ? ln[0] : "-");
	/* The result's conversion may lie between the call and #2, nothing else. */
	W16(snap + 2 * lay->snap_size + lay->snap_ref, REF_BIAS + 4);
	W16(snap + 3 * lay->snap_size + lay->snap_ref, REF_BIAS + 4);
	w_ir(w, ir, REF_BIAS + 3, REF_BIAS + 2, 14, LJT_IR_CONV);
	ljt__bind(&t, lay, &w->ms_world, &h);
	CHECKF(ljt__snap_call(&t, 1, 0, &cs) == 0 && cs == 2, "%s: CONV: snap_call", mode);
	w_ir(w, ir, REF_BIAS + 3, REF_BIAS + 1, 14, 41 /* ADD */);
	ljt__bind(&t, lay, &w->ms_world, &h);
	CHECKF(ljt__snap_call(&t, 1, 0, &cs) == -ESRCH, "%s: ADD: snap_call", mode);
	world_sample(w, w->T, 0x401000);
	n = world_walk(w, wk, o, st, ln);
	CHECKF(n == 4 && st->trace.src == LJW_TS_SNAP_CALL_UNSURE && st->trace.snapno == 1 &&
	      st->frames[0].kind == LJW_FRAME_UNKNOWN && st->frames[0].reason == LJW_R_CALL_FRAMES &&
	      st->frames[1].fn == w->fn_helper && st->nunknown == 1 &&
	      st->unknown[LJW_R_CALL_FRAMES] == 1,
	      "%s: unknown frames at the call: %d, src %s, %s", mode, n,
	      ljw_tsrc__name(st->trace.src), n ? ln[0] : "-");
	/* Two side-effecting calls in one snapshot's code: unknown. */
	w_ir(w, ir, REF_BIAS + 3, 0, 9, LJT_IR_CALLS);
	W16(snap + 2 * lay->snap_size + lay->snap_ref, REF_BIAS + 3);
	W16(snap + 3 * lay->snap_size + lay->snap_ref, REF_BIAS + 3);
	W16(snap + 1 * lay->snap_size + lay->snap_ref, REF_BIAS + 1);
	W16(snap + 0 * lay->snap_size + lay->snap_ref, REF_BIAS + 1);
	w_ir(w, ir, REF_BIAS + 1, 0, 9, LJT_IR_CALLS);
	ljt__bind(&t, lay, &w->ms_world, &h);
	CHECKF(ljt__snap_call(&t, 1, 0, &cs) == -ESRCH, "%s: two calls: snap_call", mode);
	/* ... told apart by the function the sample's call went to: a CALLS
	 * at REF_BIAS + 1, a CALLXS of the constant 0x1234 at REF_BIAS + 2. */
	w_ir(w, ir, REF_BIAS + 3, 0, 0, 0);
	w_ir(w, ir, REF_BIAS + 2, (uint32_t)(REF_BIAS - 2) << 16, 9, LJT_IR_CALLXS);
	w_ir(w, ir, REF_BIAS - 2, w->fr2 ? 0 : 0x1234, 0, LJT_IR_KPTR);
	if (w->fr2)
		W64(ir + 8 * (uint64_t)(REF_BIAS - 1), 0x1234);
	ljt__bind(&t, lay, &w->ms_world, &h);
	CHECKF(ljt__snap_call(&t, 1, 0x1234, &cs) == 0 && cs == 2 &&
	      ljt__snap_call(&t, 1, 0x9999, &cs) == -ESRCH && ljt__snap_call(&t, 1, 0, &cs) == -ESRCH,
	      "%s: two calls told apart by their target", mode);
	w_ir(w, ir, REF_BIAS - 2, 0, 0, 0);
	W64(ir + 8 * (uint64_t)(REF_BIAS - 1), 0);
	/* restore */
	W16(snap + 1 * lay->snap_size + lay->snap_ref, REF_BIAS + 2);
	w_ir(w, ir, REF_BIAS + 1, 0, 0, 0);
	w_ir(w, ir, REF_BIAS + 2, 0, 0, 0);
	w_ir(w, ir, REF_BIAS + 3, 0, 0, 0);
	W64(w->cf - 24 - SPADJUST, 0);	/* the sample as the caller took it */
	world_sample(w, w->T, 0x401000);
	W64(w->cf - 24 - SPADJUST, MCODE + 151);
	ljt__exit(&t);
}

static void test_walk(const struct lj_layout *lay0, const char *mode)
{
	struct world *w = &wstore;
	struct lj_layout lay = *lay0;
	struct ljw *wk = ljw__new();
	struct ljw_opts o = { .vm_lo = 0x1000, .vm_hi = 0x2000 };
	struct ljw_stack st;
	char ln[8][160];
	int n;

	world_build(w, &lay);
	/* snapshot #1: helper inlined above caller */
	world_sample(w, w->T, MCODE + 150);
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(n == 3, "%s: %d frames", mode, n);
	if (n == 3) {
		CHECKF(!strcmp(ln[0], "t.lua:22: in function 'helper'"), "%s: %s", mode, ln[0]);
		CHECKF(!strcmp(ln[1], "t.lua:12: in function 'caller'"), "%s: %s", mode, ln[1]);
		CHECKF(!strcmp(ln[2], "t.lua:2: in main chunk"), "%s: %s", mode, ln[2]);
		CHECKF(st.frames[0].flags & LJW_F_INLINED && !(st.frames[0].flags & LJW_F_TRACE) &&
		      st.frames[0].traceno == TRACENO && st.frames[0].fn == w->fn_helper,
		      "%s: inlined frame flags %#x", mode, st.frames[0].flags);
		CHECKF(st.frames[1].flags & LJW_F_TRACE && !(st.frames[1].flags & LJW_F_INLINED) &&
		      st.frames[1].traceno == TRACENO, "%s: trace frame", mode);
		CHECKF(!strcmp(st.frames[0].what, "global"), "%s: helper is a global", mode);
	}
	CHECKF(st.trace.src == LJW_TS_SNAP && st.trace.snapno == 1 && st.trace.mcofs == 150 &&
	      st.trace.ninlined == 1 && st.trace.found == LJW_TF_VMSTATE, "%s: src %s snap %d",
	      mode, ljw_tsrc__name(st.trace.src), st.trace.snapno);
	CHECKF(st.traceno == TRACENO && st.trace.traceno == TRACENO && st.trace.root == TRACENO &&
	      st.trace.startpt == w->pt_caller && st.trace.startline == 11 &&
	      st.trace.linedefined == 10 && st.trace.chunk && !strcmp(st.trace.chunk, "t.lua"),
	      "%s: trace info", mode);
	CHECKF(st.pc_src == LJW_SRC_SNAPSHOT && st.base_src == LJW_SRC_JIT_BASE &&
	      st.end == LJW_END_COMPLETE && st.nunknown == 0, "%s: walk status", mode);

	/* Binary search edges: 0 and 99 -> #0, 100 -> #1, 199 -> #1, 200 -> #2, 259 -> #2. */
	{
		static const struct { uint32_t ofs; int snap; int line; } e[] = {
			{ 0, 0, 11 }, { 99, 0, 11 }, { 100, 1, 12 }, { 199, 1, 12 },
			{ 200, 2, 13 }, { 259, 2, 13 },
		};
		size_t i;

		for (i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
			world_sample(w, w->T, MCODE + e[i].ofs);
			n = world_walk(w, wk, &o, &st, ln);
			CHECKF(st.trace.snapno == e[i].snap && n >= 2 &&
			      st.frames[n - 2].line == e[i].line, "%s: ofs %u: snap %d line %d",
			      mode, e[i].ofs, st.trace.snapno, n >= 2 ? st.frames[n - 2].line : -1);
		}
	}
	/* #3: slot 0 holds helper: the base frame was tail-called by the trace. */
	world_sample(w, w->T, MCODE + SZMCODE - 1);
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(n == 2 && st.trace.snapno == 3 && st.frames[0].fn == w->fn_helper &&
	      st.frames[0].line == 23 && (st.frames[0].flags & LJW_F_TRACE),
	      "%s: tail-called base frame: %d frames, %s", mode, n, n ? ln[0] : "-");

	/* RIP in C code called from the trace: the call's return address (no
	 * side-effecting call in the IR).  The covering snapshot #1 has helper
	 * inlined, the next one (#2) not: the call ran in caller or in a
	 * function it called after helper returned, so only caller is known,
	 * at the CALL of helper (line 12), under [unknown: call_frames]
	 * (snap_call_split). */
	W64(w->cf - 24 - SPADJUST, MCODE + 151);
	world_sample(w, w->T, 0x401000);
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(n == 3 && st.trace.src == LJW_TS_SNAP_CALL_SPLIT && st.trace.snapno == 1 &&
	      st.trace.mcofs == 150 && st.frames[0].kind == LJW_FRAME_UNKNOWN &&
	      st.frames[0].reason == LJW_R_CALL_FRAMES && st.frames[1].fn != w->fn_helper &&
	      st.frames[1].line == 12 && (st.frames[1].flags & LJW_F_TRACE) &&
	      st.unknown[LJW_R_CALL_FRAMES] == 1,
	      "%s: call site: src %s snap %d, %d frames, %s", mode, ljw_tsrc__name(st.trace.src),
	      st.trace.snapno, n, n > 1 ? ln[1] : "-");
	/* The slot is read from the sample's stack copy, never from memory
	 * read later: the same value in the world but not in the copy. */
	W64(w->cf - 24 - SPADJUST, 0);
	world_sample(w, w->T, 0x401000);
	W64(w->cf - 24 - SPADJUST, MCODE + 151);
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(st.trace.src == LJW_TS_START, "%s: call slot read from memory: src %s", mode,
	      ljw_tsrc__name(st.trace.src));
	test_call_snap(w, wk, &o, &st, ln, mode);
	/* ... from the native unwinder instead */
	W64(w->cf - 24 - SPADJUST, 0);
	o.trace_ip = MCODE + 201;
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(n == 2 && st.trace.src == LJW_TS_SNAP_CALL_PRIOR && st.trace.snapno == 2,
	      "%s: trace_ip: src %s snap %d", mode, ljw_tsrc__name(st.trace.src), st.trace.snapno);
	/* #0 has no frame above the base, #1 has helper: the call may have run
	 * in helper before its first snapshot, so caller stays at #0's PC
	 * (line 11), under [unknown: call_frames]. */
	o.trace_ip = MCODE + 51;
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(n == 3 && st.trace.src == LJW_TS_SNAP_CALL_SPLIT && st.trace.snapno == 0 &&
	      st.frames[0].reason == LJW_R_CALL_FRAMES && st.frames[1].line == 11,
	      "%s: call before an inlined frame: src %s snap %d, %d frames", mode,
	      ljw_tsrc__name(st.trace.src), st.trace.snapno, n);
	o.trace_ip = 0;
	/* No return address into the trace: the start PC (line 11). */
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(n == 2 && st.trace.src == LJW_TS_START && st.pc_src == LJW_SRC_TRACE_START &&
	      st.frames[0].line == 11, "%s: start: src %s line %d", mode,
	      ljw_tsrc__name(st.trace.src), n ? st.frames[0].line : -1);

	/* The trace in memory is no longer the sample's: stale, start function. */
	world_sample(w, w->T, MCODE + 150);
	W64(w->T + lay.t_mcode, MCODE + 0x8000);
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(n == 2 && st.trace.src == LJW_TS_STALE && st.frames[0].line == 11 &&
	      !(st.frames[0].flags & LJW_F_INLINED), "%s: stale: src %s, %d frames", mode,
	      ljw_tsrc__name(st.trace.src), n);
	/* ... and a scan of memory must not pick the trace that is there now */
	W64(w->T + lay.t_mcode, MCODE + 150 - 10);
	o.trace_scan = 16;
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(st.trace.src == LJW_TS_STALE && st.trace.found == LJW_TF_VMSTATE,
	      "%s: stale + scan: src %s found %s", mode, ljw_tsrc__name(st.trace.src),
	      ljw_tfound__name(st.trace.found));
	o.trace_scan = 0;
	W64(w->T + lay.t_mcode, MCODE);
	/* The sample's TRACE window holds another trace (number reused). */
	world_sample(w, w->T5, MCODE + 150);
	W32(w->g + lay.g_vmstate, TRACENO);
	w->s.sec[0].data = w->secbuf;	/* G copied with vmstate 3, T5's header */
	memcpy(w->secbuf + lay.g_vmstate, &(uint32_t){ TRACENO }, 4);
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(n == 2 && st.trace.src == LJW_TS_STALE && st.frames[0].line == -1,
	      "%s: reused number: src %s line %d", mode, ljw_tsrc__name(st.trace.src),
	      n ? st.frames[0].line : 0);

	/* A build without SnapShot.mcofs: the start function, counted. */
	{
		struct lj_layout nm = lay;

		nm.flags &= ~(uint32_t)LJ_LAYOUT_F_MCOFS;
		nm.snap_mcofs = UINT32_MAX;
		world_sample(w, w->T, MCODE + 150);
		if (ljw__walk(wk, &nm, &w->s, &w->ms, &o, &st) == 0) {
			CHECKF(st.nframes == 2 && st.trace.src == LJW_TS_NOSNAP &&
			      st.frames[0].line == 11, "%s: nosnap: src %s", mode,
			      ljw_tsrc__name(st.trace.src));
		} else {
			CHECKF(0, "%s: nosnap walk failed", mode);
		}
	}

	/* vmstate INTERP right after JLOOP: RIP already in the trace. */
	W32(w->g + lay.g_vmstate, (uint32_t)lay.vmst.interp);
	world_sample(w, 0, MCODE + 150);
	w->s.regs.bx = w_bc(w, w->pt_caller, 4);	/* after JLOOP 3 */
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(n == 3 && st.trace.found == LJW_TF_JLOOP && st.trace.src == LJW_TS_SNAP &&
	      st.traceno == TRACENO && (st.frames[0].flags & LJW_F_INLINED),
	      "%s: JLOOP race: found %s src %s, %d frames", mode, ljw_tfound__name(st.trace.found),
	      ljw_tsrc__name(st.trace.src), n);
	/* ... but not when jit_base is clear (plain interpreter in a C helper). */
	WREF(w->g + lay.g_jit_base, 0);
	world_sample(w, 0, MCODE + 150);
	w->s.regs.bx = w_bc(w, w->pt_caller, 4);
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(st.traceno == -1 && st.trace.src == LJW_TS_NONE, "%s: interpreter: traceno %d",
	      mode, st.traceno);
	WREF(w->g + lay.g_jit_base, w->b1);

	/* vmstate 5, RIP in trace 3 that trace 5 links to (head not yet run). */
	W32(w->g + lay.g_vmstate, 5);
	world_sample(w, w->T5, MCODE + 150);
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(n == 3 && st.trace.found == LJW_TF_LINK && st.traceno == TRACENO &&
	      st.trace.src == LJW_TS_SNAP, "%s: link: found %s traceno %d", mode,
	      ljw_tfound__name(st.trace.found), st.traceno);
	/* Scan J->trace[] (e.g. arm64-style vmstate 0) for RIP. */
	W32(w->g + lay.g_vmstate, 0);
	world_sample(w, 0, MCODE + 150);
	o.trace_scan = 16;
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(n == 3 && st.trace.found == LJW_TF_SCAN && st.traceno == TRACENO,
	      "%s: scan: found %s traceno %d", mode, ljw_tfound__name(st.trace.found), st.traceno);
	o.trace_scan = 0;

	/* EXIT: the exiting trace from J->parent, L->base from jit_base. */
	W32(w->g + lay.g_vmstate, (uint32_t)lay.vmst.exit);
	W32(w->J + lay.j_parent, TRACENO);
	W32(w->J + lay.j_exitno, 2);
	W64(w->L + lay.l_base, w->b1);
	world_sample(w, 0, 0x401000);
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(n == 3 && !strcmp(ln[0], "[trace exit]") && st.frames[0].traceno == TRACENO &&
	      st.trace.parent == TRACENO && st.trace.exitno == 2 && st.trace.src == LJW_TS_EXIT &&
	      st.traceno == TRACENO && st.trace.startline == 11, "%s: exit: %s traceno %d", mode,
	      n ? ln[0] : "-", n ? st.frames[0].traceno : -1);
	/* RECORD: the trace being compiled, J->cur.traceno. */
	W32(w->g + lay.g_vmstate, (uint32_t)lay.vmst.record);
	W16(w->J + lay.t_traceno, 7);
	world_sample(w, 0, 0x401000);
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(n == 3 && !strcmp(ln[0], "[JIT compiler]") && st.frames[0].traceno == 7 &&
	      st.traceno == -1, "%s: compiler: %s traceno %d", mode, n ? ln[0] : "-",
	      n ? st.frames[0].traceno : -1);
	W64(w->L + lay.l_base, w->b0);
	W32(w->g + lay.g_vmstate, TRACENO);

	/* Inconsistent snapshot: the helper's link returns to a non-call. */
	if (w->fr2) {
		uint64_t ir;

		memcpy(&ir, &w->mem[w->T + lay.t_ir - w->sm.base], 8);
		W64(ir + 8 * (uint64_t)(K_LINK + 1), w_bc(w, w->pt_caller, 2));
		world_sample(w, w->T, MCODE + 150);
		n = world_walk(w, wk, &o, &st, ln);
		CHECKF(n == 2 && st.trace.src == LJW_TS_BADSNAP && st.frames[0].line == 11 &&
		      st.trace.ninlined == 0, "%s: bad link: src %s, %d frames", mode,
		      ljw_tsrc__name(st.trace.src), n);
		W64(ir + 8 * (uint64_t)(K_LINK + 1), w_bc(w, w->pt_caller, 3));
	}
	ljw__delete(wk);
}

/* -- Decoder tests ------------------------------------------------------------------ */

/* A memsrc that fails every read touching [bad, bad + n) and forwards the rest. */
struct guard_src {
	struct memsrc ms;
	const struct memsrc *inner;
	uint64_t bad[4];
	uint32_t nbad;
	uint32_t touched;
};

/* Read callback of guard_src. */
static int guard__read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	struct guard_src *g = ms->ctx;
	uint32_t i;

	for (i = 0; i < g->nbad; i++)
		if (g->bad[i] >= addr && g->bad[i] < addr + len) {
			g->touched++;
			return -EFAULT;
		}
	return memsrc__read(g->inner, addr, buf, len);
}

/* Header reads avoid the fields that change after saving (marked, gclist,
 * nchild, nextroot, nextside); parse/same agree with the world. */
static void test_hdr(const struct lj_layout *lay, const char *mode)
{
	struct world *w = &wstore;
	struct guard_src gs;
	struct ljt_hdr a, b;
	uint32_t r = lay->ref_size;

	world_build(w, lay);
	world_sample(w, w->T, MCODE);
	memset(&gs, 0, sizeof(gs));
	gs.ms.read = guard__read;
	gs.ms.ctx = &gs;
	gs.inner = &w->ms_world;
	gs.bad[gs.nbad++] = w->T + r;			/* marked */
	gs.bad[gs.nbad++] = w->T + (r == 8 ? 24 : 12);	/* gclist */
	gs.bad[gs.nbad++] = w->T + lay->t_spadjust - 2;	/* nchild */
	gs.bad[gs.nbad++] = w->T + lay->t_root + 2;	/* nextroot */
	CHECKF(ljt_hdr__read(lay, &gs.ms, w->T, &a) == 0 && gs.touched == 0,
	      "%s: header read touched a changing field", mode);
	CHECKF(ljt_hdr__parse(lay, w->T, &w->mem[w->T - w->sm.base], lay->t_size, &b) == 0 &&
	      ljt_hdr__same(&a, &b), "%s: parse == read", mode);
	CHECKF(a.traceno == TRACENO && a.nsnap == 4 && a.mcode == MCODE && a.szmcode == SZMCODE &&
	      a.startpt == w->pt_caller && a.spadjust == SPADJUST && a.nk == NK && a.nins == NINS,
	      "%s: header fields", mode);
	b.startpc += 4;
	CHECKF(!ljt_hdr__same(&a, &b), "%s: startpc change unnoticed", mode);
	b = a;
	b.link = 9;
	CHECKF(!ljt_hdr__same(&a, &b), "%s: link change unnoticed", mode);
	/* Flushed since (lj_trace_flushall): traceno and link zeroed. */
	b = a;
	b.traceno = b.link = 0;
	CHECKF(!ljt_hdr__same(&a, &b) && ljt_hdr__same_run(&a, &b) && !ljt_hdr__same_run(&b, &a),
	      "%s: a flushed trace is not the one that ran", mode);
	b.link = 9;
	CHECKF(!ljt_hdr__same_run(&a, &b), "%s: flushed with another link", mode);
	b.link = 0;
	b.nsnap++;
	CHECKF(!ljt_hdr__same_run(&a, &b), "%s: flushed, another snapshot count", mode);
	CHECKF(ljt_hdr__parse(lay, w->T, &w->mem[w->T - w->sm.base], lay->t_root + 1, &b) ==
	      -EINVAL, "%s: short header accepted", mode);
	W8(w->T + r + 1, 7);
	CHECKF(ljt_hdr__parse(lay, w->T, &w->mem[w->T - w->sm.base], lay->t_size, &b) ==
	      -EINVAL, "%s: non-trace accepted", mode);
	W8(w->T + r + 1, 9);
}

/* Decode the world's snapshots directly; then hostile variants. */
static void test_decode(const struct lj_layout *lay, const char *mode)
{
	struct world *w = &wstore;
	static struct ljt_snap sn;
	struct ljt t;
	struct ljt_hdr h;
	uint32_t no = 99, i;
	uint64_t snap, map;
	int err;

	world_build(w, lay);
	world_sample(w, 0, 0);
	ljt__init(&t);
	CHECKF(ljt_hdr__read(lay, &w->ms_world, w->T, &h) == 0 &&
	      ljt__bind(&t, lay, &w->ms_world, &h) == 0, "%s: bind", mode);
	CHECKF(ljt__snap_decode(&t, 1, &sn) == 0 && sn.nframes == 1 &&
	      sn.frames[0].slot == (int32_t)(2 + w->fr2) && sn.frames[0].fn == w->fn_helper &&
	      sn.frames[0].link == w_bc(w, w->pt_caller, 3) && sn.pc == w_bc(w, w->pt_helper, 2) &&
	      sn.topslot == (w->fr2 ? 3 : -1) && sn.root_fn == 0, "%s: decode #1", mode);
	CHECKF(ljt__snap_decode(&t, 3, &sn) == 0 && sn.nframes == 0 && sn.root_fn == w->fn_helper,
	      "%s: decode #3 root_fn", mode);
	CHECKF(ljt__snap_find(&t, SZMCODE, &no) == -ENOENT, "%s: ofs == szmcode", mode);
	CHECKF(ljt__snap_decode(&t, 4, &sn) == -EINVAL, "%s: snapno == nsnap", mode);

	memcpy(&snap, &w->mem[w->T + lay->t_snap - w->sm.base], 8);
	memcpy(&map, &w->mem[w->T + lay->t_snapmap - w->sm.base], 8);
	/* Equal offsets: the rightmost wins (lj_trace_unwind). */
	W16(snap + 2 * lay->snap_size + lay->snap_mcofs, 100);
	ljt__bind(&t, lay, &w->ms_world, &h);
	CHECKF(ljt__snap_find(&t, 100, &no) == 0 && no == 2, "%s: equal mcofs -> %u", mode, no);
	/* Decreasing offsets, a first offset != 0: rejected. */
	W16(snap + 2 * lay->snap_size + lay->snap_mcofs, 50);
	ljt__bind(&t, lay, &w->ms_world, &h);
	CHECKF(ljt__snap_find(&t, 120, &no) == -EINVAL, "%s: decreasing mcofs", mode);
	W16(snap + 2 * lay->snap_size + lay->snap_mcofs, 200);
	W16(snap + lay->snap_mcofs, 5);
	ljt__bind(&t, lay, &w->ms_world, &h);
	CHECKF(ljt__snap_find(&t, 10, &no) == -EINVAL, "%s: mcofs[0] != 0", mode);
	W16(snap + lay->snap_mcofs, 0);
	/* mapofs beyond the map, and a next mapofs before this one. */
	W32(snap + 1 * lay->snap_size + lay->snap_mapofs, 1000);
	ljt__bind(&t, lay, &w->ms_world, &h);
	CHECKF(ljt__snap_decode(&t, 1, &sn) == -EINVAL, "%s: mapofs out of range", mode);
	CHECKF(ljt__snap_decode(&t, 0, &sn) == -EINVAL, "%s: next mapofs out of range", mode);
	W32(snap + 1 * lay->snap_size + lay->snap_mapofs, w->fr2 ? 2 : 1);
	/* Entries out of slot order (or a slot twice) are rejected. */
	if (w->fr2) {
		uint32_t e0, e1;

		memcpy(&e0, &w->mem[map + 4 * 2 - w->sm.base], 4);
		memcpy(&e1, &w->mem[map + 4 * 3 - w->sm.base], 4);
		W32(map + 4 * 2, e1);
		W32(map + 4 * 3, e0);
		ljt__bind(&t, lay, &w->ms_world, &h);
		CHECKF(ljt__snap_decode(&t, 1, &sn) == -EINVAL, "%s: unsorted entries", mode);
		W32(map + 4 * 2, e0);
		W32(map + 4 * 3, e0);
		ljt__bind(&t, lay, &w->ms_world, &h);
		CHECKF(ljt__snap_decode(&t, 1, &sn) == -EINVAL, "%s: duplicate slot", mode);
		W32(map + 4 * 2, e0);
		W32(map + 4 * 3, e1);
	} else {
		/* non-FR2: one link word per frame entry, or nothing decodes */
		W8(snap + 1 * lay->snap_size + lay->snap_nent, 0);
		ljt__bind(&t, lay, &w->ms_world, &h);
		CHECKF(ljt__snap_decode(&t, 1, &sn) == -EINVAL, "%s: links without frames", mode);
		W8(snap + 1 * lay->snap_size + lay->snap_nent, 1);
	}
	/* A frame ref that is no KGC function: no function, walker falls back. */
	ljt__bind(&t, lay, &w->ms_world, &h);
	{
		uint64_t obj;
		uint8_t irt;

		CHECKF(ljt__kgc(&t, NK - 1, &obj, &irt) == -EINVAL &&
		      ljt__kgc(&t, REF_BIAS, &obj, &irt) == -EINVAL &&
		      (w->fr2 ? ljt__kgc(&t, REF_BIAS - 1, &obj, &irt) != 0 : 1),
		      "%s: constant refs out of range accepted", mode);
	}
	/* Huge counts over small memory: errors, never a crash. */
	h.nsnap = 65535;
	h.nsnapmap = 0xffffff;
	ljt__bind(&t, lay, &w->ms_world, &h);
	for (i = 0; i < 2000; i++) {
		uint32_t k = (uint32_t)rand() % 70000;

		err = ljt__snap_find(&t, (uint64_t)rand() % (SZMCODE + 10), &no);
		CHECKF(err == 0 || err == -EINVAL || err == -EFAULT || err == -ENOENT,
		      "%s: find returned %d", mode, err);
		if (err == 0)
			CHECKF(no < 65535, "%s: snapno %u out of range", mode, no);
		err = ljt__snap_decode(&t, k, &sn);
		CHECKF(err == 0 || err == -EINVAL || err == -EFAULT, "%s: decode returned %d", mode, err);
		if (err == 0)
			CHECKF(sn.nframes <= LJT_MAX_FRAMES, "%s: %u frames", mode, sn.nframes);
	}
	ljt__exit(&t);
}

/* Several frames and a continuation in one snapshot: the links go to the
 * right frames.  LuaJIT's snapshot_framelinks writes (non-FR2) the PC, then
 * one word per frame above the base, innermost first (a continuation frame:
 * ftsz, then contpc); lj_snap_restore hands them out from the end in
 * ascending slot order.  FR2 keeps each link in its frame's link slot. */
static void test_links(const struct lj_layout *lay, const char *mode)
{
	struct world *w = &wstore;
	static struct ljt_snap sn;
	uint32_t map[32], n = 0, nk = REF_BIAS - 16, i;
	size_t sztr = (lay->t_size + 7) & ~(size_t)7, szins = 8 * (REF_BIAS + 1 - nk);
	uint64_t T, ir, snap, smap, fa = 0x1110, fb = 0x2220, fd = 0x4440;
	uint64_t la = 0x5550, lb = 0x6662 /* CONT */, ld = 0x7770, cpc = 0x8880, pc = 0x9990;
	struct ljt_hdr h;
	struct ljt t;

	world_build(w, lay);
	if (w->fr2) {
		/* A: fn 2, link 3; cont PC 5; B: fn 6, link 7; D: fn 9, link 10 */
		uint32_t kfa = nk, kfb = nk + 2, kfd = nk + 4, kla = nk + 6, klb = nk + 8,
			 kld = nk + 10, kc = nk + 12;

		map[n++] = SNAP(2, 0, kfa);
		map[n++] = SNAP(3, 0x10000, kla);
		map[n++] = SNAP(5, 0x20000, kc);
		map[n++] = SNAP(6, 0, kfb);
		map[n++] = SNAP(7, 0x10000, klb);
		map[n++] = SNAP(9, 0, kfd);
		map[n++] = SNAP(10, 0x10000, kld);
		map[n++] = (uint32_t)(pc << 8 | 9);
		map[n++] = (uint32_t)(pc >> 24);
		T = synth__obj(&w->sm, sztr + szins + lay->snap_size + 4 * n, 9);
		ir = T + sztr - 8 * (uint64_t)nk;
		w_kgc(w, ir, kfa, fa);
		w_kgc(w, ir, kfb, fb);
		w_kgc(w, ir, kfd, fd);
		w_ir(w, ir, kla, 0, 14, IR_KNUM);
		W64(ir + 8 * (kla + 1), la);
		w_ir(w, ir, klb, 0, 14, IR_KNUM);
		W64(ir + 8 * (klb + 1), lb);
		w_ir(w, ir, kld, 0, 14, IR_KNUM);
		W64(ir + 8 * (kld + 1), ld);
		w_ir(w, ir, kc, 0, 14, IR_KNUM);
		W64(ir + 8 * (kc + 1), cpc);
	} else {
		/* A: fn 2; cont 5; B: fn 6; D: fn 9 */
		map[n++] = SNAP(2, 0x10000, nk);
		map[n++] = SNAP(5, 0x20000, nk + 1);
		map[n++] = SNAP(6, 0x10000, nk + 2);
		map[n++] = SNAP(9, 0x10000, nk + 3);
		map[n++] = (uint32_t)pc;
		map[n++] = (uint32_t)ld;	/* innermost first */
		map[n++] = (uint32_t)lb;
		map[n++] = (uint32_t)cpc;
		map[n++] = (uint32_t)la;
		T = synth__obj(&w->sm, sztr + szins + lay->snap_size + 4 * n, 9);
		ir = T + sztr - 8 * (uint64_t)nk;
		w_kgc(w, ir, nk, fa);
		w_ir(w, ir, nk + 1, 0x1234, 0, 25 /* KPTR */);
		w_kgc(w, ir, nk + 2, fb);
		w_kgc(w, ir, nk + 3, fd);
	}
	snap = T + sztr + szins;
	smap = snap + lay->snap_size;
	W16(T + lay->t_nsnap, 1);
	W32(T + lay->t_nins, REF_BIAS + 1);
	W64(T + lay->t_ir, ir);
	W32(T + lay->t_nk, nk);
	W32(T + lay->t_nsnapmap, n);
	W64(T + lay->t_snap, snap);
	W64(T + lay->t_snapmap, smap);
	W16(T + lay->t_traceno, 9);
	W32(T + lay->t_szmcode, 10);
	W8(snap + lay->snap_nent, w->fr2 ? 7 : 4);
	for (i = 0; i < n; i++)
		W32(smap + 4 * i, map[i]);
	world_sample(w, 0, 0);
	ljt__init(&t);
	CHECKF(ljt_hdr__read(lay, &w->ms_world, T, &h) == 0 && ljt__bind(&t, lay, &w->ms_world, &h) == 0 &&
	      ljt__snap_decode(&t, 0, &sn) == 0, "%s: links: decode", mode);
	CHECKF(sn.nframes == 3 && sn.pc == pc && ljt_snap__contpc(&sn, 5) == cpc,
	      "%s: links: %u frames, pc %#llx, contpc %#llx", mode, sn.nframes,
	      (unsigned long long)sn.pc, (unsigned long long)ljt_snap__contpc(&sn, 5));
	if (sn.nframes == 3) {
		CHECKF(sn.frames[0].slot == 2 && sn.frames[0].fn == fa && sn.frames[0].link == la,
		      "%s: frame A slot %d link %#llx", mode, sn.frames[0].slot,
		      (unsigned long long)sn.frames[0].link);
		CHECKF(sn.frames[1].slot == 6 && sn.frames[1].fn == fb && sn.frames[1].link == lb,
		      "%s: frame B slot %d link %#llx", mode, sn.frames[1].slot,
		      (unsigned long long)sn.frames[1].link);
		CHECKF(sn.frames[2].slot == 9 && sn.frames[2].fn == fd && sn.frames[2].link == ld,
		      "%s: frame D slot %d link %#llx", mode, sn.frames[2].slot,
		      (unsigned long long)sn.frames[2].link);
	}
	CHECKF(sn.topslot == (w->fr2 ? 9 : -1), "%s: topslot %d", mode, sn.topslot);
	ljt__exit(&t);
}

/* A large snapshot array is searched piecewise (no whole read). */
static void test_large(const struct lj_layout *lay, const char *mode)
{
	static uint8_t mem[40000 * 12];
	struct memsrc_window win = { 0x10000000, sizeof(mem), mem };
	struct memsrc_windows ws = { &win, 1 };
	struct memsrc ms;
	struct ljt_hdr h;
	struct ljt t;
	uint32_t n = 40000, i, no = 0;
	int ok = 1;

	for (i = 0; i < n; i++) {	/* snapshot i starts at offset i + i / 2 */
		uint32_t m = i + i / 2;

		mem[i * lay->snap_size + lay->snap_mcofs] = (uint8_t)m;
		mem[i * lay->snap_size + lay->snap_mcofs + 1] = (uint8_t)(m >> 8);
	}
	memsrc__init_windows(&ms, &ws, NULL);
	memset(&h, 0, sizeof(h));
	h.gct = 9;
	h.traceno = 1;
	h.nsnap = n;
	h.nk = REF_BIAS;
	h.nins = REF_BIAS + 1;
	h.snap = win.addr;
	h.szmcode = 65535;
	ljt__init(&t);
	CHECKF(ljt__bind(&t, lay, &ms, &h) == 0, "%s: bind large", mode);
	for (i = 0; i + 1 < n && ok; i += 97) {
		uint32_t m = i + i / 2, next = (i + 1) + (i + 1) / 2;

		ok = ljt__snap_find(&t, m, &no) == 0 && no == i &&
		     ljt__snap_find(&t, next - 1, &no) == 0 && no == i;
	}
	CHECKF(ljt__snap_find(&t, 59998 + 5, &no) == 0 && no == n - 1, "%s: last snapshot", mode);
	CHECKF(ok, "%s: piecewise search wrong at snapshot %u (got %u)", mode, i, no);
	CHECKF(t.snap.state == 2, "%s: large array was read whole", mode);
	ljt__exit(&t);
}

/* Random bytes in the sample's TRACE window and in the trace's memory. */
static void test_fuzz(const struct lj_layout *lay, const char *mode)
{
	struct world *w = &wstore;
	struct ljw *wk = ljw__new();
	struct ljw_opts o = { .vm_lo = 0x1000, .vm_hi = 0x2000, .trace_scan = 16 };
	struct ljw_stack st;
	char ln[8][160];
	size_t sz, j;
	int i, bad = 0;

	for (i = 0; i < 400; i++) {
		world_build(w, lay);
		sz = w->sm.used - (w->T - w->sm.base);
		/* scramble part of the trace allocation (header kept plausible half the time) */
		for (j = (i & 1) ? lay->t_size : 0; j < sz; j++)
			if (rand() % 4 == 0)
				w->mem[w->T - w->sm.base + j] = (uint8_t)rand();
		world_sample(w, w->T, MCODE + (uint64_t)(rand() % (SZMCODE + 50)));
		if (i % 3 == 0)
			W64(w->cf - 24 - SPADJUST, MCODE + (uint64_t)(rand() % 400));
		if (world_walk(w, wk, &o, &st, ln) < 0 || st.nframes > 600)
			bad++;
	}
	CHECKF(bad == 0, "%s: %d fuzzed walks failed", mode, bad);
	ljw__delete(wk);
}

int main(void)
{
	const struct lj_layout *gc64 = lj_layout__builtin(LJ_FAMILY_UPSTREAM, 1);
	const struct lj_layout *gc32 = lj_layout__builtin(LJ_FAMILY_UPSTREAM, 0);

	srand(12345);
	if (!gc64 || !gc32) {
		fprintf(stderr, "no built-in upstream layouts\n");
		return 1;
	}
	test_hdr(gc64, "gc64");
	test_hdr(gc32, "gc32");
	test_walk(gc64, "gc64");
	test_walk(gc32, "gc32");
	test_decode(gc64, "gc64");
	test_decode(gc32, "gc32");
	test_links(gc64, "gc64");
	test_links(gc32, "gc32");
	test_large(gc64, "gc64");
	test_fuzz(gc64, "gc64");
	test_fuzz(gc32, "gc32");
	printf("test_ljtrace: %d checks passed, %d failed\n", checks - failures, failures);
	return failures ? 1 : 0;
}
