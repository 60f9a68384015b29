/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_ljwalk.c -- the frame walker on synthetic LuaJIT memory, for the
 * GC64 and the non-GC64 encodings (same world, different layout), and on
 * hostile input: random bytes in every section, self-referencing and
 * huge links, cframe and resumer cycles, truncated windows.  The walker must
 * never crash or hang and must always return a bounded stack whose failures
 * are counted [unknown: reason] frames.
 *
 * The synthetic world is built from LuaJIT's own rules (lj_frame.h,
 * lj_debug.c): a main chunk "@t.lua" (firstline 0) calls the global foo at
 * line 2; foo (firstline 5) calls the C function held in its local "cb" at
 * line 7.  LuaJIT's traceback for that stack is, by those rules:
 *     [C]: in function 'cb'
 *     t.lua:7: in function 'foo'
 *     t.lua:2: in main chunk
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/frame_name.h"
#include "unwind/ljlayout.h"
#include "unwind/ljwalk.h"
#include "unwind/memsrc.h"
#include "tests/unit/synth.h"
#include "tests/unit/check.h"

int failures, checks;

/* -- Synthetic world --------------------------------------------------------- */

#define WORLD_SIZE (256 * 1024)

struct world {
	const struct lj_layout *lay;
	struct synth sm;		/* over mem */
	uint8_t mem[WORLD_SIZE];
	uint64_t g, L, stack, stacksize, cf, top_base;
	uint64_t f_main, f_foo, f_cap;	/* frame slot addresses (BASE - 8) */
	uint64_t fn_main, fn_foo, fn_cap, pt_main, pt_foo, chunk;
	struct ljs_sample s;
	struct memsrc_window win[1];
	struct memsrc_windows ws;
	struct memsrc ms_world, ms;
};

/* A stack slot holding a function (FR2: tagged TValue; else the GCRef). */
static void w_slotfn(struct world *w, uint64_t slot, uint64_t fn, uint32_t itype)
{
	if (w->lay->ref_size == 8)
		W64(slot, fn | ((uint64_t)itype << 47));
	else
		W32(slot, fn);
}

/* Frame header at f = BASE - 8: function and ftsz. */
static void w_frame(struct world *w, uint64_t f, uint64_t fn, int64_t ftsz)
{
	if (w->lay->ref_size == 8) {
		w_slotfn(w, f - 8, fn, 0xfffffff7u);
		W64(f, (uint64_t)ftsz);
	} else {
		W32(f, fn);
		W32(f + 4, (uint32_t)ftsz);
	}
}

/* A prototype: header, bytecode, one string constant, u8 line info, varinfo. */
static uint64_t w_proto(struct world *w, const uint32_t *bc, uint32_t nbc, int firstline,
			int numline, const uint8_t *lines, const char *kstr,
			const uint8_t *varinfo, size_t nvar, uint64_t chunk, int vararg)
{
	const struct lj_layout *lay = w->lay;
	uint32_t r = lay->ref_size, i;
	size_t sz = lay->pt_size + 4 * nbc + r + (nbc - 1) + nvar + 8;
	uint64_t pt = synth__obj(&w->sm, sz, 7), p, k, li, vi;

	W8(pt + lay->pt_numparams, 0);
	W8(pt + lay->pt_framesize, 4);
	W32(pt + lay->pt_sizebc, nbc);
	W32(pt + lay->pt_sizept, sz);
	W32(pt + lay->pt_sizekgc, 1);
	W8(pt + lay->pt_sizeuv, 0);
	W8(pt + lay->pt_flags, vararg ? 2 : 0);
	W32(pt + lay->pt_firstline, (uint32_t)firstline);
	W32(pt + lay->pt_numline, (uint32_t)numline);
	WREF(pt + lay->pt_chunkname, chunk);
	p = pt + lay->pt_size;
	for (i = 0; i < nbc; i++)
		W32(p + 4 * i, bc[i]);
	k = p + 4 * nbc + r;	/* kgc[-1] sits right before k */
	WREF(k - r, synth__str(&w->sm, kstr));
	WREF(pt + lay->pt_k, k);
	li = k;
	for (i = 0; i + 1 < nbc; i++)
		W8(li + i, lines[i]);
	WREF(pt + lay->pt_lineinfo, li);
	vi = li + nbc - 1;
	if (nvar) {
		memcpy(&w->mem[vi - w->sm.base], varinfo, nvar);
		WREF(pt + lay->pt_varinfo, vi);
	}
	return pt;
}

/* A Lua function object for a prototype. */
static uint64_t w_lfunc(struct world *w, uint64_t pt)
{
	uint64_t fn = synth__obj(&w->sm, 64, 8);

	W8(fn + w->lay->fn_ffid, 0);
	WREF(fn + w->lay->fn_pc, pt + w->lay->pt_size);
	return fn;
}

#define INS(op, a, d) ((uint32_t)(op) | (uint32_t)(a) << 8 | (uint32_t)(d) << 16)

