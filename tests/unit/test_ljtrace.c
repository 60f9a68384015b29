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
#include "tests/unit/synth.h"
#include "tests/unit/check.h"

int failures, checks;

#define WORLD_SIZE	(512 * 1024)
#define MCODE		UINT64_C(0x7f0000100000)
#define SZMCODE		300
#define TRACENO		3
#define SPADJUST	16
#define REF_BIAS	0x8000u
#define NK		(REF_BIAS - 8)
#define NINS		(REF_BIAS + 4)
#define K_HELPER	(REF_BIAS - 8)	/* KGC helper (GC64: + value slot) */
#define K_LINK		(REF_BIAS - 6)	/* KNUM: helper's frame link (GC64) */
#define K_CALLER	(REF_BIAS - 4)	/* KGC caller */
#define IR_KGC		24
#define IR_KNUM		28
#define IRT_FUNC	8
#define SNAP(slot, flags, ref)	((uint32_t)(slot) << 24 | (flags) | (ref))
#define INS(op, a, d)	((uint32_t)(op) | (uint32_t)(a) << 8 | (uint32_t)(d) << 16)

/* -- Synthetic world ----------------------------------------------------------- */

struct world {
	const struct lj_layout *lay;
	uint32_t fr2, ref;
	struct synth sm;	/* over mem */
	uint8_t mem[WORLD_SIZE];
	uint64_t g, L, J, stack, cf, b0, b1;
	uint64_t pt_main, pt_caller, pt_helper, fn_main, fn_caller, fn_helper;
	uint64_t T, T5, tarr;
	struct ljs_sample s;
	uint8_t secbuf[64 * 1024];
	struct memsrc_window win[1];
	struct memsrc_windows ws;
	struct memsrc ms_world, ms;
};

/* A prototype: bytecode, one string constant, u8 line offsets. */
static uint64_t w_proto(struct world *w, const uint32_t *bc, uint32_t nbc, int firstline,
			const char *kstr, uint64_t chunk)
{
	const struct lj_layout *lay = w->lay;
	uint32_t i;
	size_t sz = lay->pt_size + 4 * nbc + w->ref + nbc + 8;
	uint64_t pt = synth__obj(&w->sm, sz, 7), k;

	W32(pt + lay->pt_sizebc, nbc);
	W32(pt + lay->pt_sizept, sz);
	W32(pt + lay->pt_sizekgc, 1);
	W32(pt + lay->pt_firstline, (uint32_t)firstline);
	W32(pt + lay->pt_numline, nbc);
	WREF(pt + lay->pt_chunkname, chunk);
	for (i = 0; i < nbc; i++)
		W32(pt + lay->pt_size + 4 * i, bc[i]);
	k = pt + lay->pt_size + 4 * nbc + w->ref;
	WREF(k - w->ref, synth__str(&w->sm, kstr));
	WREF(pt + lay->pt_k, k);
	for (i = 0; i + 1 < nbc; i++)	/* position i + 1 is line firstline + i + 1 */
		W8(k + i, i + 1);
	WREF(pt + lay->pt_lineinfo, k);
	return pt;
}

/* A Lua function object. */
static uint64_t w_lfunc(struct world *w, uint64_t pt)
{
	uint64_t fn = synth__obj(&w->sm, 64, 8);

	WREF(fn + w->lay->fn_pc, pt + w->lay->pt_size);
	return fn;
}

/* Bytecode address of position pos of a prototype. */
static uint64_t w_bc(struct world *w, uint64_t pt, uint32_t pos)
{
	return pt + w->lay->pt_size + 4 * (uint64_t)pos;
}

/* Frame header at f = BASE - 8. */
static void w_frame(struct world *w, uint64_t f, uint64_t fn, uint64_t ftsz)
{
	if (w->fr2) {
		W64(f - 8, fn | (UINT64_C(0x1fff7) << 47));
		W64(f, ftsz);
	} else {
		W32(f, fn);
		W32(f + 4, ftsz);
	}
}

/* An IR instruction: op1, op2, t, o. */
static void w_ir(struct world *w, uint64_t ir, uint32_t ref, uint32_t op12, uint8_t t, uint8_t o)
{
	uint64_t a = ir + 8 * (uint64_t)ref;

	W32(a, op12);
	W8(a + 4, t);
	W8(a + 5, o);
}

