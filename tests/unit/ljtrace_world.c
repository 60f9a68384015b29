/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljtrace_world.c -- builds test_ljtrace's synthetic world; see
 * ljtrace_world.h and the file comment of test_ljtrace.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/ljtrace.h"
#include "tests/unit/ljtrace_world.h"

/* -- Synthetic world ----------------------------------------------------------- */


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
uint64_t w_bc(struct world *w, uint64_t pt, uint32_t pos)
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
void w_ir(struct world *w, uint64_t ir, uint32_t ref, uint32_t op12, uint8_t t, uint8_t o)
{
	uint64_t a = ir + 8 * (uint64_t)ref;

	W32(a, op12);
	W8(a + 4, t);
	W8(a + 5, o);
}

/* A KGC function constant at ref (GC64: the pointer in the next slot). */
void w_kgc(struct world *w, uint64_t ir, uint32_t ref, uint64_t fn)
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
	static const uint32_t sref[4] = { REF_BIAS + 1, REF_BIAS + 2, REF_BIAS + 3, REF_BIAS + 3 };
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
		W16(s + lay->snap_ref, sref[i]);
		W8(s + lay->snap_nent, nent[i]);
		W8(s + lay->snap_nslots, 8);
	}
	for (i = 0; i < nmap; i++)
		W32(smap + 4 * i, map[i]);
	return T;
}

/* Build the world of the file comment for a layout. */
void world_build(struct world *w, const struct lj_layout *lay)
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
void world_sample(struct world *w, uint64_t T, uint64_t ip)
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
	for (i = 0; i < 5; i++)
		if (secs[i].addr)
			synth__section(&w->sm, &w->s, secs[i].kind, secs[i].addr, secs[i].len,
				       w->secbuf, &off);
	synth__memsrc(&w->sm, w->win, &w->ws, &w->ms_world, NULL);
	memsrc__init_sample(&w->ms, &w->s, &w->ms_world);
}

/* Walk and render; number of frames. */
int world_walk(struct world *w, struct ljw *wk, const struct ljw_opts *o,
	       struct ljw_stack *st, char lines[][160])
{
	size_t i;

	if (ljw__walk(wk, w->lay, &w->s, &w->ms, o, st))
		return -1;
	for (i = 0; i < st->nframes && i < 8; i++)
		ljw_frame__format(&st->frames[i], lines[i], 160);
	return (int)i;
}