/* Build the world of the file comment for a layout. */
static void world_build(struct world *w, const struct lj_layout *lay, uint64_t base_addr)
{
	uint32_t fr2 = lay->ref_size == 8, hdr = 8 * (1 + fr2);
	static const uint8_t lines_main[] = { 1, 2, 3 }, lines_foo[] = { 1, 2, 3 };
	/* varinfo: "x" slot 0 live [0, 4), "cb" slot 1 live [2, 4) */
	static const uint8_t vinfo[] = { 'x', 0, 0, 4, 'c', 'b', 0, 2, 2, 0 };
	const uint32_t bc_main[] = { INS(92, 0, 0) /* FUNCV */, INS(54, 0, 0) /* GGET 0 "foo" */,
				     INS(66, 0, 0x0101) /* CALL A=0 */, INS(75, 0, 1) /* RET0 */ };
	const uint32_t bc_foo[] = { INS(89, 2, 0) /* FUNCF */, INS(54, 1, 0) /* GGET 1 */,
				    INS(66, 1, 0x0101) /* CALL A=1 */, INS(75, 0, 1) };
	uint64_t chunk, gg, b0, b1, b2;

	memset(w, 0, sizeof(*w));
	w->lay = lay;
	synth__init(&w->sm, lay, base_addr, w->mem, sizeof(w->mem));
	synth__alloc(&w->sm, 64);	/* keep address base_addr unused */
	/* GG_State: main thread, then g */
	gg = synth__alloc(&w->sm, lay->gg_ofs_g + lay->g_size + 64);
	w->L = gg;
	w->g = gg + lay->gg_ofs_g;
	W8(w->L + lay->ref_size + 1, 6);
	WREF(w->L + lay->l_glref, w->g);
	WREF(w->g + lay->g_mainthref, w->L);
	WREF(w->g + lay->g_cur_L, w->L);
	W32(w->g + lay->g_vmstate, (uint32_t)lay->vmst.c);
	chunk = w->chunk = synth__str(&w->sm, "@t.lua");
	w->pt_main = w_proto(w, bc_main, 4, 0, 3, lines_main, "foo", NULL, 0, chunk, 1);
	w->pt_foo = w_proto(w, bc_foo, 4, 5, 3, lines_foo, "capture", vinfo, sizeof(vinfo),
			    chunk, 0);
	w->fn_main = w_lfunc(w, w->pt_main);
	w->fn_foo = w_lfunc(w, w->pt_foo);
	w->fn_cap = synth__obj(&w->sm, 64, 8);
	W8(w->fn_cap + lay->fn_ffid, 1);
	W64(w->fn_cap + lay->fn_f, 0x401234);
	/* the Lua stack */
	w->stacksize = 64;
	w->stack = synth__alloc(&w->sm, 8 * w->stacksize);
	w_slotfn(w, w->stack, w->L, 0xfffffff9u);
	if (fr2)
		W64(w->stack + 8, ~(uint64_t)0);
	b0 = w->stack + 8 * (1 + fr2) + hdr;		/* main chunk BASE */
	w->f_main = b0 - 8;
	w_frame(w, w->f_main, w->fn_main, (int64_t)(hdr | 5));	/* FRAME_CP to the bottom */
	b1 = b0 + 8 * 0 + hdr;				/* CALL A=0 in main */
	w->f_foo = b1 - 8;
	w_frame(w, w->f_foo, w->fn_foo, (int64_t)(w->pt_main + lay->pt_size + 4 * 3));
	b2 = b1 + 8 * 1 + hdr;				/* CALL A=1 in foo */
	w->f_cap = b2 - 8;
	w_frame(w, w->f_cap, w->fn_cap, (int64_t)(w->pt_foo + lay->pt_size + 4 * 3));
	w->top_base = b2;
	WREF(w->L + lay->l_stack, w->stack);
	W32(w->L + lay->l_stacksize, (uint32_t)w->stacksize);
	W64(w->L + lay->l_base, b2);
	W64(w->L + lay->l_top, b2 + 8);
	/* one interpreter C frame (lua_pcall from the host) */
	w->cf = synth__alloc(&w->sm, lay->cf_size);
	W64(w->L + lay->l_cframe, w->cf);
	WREF(w->cf + lay->cf_l, w->L);
	WREF(w->cf + lay->cf_pc, w->L);
	W32(w->cf + lay->cf_nres, 1);
	W64(w->cf + lay->cf_prev, 0);
}

/* Point the sample at the world: G, L and LSTACK sections copy the world's
 * bytes; everything else comes from the world through the chain. */
static void world_sample(struct world *w, uint8_t *copy, int with_world)
{
	const struct lj_layout *lay = w->lay;
	size_t off = 0;
	struct { int kind; uint64_t addr; size_t len; } secs[] = {
		{ LJS_SEC_G, w->g, lay->g_size },
		{ LJS_SEC_L, w->L, lay->l_size },
		{ LJS_SEC_LSTACK, w->stack, 8 * w->stacksize },
	};
	size_t i;

	memset(&w->s, 0, sizeof(w->s));
	w->s.g = w->g;
	w->s.flags = LJS_SAMPLE_F_LUAJIT | LJS_SAMPLE_F_REGS_VALID;
	for (i = 0; i < 3; i++)
		synth__section(&w->sm, &w->s, secs[i].kind, secs[i].addr, secs[i].len, copy, &off);
	synth__memsrc(&w->sm, w->win, &w->ws, &w->ms_world, NULL);
	memsrc__init_sample(&w->ms, &w->s, with_world ? &w->ms_world : NULL);
}