/* A KGC function constant at ref (GC64: the pointer in the next slot). */
static void w_kgc(struct world *w, uint64_t ir, uint32_t ref, uint64_t fn)
{
	if (w->fr2) {
		w_ir(w, ir, ref, 0, IRT_FUNC, IR_KGC);
		W64(ir + 8 * (uint64_t)(ref + 1), fn);
	} else {
		w_ir(w, ir, ref, (uint32_t)fn, IRT_FUNC, IR_KGC);
	}
}

/* The snapshot map of the world's trace (see the file comment); returns
 * the number of words, fills the snapshots' mapofs/nent. */
static uint32_t w_snapmap(struct world *w, uint32_t *map, uint32_t *mapofs, uint32_t *nent)
{
	uint64_t pc0 = w_bc(w, w->pt_caller, 1), pc1 = w_bc(w, w->pt_helper, 2);
	uint64_t pc2 = w_bc(w, w->pt_caller, 3), pc3 = w_bc(w, w->pt_helper, 3);
	uint64_t ret = w_bc(w, w->pt_caller, 3);	/* after CALL at caller:2 */
	uint32_t n = 0, fs = 2 + w->fr2;		/* helper's function slot (A=1) */

#define PCW(pc, top) do { if (w->fr2) { uint64_t x_ = (pc) << 8 | (top); \
		map[n++] = (uint32_t)x_; map[n++] = (uint32_t)(x_ >> 32); } \
		else map[n++] = (uint32_t)(pc); } while (0)
	mapofs[0] = n; nent[0] = 0;
	PCW(pc0, 0);
	mapofs[1] = n;
	if (w->fr2) {
		nent[1] = 2;
		map[n++] = SNAP(fs, 0, K_HELPER);
		map[n++] = SNAP(fs + 1, 0x10000, K_LINK);
		PCW(pc1, fs);
	} else {
		nent[1] = 1;
		map[n++] = SNAP(fs, 0x10000, K_HELPER);
		PCW(pc1, 0);
		map[n++] = (uint32_t)ret;		/* helper's link */
	}
	mapofs[2] = n; nent[2] = 0;
	PCW(pc2, 0);
	mapofs[3] = n; nent[3] = 1;
	map[n++] = SNAP(0, w->fr2 ? 0 : 0x10000, K_HELPER);
	PCW(pc3, 0);
#undef PCW
	return n;
}

/* A GCtrace the way trace_save lays it out: header, IR, snapshots, map. */
static uint64_t w_trace(struct world *w, uint32_t traceno, uint64_t mcode, uint32_t link)
{
	const struct lj_layout *lay = w->lay;
	uint32_t map[64], mapofs[4], nent[4], nmap, i;
	static const uint32_t mcofs[4] = { 0, 100, 200, 260 };
	size_t sztr = (lay->t_size + 7) & ~(size_t)7, szins = 8 * (NINS - NK);
	uint64_t T, ir, snap, smap;

	nmap = w_snapmap(w, map, mapofs, nent);
	T = synth__obj(&w->sm, sztr + szins + 4 * lay->snap_size + 4 * nmap, 9);
	ir = T + sztr - 8 * (uint64_t)NK;
	snap = T + sztr + szins;
	smap = snap + 4 * lay->snap_size;
	W16(T + lay->t_nsnap, 4);
	W32(T + lay->t_nins, NINS);
	W64(T + lay->t_ir, ir);
	W32(T + lay->t_nk, NK);
	W32(T + lay->t_nsnapmap, nmap);
	W64(T + lay->t_snap, snap);
	W64(T + lay->t_snapmap, smap);
	WREF(T + lay->t_startpt, w->pt_caller);
	WREF(T + lay->t_startpc, w_bc(w, w->pt_caller, 1));
	W32(T + lay->t_szmcode, SZMCODE);
	W64(T + lay->t_mcode, mcode);
	W16(T + lay->t_spadjust, SPADJUST);
	W16(T + lay->t_traceno, traceno);
	W16(T + lay->t_link, link);
	w_kgc(w, ir, K_HELPER, w->fn_helper);
	w_kgc(w, ir, K_CALLER, w->fn_caller);
	if (w->fr2) {
		w_ir(w, ir, K_LINK, 0, 14, IR_KNUM);
		W64(ir + 8 * (uint64_t)(K_LINK + 1), w_bc(w, w->pt_caller, 3));
	}
	for (i = 0; i < 4; i++) {
		uint64_t s = snap + (uint64_t)i * lay->snap_size;

		W32(s + lay->snap_mapofs, mapofs[i]);
		W16(s + lay->snap_mcofs, mcofs[i]);
		W8(s + lay->snap_nent, nent[i]);
		W8(s + lay->snap_nslots, 8);
	}
	for (i = 0; i < nmap; i++)
		W32(smap + 4 * i, map[i]);
	return T;
}