/* Walk the world's sample and render its frames. */
static int world_walk(struct world *w, struct ljw *wk, struct ljw_stack *st,
		      const struct ljw_opts *o, char lines[][160], int max)
{
	int i, n;

	if (ljw__walk(wk, w->lay, &w->s, &w->ms, o, st) != 0)
		return -1;
	n = (int)st->nframes < max ? (int)st->nframes : max;
	for (i = 0; i < n; i++)
		ljw_frame__format(&st->frames[i], lines[i], 160);
	return n;
}

/* -- Tests ------------------------------------------------------------------- */

static uint8_t secbuf[WORLD_SIZE];

/* The well-formed world walks to LuaJIT's traceback, in both encodings. */
static void test_world(const struct lj_layout *lay, uint64_t base_addr, const char *mode)
{
	static struct world wstore;
	struct world *w = &wstore;
	struct ljw *wk = ljw__new();
	struct ljw_stack st;
	char lines[8][160];
	int n;

	world_build(w, lay, base_addr);
	world_sample(w, secbuf, 1);
	n = world_walk(w, wk, &st, NULL, lines, 8);
	CHECKF(n == 3, "%s: %d frames, expected 3", mode, n);
	if (n == 3) {
		CHECKF(!strcmp(lines[0], "[C]: in function 'cb'"), "%s: %s", mode, lines[0]);
		CHECKF(!strcmp(lines[1], "t.lua:7: in function 'foo'"), "%s: %s", mode, lines[1]);
		CHECKF(!strcmp(lines[2], "t.lua:2: in main chunk"), "%s: %s", mode, lines[2]);
		CHECKF(!strcmp(st.frames[0].what, "local") && !strcmp(st.frames[1].what, "global"),
		      "%s: namewhat %s/%s", mode, st.frames[0].what, st.frames[1].what);
		CHECKF(st.frames[1].pos == 2 && st.frames[1].linedefined == 5 &&
		      !strcmp(st.frames[1].chunk, "t.lua"), "%s: foo fields", mode);
		CHECKF(st.frames[2].flags & LJW_F_MAIN && st.frames[2].flags & LJW_F_CCALL,
		      "%s: main flags %#x", mode, st.frames[2].flags);
		CHECKF(st.frames[0].cfunc == 0x401234 && st.frames[0].kind == LJW_FRAME_C,
		      "%s: C frame", mode);
	}
	CHECKF(st.end == LJW_END_COMPLETE && st.complete && !st.truncated && st.nunknown == 0,
	      "%s: end %s unknown %u", mode, ljw_end__name(st.end), st.nunknown);
	CHECKF(st.base_src == LJW_SRC_L_BASE && st.base == w->top_base, "%s: base", mode);

	/* No cframe: the thread is not inside Lua. */
	W64(w->L + lay->l_cframe, 0);
	world_sample(w, secbuf, 1);
	n = world_walk(w, wk, &st, NULL, lines, 8);
	CHECKF(n == 0 && st.end == LJW_END_NOT_IN_LUA, "%s: not in Lua: %d %s", mode, n,
	      ljw_end__name(st.end));
	W64(w->L + lay->l_cframe, w->cf);

	/* The thread's stack holds the C frame: walked, every frame tagged with
	 * it; a stack that does not: another thread's VM, no frames. */
	{
		struct ljw_opts o = { .stack_lo = w->cf, .stack_hi = w->cf + 0x1000 };

		world_sample(w, secbuf, 1);
		n = world_walk(w, wk, &st, &o, lines, 8);
		CHECKF(n == 3 && st.end == LJW_END_COMPLETE && st.frames[0].cframe == w->cf &&
		      st.frames[1].cframe == w->cf, "%s: own stack: %d %s", mode, n,
		      ljw_end__name(st.end));
		o.stack_lo = w->cf + 8;
		n = world_walk(w, wk, &st, &o, lines, 8);
		CHECKF(n == 0 && st.end == LJW_END_OTHER_THREAD, "%s: other thread: %d %s", mode,
		      n, ljw_end__name(st.end));
	}

	/* Garbage-collector state: a pseudo frame on top. */
	W32(w->g + lay->g_vmstate, (uint32_t)lay->vmst.gc);
	world_sample(w, secbuf, 1);
	n = world_walk(w, wk, &st, NULL, lines, 8);
	CHECKF(n == 4 && !strcmp(lines[0], "[GC]") && st.end == LJW_END_COMPLETE,
	      "%s: GC state: %d frames, %s", mode, n, n ? lines[0] : "-");
	W32(w->g + lay->g_vmstate, (uint32_t)lay->vmst.c);
	ljw__delete(wk);
}

/* Run one hostile variant and check the result is bounded and terminated. */
static void walk_bounded(struct world *w, struct ljw *wk, const struct ljw_opts *o,
			 const char *what, enum ljw_reason expect)
{
	struct ljw_stack st;
	int r = ljw__walk(wk, w->lay, &w->s, &w->ms, o, &st);
	size_t i, unk = 0;

	CHECKF(r == 0, "%s: walk returned %d", what, r);
	CHECKF(st.end != LJW_END_NONE, "%s: no end reason", what);
	CHECKF(st.nframes <= 8 * w->stacksize + 16, "%s: %zu frames", what, st.nframes);
	for (i = 0; i < st.nframes; i++)
		unk += st.frames[i].kind == LJW_FRAME_UNKNOWN;
	CHECKF(unk == st.nunknown, "%s: %zu unknown frames, %u counted", what, unk, st.nunknown);
	if (expect != LJW_R_NONE)
		CHECKF(st.unknown[expect] >= 1 &&
		      (st.end == LJW_END_ERROR || expect == LJW_R_BAD_FUNC),
		      "%s: expected [unknown: %s], got end %s with %u unknown (last %s)", what,
		      ljw_reason__name(expect), ljw_end__name(st.end), st.nunknown,
		      st.nframes ? ljw_reason__name(st.frames[st.nframes - 1].reason) : "-");
}