/* Build the world of the file comment for a layout. */
static void world_build(struct world *w, const struct lj_layout *lay)
{
	const uint32_t bc_main[] = { INS(92, 0, 0), INS(54, 0, 0) /* GGET "caller" */,
				     INS(66, 0, 0x0201) /* CALL A=0 */, INS(75, 0, 1) };
	const uint32_t bc_caller[] = { INS(89, 3, 0), INS(54, 1, 0) /* GGET 1 "helper" */,
				       INS(66, 1, 0x0202) /* CALL A=1 */,
				       INS(87, 0, TRACENO) /* JLOOP */, INS(75, 0, 1) };
	const uint32_t bc_helper[] = { INS(89, 1, 0), INS(41, 0, 7), INS(22, 0, 0),
				       INS(76, 0, 2) };
	uint32_t hdr;
	uint64_t chunk, gg;

	memset(w, 0, sizeof(*w));
	w->lay = lay;
	w->ref = lay->ref_size;
	w->fr2 = w->ref == 8;
	synth__init(&w->sm, lay, w->fr2 ? UINT64_C(0x7e0000000000) : UINT64_C(0x40000000), w->mem,
		    sizeof(w->mem));
	hdr = 8 * (1 + w->fr2);
	synth__alloc(&w->sm, 64);
	gg = synth__alloc(&w->sm, lay->gg_ofs_g + (uint64_t)lay->g2j + lay->j_parent + 64);
	w->L = gg;
	w->g = gg + lay->gg_ofs_g;
	w->J = w->g + (uint64_t)lay->g2j;
	W8(w->L + w->ref + 1, 6);
	WREF(w->L + lay->l_glref, w->g);
	WREF(w->g + lay->g_mainthref, w->L);
	WREF(w->g + lay->g_cur_L, w->L);
	W32(w->g + lay->g_vmstate, TRACENO);
	chunk = synth__str(&w->sm, "@t.lua");
	w->pt_main = w_proto(w, bc_main, 4, 0, "caller", chunk);
	w->pt_caller = w_proto(w, bc_caller, 5, 10, "helper", chunk);
	w->pt_helper = w_proto(w, bc_helper, 4, 20, "x", chunk);
	w->fn_main = w_lfunc(w, w->pt_main);
	w->fn_caller = w_lfunc(w, w->pt_caller);
	w->fn_helper = w_lfunc(w, w->pt_helper);
	/* Lua stack: bottom, main chunk (FRAME_CP), caller (called at main:2) */
	w->stack = synth__alloc(&w->sm, 8 * 64);
	W64(w->stack, w->L);
	w->b0 = w->stack + 8 * (1 + w->fr2) + hdr;
	w_frame(w, w->b0 - 8, w->fn_main, hdr | 5);
	w->b1 = w->b0 + hdr;
	w_frame(w, w->b1 - 8, w->fn_caller, w_bc(w, w->pt_main, 3));
	WREF(w->L + lay->l_stack, w->stack);
	W32(w->L + lay->l_stacksize, 64);
	W64(w->L + lay->l_base, w->b0);	/* stale while on trace */
	W64(w->L + lay->l_top, w->b1 + 8 * 8);
	WREF(w->g + lay->g_jit_base, w->b1);
	/* the interpreter C frame, with room below it for the trace's stack */
	w->cf = synth__alloc(&w->sm, 256 + lay->cf_size) + 256;
	W64(w->L + lay->l_cframe, w->cf);
	WREF(w->cf + lay->cf_l, w->L);
	WREF(w->cf + lay->cf_pc, w->L);
	W32(w->cf + lay->cf_nres, 1);
	/* J->trace[] with trace 3 and trace 5 (whose link is trace 3) */
	w->tarr = synth__alloc(&w->sm, 16 * w->ref);
	W64(w->J + lay->j_trace, w->tarr);
	W32(w->J + lay->j_sizetrace, 16);
	w->T = w_trace(w, TRACENO, MCODE, 0);
	w->T5 = w_trace(w, 5, MCODE + 0x1000, TRACENO);
	WREF(w->tarr + w->ref * TRACENO, w->T);
	WREF(w->tarr + w->ref * 5, w->T5);
}