/* Long on purpose: one list of cases, each breaking and restoring the same world. */
/* Targeted hostile cases on a world. */
static void test_hostile_cases(const struct lj_layout *lay, uint64_t base_addr, const char *mode)
{
	static struct world wstore;
	struct world *w = &wstore;
	struct ljw *wk = ljw__new();
	struct ljw_opts o = { 0 };
	uint64_t save;
	char name[96];
	uint32_t hdr = 8 * (1 + (lay->ref_size == 8));

#define CASE(label) snprintf(name, sizeof(name), "%s: %s", mode, label)
	world_build(w, lay, base_addr);

	/* foo's link: a delta of 0 (self reference) */
	w_frame(w, w->f_foo, w->fn_foo, 1);
	world_sample(w, secbuf, 1);
	CASE("self-referencing delta");
	walk_bounded(w, wk, NULL, name, LJW_R_BAD_LINK);
	/* a huge delta */
	w_frame(w, w->f_foo, w->fn_foo, (int64_t)((1ull << 40) | 1));
	world_sample(w, secbuf, 1);
	CASE("huge delta");
	walk_bounded(w, wk, NULL, name, LJW_R_BAD_LINK);
	/* a negative delta (would go up the stack) */
	w_frame(w, w->f_foo, w->fn_foo, -64 | 1);
	world_sample(w, secbuf, 1);
	CASE("negative delta");
	walk_bounded(w, wk, NULL, name, LJW_R_BAD_LINK);
	/* a Lua link whose pc[-1] is not a call */
	w_frame(w, w->f_foo, w->fn_foo, (int64_t)(w->pt_main + lay->pt_size + 4 * 2));
	world_sample(w, secbuf, 1);
	CASE("link into a non-call instruction");
	walk_bounded(w, wk, NULL, name, LJW_R_BAD_CALL);
	w_frame(w, w->f_foo, w->fn_foo, (int64_t)(w->pt_main + lay->pt_size + 4 * 3));
	/* a Lua link into main's bytecode, but the frame below runs foo */
	w_frame(w, w->f_main, w->fn_foo, (int64_t)(8 * (1 + (lay->ref_size == 8)) | 5));
	world_sample(w, secbuf, 1);
	CASE("return pc outside the caller");
	walk_bounded(w, wk, NULL, name, LJW_R_CALLER_MISMATCH);
	w_frame(w, w->f_main, w->fn_main, (int64_t)(8 * (1 + (lay->ref_size == 8)) | 5));
	/* a function slot that is not a function */
	w_frame(w, w->f_foo, w->pt_foo, (int64_t)(w->pt_main + lay->pt_size + 4 * 3));
	world_sample(w, secbuf, 1);
	CASE("function slot holds a proto");
	walk_bounded(w, wk, NULL, name, LJW_R_BAD_FUNC);
	{
		struct ljw_stack st;

		/* the link is still good: the walk goes on below the bad frame */
		ljw__walk(wk, lay, &w->s, &w->ms, NULL, &st);
		CHECKF(st.end == LJW_END_COMPLETE && st.nframes == 3 && st.nunknown == 1 &&
		      st.frames[1].kind == LJW_FRAME_UNKNOWN && st.frames[0].name == NULL,
		      "%s: bad func: end %s, %zu frames", mode, ljw_end__name(st.end), st.nframes);
	}
	w_frame(w, w->f_foo, w->fn_foo, (int64_t)(w->pt_main + lay->pt_size + 4 * 3));
	/* cframe cycle with nres < 0 (cpcall frames without Lua frames) */
	W64(w->cf + lay->cf_prev, w->cf);
	W32(w->cf + lay->cf_nres, (uint32_t)-(int32_t)(8 * w->stacksize));
	world_sample(w, secbuf, 1);
	CASE("cframe cycle");
	walk_bounded(w, wk, NULL, name, LJW_R_NONE);
	W64(w->cf + lay->cf_prev, 0);
	W32(w->cf + lay->cf_nres, 1);
	/* a coroutine (cur_L != main thread) sharing the main thread's stack:
	 * resumed by the main thread, then resumed by itself (a cycle) */
	save = synth__obj(&w->sm, lay->l_size, 6);
	memcpy(&w->mem[save - w->sm.base], &w->mem[w->L - w->sm.base], lay->l_size);
	WREF(w->g + lay->g_cur_L, save);
	{
		uint64_t res[2] = { w->L, save };
		struct ljw_stack st;
		int k;

		for (k = 0; k < 2; k++) {
			world_sample(w, secbuf, 1);
			w->s.sec[1].addr = save;
			w->s.sec[1].data = &w->mem[save - w->sm.base];
			w->s.sec[w->s.nsec].kind = LJS_SEC_RES_L;
			w->s.sec[w->s.nsec].aux = 1;
			w->s.sec[w->s.nsec].addr = res[k];
			w->s.sec[w->s.nsec].len = lay->l_size;
			w->s.sec[w->s.nsec].data = &w->mem[res[k] - w->sm.base];
			w->s.nsec++;
			CASE(k ? "resumer cycle" : "resumed by the main thread");
			walk_bounded(w, wk, NULL, name, k ? LJW_R_BAD_RESUMER : LJW_R_NONE);
			ljw__walk(wk, lay, &w->s, &w->ms, NULL, &st);
			if (!k)
				CHECKF(st.end == LJW_END_COMPLETE && st.nthreads == 2 && st.nframes == 6 &&
				      (st.frames[3].flags & LJW_F_COROUTINE_BOUNDARY),
				      "%s: coroutine walk: end %s, %u threads, %zu frames", mode,
				      ljw_end__name(st.end), st.nthreads, st.nframes);
		}
		/* no resumer section at all: the walk ends at the coroutine's bottom */
		world_sample(w, secbuf, 1);
		w->s.sec[1].addr = save;
		w->s.sec[1].data = &w->mem[save - w->sm.base];
		ljw__walk(wk, lay, &w->s, &w->ms, NULL, &st);
		CHECKF(st.end == LJW_END_COROUTINE && st.nframes == 3 && st.nunknown == 0,
		      "%s: coroutine without resumer: end %s", mode, ljw_end__name(st.end));
	}
	WREF(w->g + lay->g_cur_L, w->L);
	/* truncated Lua stack, no fallback for it */
	world_sample(w, secbuf, 0);
	w->s.sec[2].addr = w->f_cap - 8;
	w->s.sec[2].len = hdr + 8;
	w->s.sec[2].data = &w->mem[w->s.sec[2].addr - w->sm.base];
	{
		uint64_t send = w->stack + 8 * w->stacksize;
		struct memsrc_window pw[2] = {	/* everything but the Lua stack */
			{ w->sm.base, w->stack - w->sm.base, w->mem },
			{ send, w->sm.base + w->sm.used - send, &w->mem[send - w->sm.base] },
		};
		struct memsrc_windows pws = { pw, 2 };
		struct memsrc pms;
		struct ljw_stack st;

		memsrc__init_windows(&pms, &pws, NULL);
		memsrc__init_sample(&w->ms, &w->s, &pms);
		CASE("truncated stack");
		walk_bounded(w, wk, NULL, name, LJW_R_STACK_CUT);
		ljw__walk(wk, lay, &w->s, &w->ms, NULL, &st);
		CHECKF(st.truncated && st.nframes == 2 && st.frames[0].kind == LJW_FRAME_C,
		      "%s: truncated: %zu frames", mode, st.nframes);
	}
	/* absurd stack size */
	W32(w->L + lay->l_stacksize, 0xffffffffu);
	world_sample(w, secbuf, 1);
	CASE("absurd stacksize");
	walk_bounded(w, wk, NULL, name, LJW_R_BAD_L);
	W32(w->L + lay->l_stacksize, (uint32_t)w->stacksize);
	/* g pointing at garbage */
	world_sample(w, secbuf, 1);
	w->s.g = w->sm.base + 8;
	CASE("garbage g");
	walk_bounded(w, wk, NULL, name, LJW_R_BAD_G);
	w->s.g = 1;
	CASE("unmapped g");
	walk_bounded(w, wk, NULL, name, LJW_R_G_UNREADABLE);
	/* frame budget */
	world_sample(w, secbuf, 1);
	o.max_frames = 2;
	CASE("frame limit");
	walk_bounded(w, wk, &o, name, LJW_R_FRAME_LIMIT);
	/* unknown vmstate value */
	W32(w->g + lay->g_vmstate, (uint32_t)-100);
	world_sample(w, secbuf, 1);
	CASE("bad vmstate");
	walk_bounded(w, wk, NULL, name, LJW_R_NONE);
	W32(w->g + lay->g_vmstate, (uint32_t)lay->vmst.c);
	/* a trace number whose GCtrace cannot be found, jit_base == 0: [trace exit] */
	W32(w->g + lay->g_vmstate, 7);
	world_sample(w, secbuf, 1);
	CASE("trace without jit_base");
	walk_bounded(w, wk, NULL, name, LJW_R_NONE);
	W32(w->g + lay->g_vmstate, (uint32_t)lay->vmst.c);
	ljw__delete(wk);
#undef CASE
}

/* xorshift64* */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

/* Random bytes in every section (and random mutations of the world). */
static void test_random(const struct lj_layout *lay, uint64_t base_addr, const char *mode,
			unsigned iters)
{
	static struct world w, pristine;
	struct ljw *wk = ljw__new();
	struct ljw_opts o = { 0 };
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ base_addr;
	unsigned it, i, before = (unsigned)failures;
	char name[64];

	world_build(&pristine, lay, base_addr);
	for (it = 0; it < iters; it++) {
		unsigned sec, k;

		memcpy(&w, &pristine, sizeof(w));
		world_sample(&w, secbuf, it & 1);
		switch (it % 4) {
		case 0:	/* one whole section random */
			sec = (unsigned)(rnd(&seed) % w.s.nsec);
			for (i = 0; i < w.s.sec[sec].len; i++)
				secbuf[(size_t)(w.s.sec[sec].data - secbuf) + i] = (uint8_t)rnd(&seed);
			break;
		case 1:	/* every section random */
			for (i = 0; i < WORLD_SIZE; i++)
				secbuf[i] = (uint8_t)rnd(&seed);
			break;
		case 2:	/* a few flipped bytes in the sections */
			for (k = 0; k < 1 + rnd(&seed) % 16; k++) {
				sec = (unsigned)(rnd(&seed) % w.s.nsec);
				i = (unsigned)(rnd(&seed) % w.s.sec[sec].len);
				secbuf[(size_t)(w.s.sec[sec].data - secbuf) + i] ^= (uint8_t)rnd(&seed);
			}
			break;
		default: /* a few flipped bytes anywhere in the world (protos too) */
			for (k = 0; k < 1 + rnd(&seed) % 32; k++)
				w.mem[rnd(&seed) % w.sm.used] ^= (uint8_t)rnd(&seed);
			world_sample(&w, secbuf, 1);
			break;
		}
		if (rnd(&seed) % 4 == 0)
			w.s.sec[rnd(&seed) % w.s.nsec].len /= 2;	/* truncated window */
		w.s.regs.ip = rnd(&seed) % 2 ? 0x1000 : rnd(&seed);
		w.s.regs.dx = rnd(&seed) % 2 ? w.top_base : rnd(&seed);
		w.s.regs.bx = rnd(&seed);
		o.vm_lo = 0x1000;
		o.vm_hi = 0x2000;
		snprintf(name, sizeof(name), "%s: random #%u", mode, it);
		walk_bounded(&w, wk, &o, name, LJW_R_NONE);
		if ((unsigned)failures > before + 10)
			break;
	}
	ljw__delete(wk);
}

/* memsrc: window assembly, chaining, bounds. */
static void test_memsrc(void)
{
	uint8_t a[16], b[16], out[32];
	struct memsrc_window win[2] = { { 1000, 16, a }, { 1016, 16, b } };
	struct memsrc_windows ws = { win, 2 };
	struct memsrc ms, ms2;
	struct memsrc_window win2[1] = { { 2000, 16, b } };
	struct memsrc_windows ws2 = { win2, 1 };
	uint64_t v;
	uint32_t v32;
	int i;

	for (i = 0; i < 16; i++) {
		a[i] = (uint8_t)i;
		b[i] = (uint8_t)(16 + i);
	}
	memsrc__init_windows(&ms2, &ws2, NULL);
	memsrc__init_windows(&ms, &ws, &ms2);
	CHECKF(memsrc__read(&ms, 1010, out, 12) == 0 && out[0] == 10 && out[11] == 21,
	      "read across two adjacent windows");
	CHECKF(memsrc__read(&ms, 1020, out, 16) != 0, "read past the last window fails");
	CHECKF(memsrc__read(&ms, 2004, out, 4) == 0 && out[0] == 20, "chain fallback");
	CHECKF(memsrc__read(&ms, UINT64_MAX - 2, out, 8) != 0, "wrapping address fails");
	CHECKF(memsrc__u64(&ms, 1000, &v) == 0 && v == 0x0706050403020100ull, "u64 LE");
	CHECKF(memsrc__u32(&ms, 1014, &v32) == 0 && v32 == 0x11100f0eu, "u32 across windows");
	CHECKF(memsrc__read(&ms, 5, out, 0) == 0, "zero-length read");
}

/* -- Names by definition (ljwalk_def.c) -------------------------------------- */

/* A prototype for the definition tests: bytecode, constants kgc[0..nk),
 * one upvalue named uvname (flags uvflags) when uvname is not NULL, line
 * firstline + i at bytecode index i, no varinfo. */