/* The sample: G, L, LSTACK, USTACK (the native stack below the cframe,
 * where a trace's calls push their return addresses) and TRACE (header of
 * T, or none) copied now. */
static void world_sample(struct world *w, uint64_t T, uint64_t ip)
{
	const struct lj_layout *lay = w->lay;
	struct { int kind; uint64_t addr; size_t len; } secs[] = {
		{ LJS_SEC_G, w->g, lay->g_size },
		{ LJS_SEC_L, w->L, lay->l_size },
		{ LJS_SEC_LSTACK, w->stack, 8 * 64 },
		{ LJS_SEC_TRACE, T, lay->t_size },
		{ LJS_SEC_USTACK, w->cf - 256, 256 + lay->cf_size },
	};
	size_t off = 0, i;

	memset(&w->s, 0, sizeof(w->s));
	w->s.g = w->g;
	w->s.flags = LJS_SAMPLE_F_LUAJIT | LJS_SAMPLE_F_REGS_VALID;
	w->s.regs.ip = ip;
	for (i = 0; i < 5; i++) {
		struct ljs_section *sec;

		if (!secs[i].addr)
			continue;
		sec = &w->s.sec[w->s.nsec++];
		sec->kind = (uint16_t)secs[i].kind;
		sec->addr = secs[i].addr;
		sec->len = sec->want = (uint32_t)secs[i].len;
		memcpy(w->secbuf + off, &w->mem[secs[i].addr - w->sm.base], secs[i].len);
		sec->data = w->secbuf + off;
		off += (secs[i].len + 7) & ~(size_t)7;
	}
	w->win[0].addr = w->sm.base;
	w->win[0].len = w->sm.used;
	w->win[0].data = w->mem;
	w->ws.w = w->win;
	w->ws.n = 1;
	memsrc__init_windows(&w->ms_world, &w->ws, NULL);
	memsrc__init_sample(&w->ms, &w->s, &w->ms_world);
}

/* Walk and render; number of frames. */
static int world_walk(struct world *w, struct ljw *wk, const struct ljw_opts *o,
		      struct ljw_stack *st, char lines[][160])
{
	size_t i;

	if (ljw__walk(wk, w->lay, &w->s, &w->ms, o, st))
		return -1;
	for (i = 0; i < st->nframes && i < 8; i++)
		ljw_frame__format(&st->frames[i], lines[i], 160);
	return (int)i;
}

/* -- Walker tests ---------------------------------------------------------------- */

static struct world wstore;

/* A sample inside the trace's machine code, per snapshot, and the fallbacks. */
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

	/* RIP in C code called from the trace: the call's return address. */
	W64(w->cf - 24 - SPADJUST, MCODE + 151);
	world_sample(w, w->T, 0x401000);
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(n == 3 && st.trace.src == LJW_TS_SNAP_CALL && st.trace.snapno == 1 &&
	      st.trace.mcofs == 150 && (st.frames[0].flags & LJW_F_INLINED),
	      "%s: call site: src %s snap %d", mode, ljw_tsrc__name(st.trace.src), st.trace.snapno);
	/* The slot is read from the sample's stack copy, never from memory
	 * read later: the same value in the world but not in the copy. */
	W64(w->cf - 24 - SPADJUST, 0);
	world_sample(w, w->T, 0x401000);
	W64(w->cf - 24 - SPADJUST, MCODE + 151);
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(st.trace.src == LJW_TS_START, "%s: call slot read from memory: src %s", mode,
	      ljw_tsrc__name(st.trace.src));
	/* ... from the native unwinder instead */
	W64(w->cf - 24 - SPADJUST, 0);
	o.trace_ip = MCODE + 201;
	n = world_walk(w, wk, &o, &st, ln);
	CHECKF(n == 2 && st.trace.src == LJW_TS_SNAP_CALL && st.trace.snapno == 2,
	      "%s: trace_ip: src %s snap %d", mode, ljw_tsrc__name(st.trace.src), st.trace.snapno);
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