static uint64_t def_proto(struct world *w, const uint32_t *bc, uint32_t nbc, const uint64_t *kgc,
			  uint32_t nk, int firstline, uint8_t flags, const char *uvname,
			  uint16_t uvflags)
{
	const struct lj_layout *lay = w->lay;
	uint32_t r = lay->ref_size, i, nuv = uvname ? 1 : 0;
	size_t nlen = uvname ? strlen(uvname) + 1 : 0;
	size_t sz = lay->pt_size + 4 * nbc + 8 + r * nk + nbc + nlen + 8;
	uint64_t pt = synth__obj(&w->sm, sz, 7), p, uv, k, li, ui;

	W8(pt + lay->pt_numparams, 0);
	W8(pt + lay->pt_framesize, 4);
	W32(pt + lay->pt_sizebc, nbc);
	W32(pt + lay->pt_sizept, sz);
	W32(pt + lay->pt_sizekgc, nk);
	W8(pt + lay->pt_sizeuv, nuv);
	W8(pt + lay->pt_flags, flags);
	W32(pt + lay->pt_firstline, (uint32_t)firstline);
	W32(pt + lay->pt_numline, 3);
	WREF(pt + lay->pt_chunkname, w->chunk);
	p = pt + lay->pt_size;
	for (i = 0; i < nbc; i++)
		W32(p + 4 * i, bc[i]);
	uv = p + 4 * nbc;
	W16(uv, uvflags);
	WREF(pt + lay->pt_uv, uv);
	k = uv + 8 + r * nk;
	for (i = 0; i < nk; i++)
		WREF(k - r * (i + 1), kgc[i]);
	WREF(pt + lay->pt_k, k);
	li = k;
	for (i = 0; i + 1 < nbc; i++)
		W8(li + i, i + 1);
	WREF(pt + lay->pt_lineinfo, li);
	ui = li + nbc;
	if (uvname) {
		memcpy(&w->mem[ui - w->sm.base], uvname, nlen);
		WREF(pt + lay->pt_uvinfo, ui);
	}
	return pt;
}

#define DEF_CALLPOS(n) ((n) - 2)	/* the CALL before the closing RET0 */

/* Make main run bc (kgc[1] is foo's prototype) and call foo at its CALL. */
static void def_main(struct world *w, const uint32_t *bc, uint32_t nbc, uint64_t *kgc, uint32_t nk)
{
	uint64_t pt;

	kgc[1] = w->pt_foo;
	pt = def_proto(w, bc, nbc, kgc, nk, 0, 2 | 1 /* vararg, has children */, NULL, 0);
	WREF(w->fn_main + w->lay->fn_pc, pt + w->lay->pt_size);
	w_frame(w, w->f_foo, w->fn_foo, (int64_t)(pt + w->lay->pt_size + 4 * (DEF_CALLPOS(nbc) + 1)));
}

/* Walk and check foo's frame: its definition name and both report names. */
static void def_check(struct world *w, struct ljw *wk, const char *mode, const char *defname,
		      const char *defwhat, const char *shown, const char *callsite)
{
	struct ljw_stack st;
	char lines[8][160], nm[128];
	const struct ljw_frame *f;
	int n;

	world_sample(w, secbuf, 1);
	n = world_walk(w, wk, &st, NULL, lines, 8);
	CHECKF(n == 3 && st.nunknown == 0, "%s: %s: %d frames, %u unknown", mode, shown, n,
	       st.nunknown);
	if (n != 3)
		return;
	f = &st.frames[1];
	CHECKF(defname ? f->defname && !strcmp(f->defname, defname) && f->defwhat &&
			 !strcmp(f->defwhat, defwhat) : !f->defname,
	       "%s: defname %s (%s), expected %s", mode, f->defname ? f->defname : "NULL",
	       f->defwhat ? f->defwhat : "NULL", defname ? defname : "NULL");
	ljs_name__lua(f, 0, nm, sizeof(nm));
	CHECKF(!strcmp(nm, shown), "%s: shown as '%s', expected '%s'", mode, nm, shown);
	ljs_name__lua(f, LJS_NAME_CALLSITE, nm, sizeof(nm));
	CHECKF(!strcmp(nm, callsite), "%s: call site '%s', expected '%s'", mode, nm, callsite);
	snprintf(nm, sizeof(nm), "%s:7: in function 'foo'",
		 (const char *)&w->mem[w->chunk + w->lay->str_size - w->sm.base] + 1);
	CHECKF(!strcmp(lines[1], nm), "%s: traceback %s, expected %s", mode, lines[1], nm);
}

/* foo is called as the global "foo"; what its definition calls it wins. */
static void test_defnames(const struct lj_layout *lay, uint64_t base_addr, const char *mode)
{
	static struct world wstore;
	struct world *w = &wstore;
	struct ljw *wk = ljw__new(), *fresh = ljw__new();
	uint64_t kgc[4], uv, fooname;
	uint32_t tvo;
	/* function bar() ... end (FNEW; GSET "bar"), then foo() */
	const uint32_t bc_gset[] = { INS(92, 0, 0), INS(51, 0, 1) /* FNEW 0, foo */,
				     INS(55, 0, 2) /* GSET 0, "bar" */, INS(54, 0, 0),
				     INS(66, 0, 0x0101), INS(75, 0, 1) };
	/* function M.h() ... end: GGET 1 "M"; FNEW 0; TSETS 0, 1, "h" */
	const uint32_t bc_tsets[] = { INS(92, 0, 0), INS(54, 1, 2), INS(51, 0, 1),
				      INS(61, 0, 3 | 1 << 8), INS(54, 0, 0), INS(66, 0, 0x0101),
				      INS(75, 0, 1) };
	/* FNEW passed on as an argument: no name */
	const uint32_t bc_anon[] = { INS(92, 0, 0), INS(51, 1, 1), INS(54, 0, 0),
				     INS(66, 0, 0x0101), INS(75, 0, 1) };
	const uint32_t bc_foo[] = { INS(89, 2, 0), INS(54, 1, 0), INS(66, 1, 0x0101),
				    INS(75, 0, 1) };

	world_build(w, lay, base_addr);
	kgc[0] = synth__str(&w->sm, "foo");
	kgc[2] = synth__str(&w->sm, "bar");
	def_main(w, bc_gset, 6, kgc, 3);
	def_check(w, wk, mode, "bar", "global", "bar t.lua:5", "foo t.lua:5");
	kgc[2] = synth__str(&w->sm, "M");
	kgc[3] = synth__str(&w->sm, "h");
	def_main(w, bc_tsets, 7, kgc, 4);
	def_check(w, wk, mode, "M.h", "field", "M.h t.lua:5", "foo t.lua:5");
	/* An anonymous definition: the walker remembers M.h from the walk before;
	 * a fresh walker falls back to the call site. */
	def_main(w, bc_anon, 5, kgc, 2);
	def_check(w, wk, mode, "M.h", "field", "M.h t.lua:5", "foo t.lua:5");
	def_check(w, fresh, mode, NULL, NULL, "foo t.lua:5", "foo t.lua:5");
	/* The chunk's name freed and another chunk's name at its address: foo's
	 * address, firstline and size are the same, but it is another function
	 * (a loop of loadstring(src, "=genK") does this). */
	memcpy(&w->mem[w->chunk + w->lay->str_size - w->sm.base], "@u.lua", 7);
	def_check(w, wk, mode, NULL, NULL, "foo u.lua:5", "foo u.lua:5");
	memcpy(&w->mem[w->chunk + w->lay->str_size - w->sm.base], "@t.lua", 7);
	def_check(w, wk, mode, "M.h", "field", "M.h t.lua:5", "foo t.lua:5");

	/* The parent gone: foo's own closure holds foo as the immutable upvalue
	 * "me" (a recursive local function), closed. */
	fooname = synth__str(&w->sm, "capture");
	w->pt_foo = def_proto(w, bc_foo, 4, &fooname, 1, 5, 0, "me", 0x4000);
	WREF(w->fn_foo + lay->fn_pc, w->pt_foo + lay->pt_size);
	w_frame(w, w->f_cap, w->fn_cap, (int64_t)(w->pt_foo + lay->pt_size + 4 * 3));
	uv = synth__obj(&w->sm, 48, 5);
	W8(uv + (lay->ref_size + 1) + 1, 1);		/* closed */
	tvo = ((lay->ref_size + 1) + 3 + 7) & ~7u;
	w_slotfn(w, uv + tvo, w->fn_foo, 0xfffffff7u);
	if (lay->ref_size == 4)
		W32(uv + tvo + 4, 0xfffffff7u);
	WREF(w->fn_foo + lay->fn_f, uv);
	def_main(w, bc_anon, 5, kgc, 2);
	def_check(w, fresh, mode, "me", "upvalue", "me t.lua:5", "foo t.lua:5");
	W16(w->pt_foo + lay->pt_size + 4 * 4, 0);	/* mutable: not a definition */
	ljw__delete(fresh);
	fresh = ljw__new();
	def_check(w, fresh, mode, NULL, NULL, "foo t.lua:5", "foo t.lua:5");
	ljw__delete(fresh);
	ljw__delete(wk);
}

/* Run every test. */
int main(void)
{
	const struct lj_layout *gc64 = lj_layout__builtin(LJ_FAMILY_UPSTREAM, 1);
	const struct lj_layout *gc32 = lj_layout__builtin(LJ_FAMILY_UPSTREAM, 0);
	unsigned iters = getenv("TEST_LJWALK_ITERS") ? (unsigned)atoi(getenv("TEST_LJWALK_ITERS")) :
			 4000;

	if (!gc64 || !gc32) {
		fprintf(stderr, "no built-in upstream layouts\n");
		return 1;
	}
	test_memsrc();
	test_world(gc64, 0x7f1200000000ull, "gc64");
	test_world(gc32, 0x40100000ull, "gc32");
	test_defnames(gc64, 0x7f1200000000ull, "gc64");
	test_defnames(gc32, 0x40100000ull, "gc32");
	test_hostile_cases(gc64, 0x7f1200000000ull, "gc64");
	test_hostile_cases(gc32, 0x40100000ull, "gc32");
	test_random(gc64, 0x7f1200000000ull, "gc64", iters);
	test_random(gc32, 0x40100000ull, "gc32", iters);
	printf("test_ljwalk: %d checks passed, %d failed\n", checks - failures, failures);
	printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
	return failures ? 1 : 0;
}
