/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljwalk.c -- the offline LuaJIT frame walk: choose the running thread, the
 * top frame's BASE and PC from the sample (ljwalk_base.c), then follow the
 * frame links of every thread down to the bottom of the main thread's stack.
 *
 * Facts used (LuaJIT's lj_frame.h for frame links and types, lj_debug.c
 * debug_framepc, lj_obj.h for g->vmstate, vm_x64.dasc for the cframe and
 * the registers of the interpreter, lj_jit.h for traces): frames are [func | ftsz] headers below BASE; ftsz & 3 == 0 is
 * a return PC into the calling Lua function (caller = f - (1 + FR2 + A of
 * pc[-1])), anything else is a typed byte delta.  A frame's PC is held by the
 * frame above it: a Lua link's return PC, a continuation's saved PC, or the
 * SAVE_PC of the interpreter C frame (cframe) that ran it, found by
 * consuming one cframe per C/CP link, as debug_framepc does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/vec.h"
#include "unwind/ljwalk_int.h"

#define STACKSIZE_MAX	(1u << 17)	/* slots; LuaJIT stops at ~65500 + extra */
#define CF_SKIP_MAX	256		/* cframes skipped in one step */

/* -- Result -------------------------------------------------------------- */

/* Append a zeroed frame; NULL when out of memory. */
struct ljw_frame *ljw__frame_push(struct ljw *w)
{
	struct ljw_frame *f;

	if (VEC_GROW(w->frames, &w->capframes, w->nframes + 1) != 0) {
		w->nomem = 1;
		return NULL;
	}
	f = &w->frames[w->nframes++];
	memset(f, 0, sizeof(*f));
	f->pos = -1;
	f->line = -1;
	f->traceno = -1;
	f->cframe = w->cf_now;
	return f;
}

/* Append n frames (the trace's inlined frames); none of them when out of memory. */
static void frames__append(struct ljw *w, const struct ljw_frame *src, size_t n)
{
	size_t mark = w->nframes, i;
	struct ljw_frame *f;

	for (i = 0; i < n; i++) {
		f = ljw__frame_push(w);
		if (!f) {
			w->nframes = mark;
			return;
		}
		*f = src[i];
		f->cframe = w->cf_now;	/* inlined into the trace: its activation */
	}
}

/* Emit an [unknown: reason] frame and count it. */
static void frame__unknown(struct ljw *w, struct ljw_stack *out, enum ljw_reason r,
			   uint64_t L, uint64_t fr)
{
	struct ljw_frame *f = ljw__frame_push(w);

	if ((unsigned)r < LJW_R__MAX)
		out->unknown[r]++;
	out->nunknown++;
	if (!f)
		return;
	f->kind = LJW_FRAME_UNKNOWN;
	f->reason = r;
	f->L = L;
	f->frame = fr;
}

/* Emit a pseudo frame for a VM state. */
static void frame__pseudo(struct ljw *w, const char *what, uint64_t L)
{
	struct ljw_frame *f = ljw__frame_push(w);

	if (f) {
		f->kind = LJW_FRAME_PSEUDO;
		f->pseudo = what;
		f->L = L;
	}
}

/* -- State ------------------------------------------------------------------ */

/* Does a vmstate value equal a layout state (0 = absent in this build)? */
static int vmst__is(int32_t v, int32_t st)
{
	return st != 0 && v == st;
}

/* Classify a vmstate value with the build's numbering. */
static enum vmclass vmstate__class(const struct lj_layout *lay, int32_t v)
{
	struct lj_vmstates st = lay->vmst;

	if (v >= 0)
		return VC_TRACE;
	if (st.interp == 0 && st.c == 0)	/* numbering not filled: upstream */
		st = (struct lj_vmstates){ -1, -2, -3, -4, -5, -6, -7, 0, 0, 0 };
	if (vmst__is(v, st.interp) || vmst__is(v, st.lfunc) || vmst__is(v, st.ffunc))
		return VC_INTERP;
	if (vmst__is(v, st.c) || vmst__is(v, st.cfunc))
		return VC_C;
	if (vmst__is(v, st.gc))
		return VC_GC;
	if (vmst__is(v, st.exit))
		return VC_EXIT;
	if (vmst__is(v, st.record) || vmst__is(v, st.opt) || vmst__is(v, st.asm_))
		return VC_COMPILER;
	return VC_UNKNOWN;
}

/* Short name of a vmstate class. */
static const char *vmclass__name(enum vmclass c)
{
	static const char *const n[] = { "interp", "c", "gc", "exit", "compiler",
					 "trace", "unknown" };
	return n[c];
}

/* Read the fields of a thread and check it belongs to g. */
static enum ljw_reason thr__init(struct ljw *w, struct thr *t, uint64_t L, uint64_t *base)
{
	const struct lj_layout *lay = w->d.lay;
	uint64_t glref, stack, cframe;
	uint32_t stacksize;
	uint8_t gct;

	memset(t, 0, sizeof(*t));
	w->cf_now = 0;
	t->L = L;
	t->first = 1;
	if (L == 0)
		return LJW_R_BAD_L;
	if (ljd__gct(&w->d, L, &gct) || ljd__ref(&w->d, L + lay->l_glref, &glref) ||
	    ljd__ref(&w->d, L + lay->l_stack, &stack) ||
	    memsrc__u32(w->d.ms, L + lay->l_stacksize, &stacksize) ||
	    ljd__ptr(&w->d, L + lay->l_base, base) ||
	    ljd__ptr(&w->d, L + lay->l_cframe, &cframe))
		return LJW_R_L_UNREADABLE;
	if (gct != LJD_GCT_THREAD || glref != w->g || stack == 0 || (stack & 7) ||
	    stacksize == 0 || stacksize > STACKSIZE_MAX)
		return LJW_R_BAD_L;
	t->stack = stack;
	t->end = stack + 8 * (uint64_t)stacksize;
	t->bot = stack + 8 * (uint64_t)w->d.fr2;
	t->cf = w->cf_now = cframe & ~(uint64_t)3;
	return LJW_R_NONE;
}

/* -- Frames ---------------------------------------------------------------- */

/* Link flags of a frame's own ftsz. */
static uint32_t link__flags(struct ljw *w, uint64_t f, int64_t ftsz)
{
	uint64_t v;

	switch (ftsz & 7) {
	case LJD_FRAME_C: case LJD_FRAME_CP:
		return LJW_F_CCALL;
	case LJD_FRAME_PCALL: case LJD_FRAME_PCALLH:
		return LJW_F_PCALL;
	case LJD_FRAME_CONT:
		if (ljd__contv(&w->d, f, &v) == 0 && v == LJD_CONT_TAILCALL)
			return LJW_F_CONT | LJW_F_TAILCALL;
		return LJW_F_CONT;
	default:
		return (ftsz & 3) == LJD_FRAME_C ? LJW_F_CCALL : 0;
	}
}

/* Skip lua_cpcall cframes (nres < 0) that have no Lua frame at or above f. */
static void cf__skip(struct ljw *w, struct thr *t, uint64_t f)
{
	int32_t nres;
	uint64_t prev;
	unsigned n = 0;

	while (t->cf && n++ < CF_SKIP_MAX) {
		if (t->cf != t->nres_cf) {	/* else read for a frame above */
			if (ljd__cf_nres(&w->d, t->cf, &nres))
				return;
			t->nres_cf = t->cf;
			t->nres = nres;
		}
		if ((nres = t->nres) >= 0 || f >= t->stack + (uint64_t)(-(int64_t)nres))
			return;
		if (ljd__cf_prev(&w->d, t->cf, &prev))
			prev = 0;
		t->cf = w->cf_now = prev & ~(uint64_t)3;
	}
}

/* Step to the previous cframe of the thread (one C entry consumed). */
static void cf__pop(struct ljw *w, struct thr *t)
{
	uint64_t prev;

	if (!t->cf)
		return;
	if (ljd__cf_prev(&w->d, t->cf, &prev))
		prev = 0;
	t->cf = w->cf_now = prev & ~(uint64_t)3;
}

/* Where the walk of one thread is. */
struct step {
	uint64_t f;		/* the frame being walked (its BASE - 8) */
	enum { NF_TOP, NF_LUA, NF_CONT, NF_OTHER } nft;	/* the link that led to it */
	uint64_t nf;		/* the frame above, whose link that was */
	int64_t nftsz;		/* and its ftsz */
	long pending;		/* index of the frame whose name comes from this caller */
	int skip;		/* f is the original frame of a vararg function */
};

/* Check the frame at f and read its header; 0 when the walk stops at an
 * [unknown] frame (already emitted) or out of memory. */
static int step__read(struct ljw *w, struct ljw_stack *out, struct thr *t, uint64_t f,
		      struct ljd_frame *fr)
{
	uint32_t max = w->o->max_frames;

	if (!ljw__frame_ok(t, &w->d, f)) {
		frame__unknown(w, out, LJW_R_BAD_LINK, t->L, f);
		return 0;
	}
	if (max && w->nframes >= max) {
		frame__unknown(w, out, LJW_R_FRAME_LIMIT, t->L, f);
		return 0;
	}
	if (w->nomem)
		return 0;
	cf__skip(w, t, f);
	if (ljd__frame(&w->d, f, fr)) {
		frame__unknown(w, out, LJW_R_STACK_CUT, t->L, f);
		out->truncated = 1;
		return 0;
	}
	return 1;
}

/* The frame's PC, held by the frame above it (0 if none). */
static uint64_t step__pc(struct ljw *w, const struct thr *t, const struct step *st,
			 uint64_t top_pc)
{
	uint64_t pc;

	switch (st->nft) {
	case NF_TOP: pc = top_pc; break;
	case NF_LUA: pc = ljd__ftsz_pc(&w->d, st->nftsz); break;
	case NF_CONT: if (ljd__contpc(&w->d, st->nf, &pc)) pc = 0; break;
	default: if (!t->cf || ljd__cf_pc(&w->d, t->cf, &pc)) pc = 0; break;
	}
	return pc;
}

/* Emit the frame at st->f running fr->fn at pc; its prototype in *p (NULL
 * unless a usable Lua function) and why it is unusable in *err (an
 * [unknown] frame then, counted).  NULL when out of memory. */
static struct ljw_frame *step__emit(struct ljw *w, struct ljw_stack *out, struct thr *t,
				    const struct step *st, const struct ljd_frame *fr,
				    uint64_t pc, uint32_t top_flags, int traceno,
				    struct ljw_proto **p, enum ljw_reason *err)
{
	struct ljw_frame *o = ljw__frame_push(w);

	if (!o)
		return NULL;
	o->L = t->L;
	o->frame = st->f;
	o->flags = link__flags(w, st->f, fr->ftsz) | top_flags;
	if ((fr->ftsz & 7) == LJD_FRAME_VARG)
		o->flags |= LJW_F_VARARG;
	if (t->first) {
		o->flags |= t->entry_flags;
		t->first = 0;
	}
	if (st->nft == NF_TOP && traceno >= 0)
		o->traceno = traceno;
	*p = ljw__frame_fill(w, o, fr->fn, pc, err);
	if (*err != LJW_R_NONE) {
		o->kind = LJW_FRAME_UNKNOWN;
		o->reason = *err;
		out->unknown[*err]++;
		out->nunknown++;
	}
	return o;
}

/* Follow the link of the frame at st->f (header fr) to the frame below;
 * 0, or -1 when the link is bad (an [unknown] frame emitted). */
static int step__link(struct ljw *w, struct ljw_stack *out, struct thr *t, struct step *st,
		      const struct ljd_frame *fr, int dummy)
{
	uint64_t cv;
	int64_t sized;

	st->nf = st->f;
	st->nftsz = fr->ftsz;
	if ((fr->ftsz & 3) == LJD_FRAME_LUA) {
		uint64_t rpc = ljd__ftsz_pc(&w->d, fr->ftsz);
		uint32_t ins, op;

		if (rpc < 4 || memsrc__u32(w->d.ms, rpc - 4, &ins)) {
			frame__unknown(w, out, LJW_R_BAD_LINK, t->L, st->f);
			return -1;
		}
		op = ljd_bc_op(ins);
		if (op != LJW_BC_CALL && op != LJW_BC_CALLM && op != LJW_BC_ITERC &&
		    op != LJW_BC_ITERN) {
			frame__unknown(w, out, LJW_R_BAD_CALL, t->L, st->f);
			return -1;
		}
		st->f -= 8 * (1 + w->d.fr2 + (uint64_t)ljd_bc_a(ins));
		st->nft = NF_LUA;
		return 0;
	}
	sized = fr->ftsz & ~(int64_t)7;
	if (sized <= 0 || (uint64_t)sized > st->f - t->stack) {
		frame__unknown(w, out, LJW_R_BAD_LINK, t->L, st->f);
		return -1;
	}
	switch (fr->ftsz & 7) {
	case LJD_FRAME_CONT:
		st->nft = NF_CONT;
		if (ljd__contv(&w->d, st->f, &cv) == 0 && cv == LJD_CONT_FFI_CALLBACK)
			cf__pop(w, t);
		break;
	case LJD_FRAME_VARG:
		st->nft = NF_OTHER;
		st->skip = !dummy;
		break;
	case LJD_FRAME_C: case LJD_FRAME_CP:
		st->nft = NF_OTHER;
		cf__pop(w, t);
		break;
	default:
		st->nft = NF_OTHER;
		break;
	}
	st->f -= (uint64_t)sized;
	return 0;
}

/* Walk one thread's frames from base down.  Returns 1 at the bottom, 0 when
 * the walk stopped at an [unknown] frame (already emitted). */
static int thr__walk(struct ljw *w, struct ljw_stack *out, struct thr *t, uint64_t base,
		     uint64_t top_pc, uint64_t top_fn, uint32_t top_flags, int traceno)
{
	struct step st = { .f = base - 8, .nft = NF_TOP, .pending = -1 };

	while (st.f > t->bot) {
		struct ljd_frame fr;
		struct ljw_frame *o = NULL;
		struct ljw_proto *p = NULL;
		enum ljw_reason err = LJW_R_NONE;
		int dummy;
		int32_t pos = -1;
		uint64_t pc;

		if (!step__read(w, out, t, st.f, &fr))
			return 0;
		/* A trace that tail-called replaced its base frame's function. */
		if (st.nft == NF_TOP && top_fn)
			fr.fn = top_fn;
		pc = step__pc(w, t, &st, top_pc);
		dummy = fr.fn == t->L;
		if (!dummy && !st.skip) {
			o = step__emit(w, out, t, &st, &fr, pc, top_flags, traceno, &p, &err);
			if (!o)
				return 0;
			pos = o->pos;
		} else if (!dummy) {	/* original frame of a vararg function */
			if (w->nframes)
				w->frames[w->nframes - 1].flags |= link__flags(w, st.f, fr.ftsz);
		}
		top_flags = 0;
		/* A Lua link promised a Lua caller containing the return PC. */
		if (st.nft == NF_LUA && o && err == LJW_R_NONE && pos < 0) {
			o->kind = LJW_FRAME_UNKNOWN;
			o->reason = LJW_R_CALLER_MISMATCH;
			out->unknown[LJW_R_CALLER_MISMATCH]++;
			out->nunknown++;
			return 0;
		}
		/* Name the frame above from this caller's instruction. */
		if (st.pending >= 0 && !st.skip) {
			struct ljw_frame *pf = &w->frames[st.pending];

			if (p && pos >= 0 && pf->kind != LJW_FRAME_UNKNOWN)
				pf->what = ljw__funcname(w, p, pos, &pf->name);
			st.pending = -1;
		}
		if (o)
			st.pending = (long)(o - w->frames);
		if (dummy)
			st.pending = -1;	/* a dummy frame's "function" is the thread */
		st.skip = 0;
		if (step__link(w, out, t, &st, &fr, dummy))
			return 0;
	}
	return 1;
}

/* -- Top frame ------------------------------------------------------------- */

/* Read vmstate, cur_L and jit_base and check g's self references. */
static enum ljw_reason g__read(struct ljw *w, int32_t *vmstate, uint64_t *L, uint64_t *jb)
{
	const struct lj_layout *lay = w->d.lay;
	uint64_t mt;

	if (ljd__i32(&w->d, w->g + lay->g_vmstate, vmstate) ||
	    ljd__ref(&w->d, w->g + lay->g_cur_L, L) ||
	    ljd__ref(&w->d, w->g + lay->g_jit_base, jb))
		return LJW_R_G_UNREADABLE;
	if (lay->gg_ofs_g && ljd__ref(&w->d, w->g + lay->g_mainthref, &mt) == 0 &&
	    mt != w->g - lay->gg_ofs_g)
		return LJW_R_BAD_G;
	w->mainL = lay->gg_ofs_g ? w->g - lay->gg_ofs_g : 0;
	return LJW_R_NONE;
}

/* Walk the thread that was running, then its resumers. */
static void walk__threads(struct ljw *w, struct ljw_stack *out, uint64_t L, enum vmclass vc,
			  int32_t vmstate, uint64_t jit_base)
{
	struct thr t;
	enum ljw_reason err;
	uint64_t Lbase, base, pc, top_fn = 0, seen[LJS_SAMPLE_MAX_SECS + 1];
	uint32_t depth, top_flags = 0, nseen = 0, i;
	int traceno = -1;

	err = thr__init(w, &t, L, &Lbase);
	if (err != LJW_R_NONE) {
		frame__unknown(w, out, err, L, 0);
		out->end = LJW_END_ERROR;
		return;
	}
	if (!t.cf) {
		out->end = LJW_END_NOT_IN_LUA;
		return;
	}
	if (vc == VC_TRACE && !jit_base)	/* exit handler before set_vmstate EXIT */
		vc = VC_EXIT;
	switch (vc) {
	case VC_GC: frame__pseudo(w, "[GC]", L); break;
	case VC_EXIT:
		frame__pseudo(w, "[trace exit]", L);
		if (w->nframes)
			ljw__trace_pseudo(w, out, &w->frames[w->nframes - 1], 1, vmstate);
		break;
	case VC_COMPILER:
		frame__pseudo(w, "[JIT compiler]", L);
		if (w->nframes)
			ljw__trace_pseudo(w, out, &w->frames[w->nframes - 1], 0, vmstate);
		break;
	case VC_UNKNOWN: frame__unknown(w, out, LJW_R_BAD_VMSTATE, L, 0); break;
	default: break;
	}
	if (ljw__top_choose(w, out, &t, Lbase, vc, jit_base, &base, &pc)) {
		struct ljd_frame fr;
		uint64_t cand = vc == VC_TRACE && jit_base ? jit_base : Lbase;

		/* The top frame's slots are simply not there: the copy was cut. */
		err = cand >= 8 && ljd__frame(&w->d, cand - 8, &fr) ? LJW_R_STACK_CUT :
		      LJW_R_NO_BASE;
		frame__unknown(w, out, err, L, 0);
		out->end = LJW_END_ERROR;
		return;
	}
	if (vc != VC_TRACE && vc != VC_EXIT && vc != VC_COMPILER &&
	    ljw__cf_unlinked(w, t.cf, t.L, base, Lbase)) {
		uint64_t savepc;

		cf__pop(w, &t);
		for (i = 0; i < w->nframes; i++)	/* the pseudo frames above */
			w->frames[i].cframe = t.cf;
		if (!pc && t.cf && ljd__cf_pc(&w->d, t.cf, &savepc) == 0 && savepc != t.L &&
		    ljw__base_pos(w, base, savepc) >= 0) {
			pc = savepc;
			out->pc_src = LJW_SRC_SAVE_PC;
		}
	}
	if (vc == VC_TRACE) {
		const struct ljw_frame *inl;
		size_t ninl = ljw__trace_top(w, out, L, base, &pc, &top_fn, &inl);

		frames__append(w, inl, ninl);
		traceno = out->traceno;
		top_flags = LJW_F_TRACE;
	}
	out->base = base;
	out->pc = pc;
	for (depth = 0;; depth++) {
		out->nthreads++;
		seen[nseen++] = t.L;
		if (!thr__walk(w, out, &t, base, pc, top_fn, top_flags, traceno)) {
			out->end = LJW_END_ERROR;
			return;
		}
		if (w->mainL && t.L == w->mainL) {
			out->end = LJW_END_COMPLETE;
			return;
		}
		/* Bottom of a coroutine: continue in the thread that resumed it. */
		L = ljw__resumer(w->s, depth + 1);
		if (!L && ljw__resumed_from_c(w, t.L)) {
			out->end = LJW_END_C_RESUME;
			return;
		}
		if (!L || nseen >= LJS_SAMPLE_MAX_SECS) {
			out->end = LJW_END_COROUTINE;
			return;
		}
		for (i = 0; i < nseen; i++)
			if (seen[i] == L)
				break;
		err = i < nseen ? LJW_R_BAD_RESUMER : thr__init(w, &t, L, &Lbase);
		if (err == LJW_R_NONE && !ljw__base_check(w, &t, Lbase))
			err = LJW_R_NO_BASE;
		if (err != LJW_R_NONE) {
			frame__unknown(w, out, err == LJW_R_NO_BASE ? err : LJW_R_BAD_RESUMER, L, 0);
			out->end = LJW_END_ERROR;
			return;
		}
		t.entry_flags = LJW_F_COROUTINE_BOUNDARY;
		base = Lbase;
		pc = 0;
		if (t.cf && ljd__cf_pc(&w->d, t.cf, &pc) == 0 &&
		    (pc == t.L || ljw__base_pos(w, base, pc) < 0))
			pc = 0;
		top_flags = 0;
		top_fn = 0;
		traceno = -1;
	}
}

/* -- Public ---------------------------------------------------------------- */

/* Allocate a walker. */
struct ljw *ljw__new(void)
{
	return calloc(1, sizeof(struct ljw));
}

/* Free a walker and everything it returned. */
void ljw__delete(struct ljw *w)
{
	struct ljw_blk *b, *n;

	if (!w)
		return;
	for (b = w->blk; b; b = n) {
		n = b->next;
		free(b);
	}
	free(w->frames);
	free(w->protos);
	intmap__exit(&w->byaddr);
	intmap__exit(&w->defs);
	ljw__defnames_exit(w);
	ljw__memo_exit(w);
	ljw__vars_exit(w);
	ljt__exit(&w->tr);
	free(w->snap);
	free(w->snap_next);
	free(w->inl);
	free(w);
}

/* Walk one sample (see ljwalk.h). */
int ljw__walk(struct ljw *w, const struct lj_layout *lay, const struct ljs_sample *s,
	      const struct memsrc *ms, const struct ljw_opts *o, struct ljw_stack *out)
{
	static const struct ljw_opts defopts;
	enum ljw_reason err;
	enum vmclass vc;
	int32_t vmstate = 0;
	const struct memsrc *ms_mem;
	uint64_t L = 0, jb = 0;
	int ret = 0, in_vm, memo, memo_ok = 0;

	if (!w || !lay || !s || !ms || !out)
		return -EINVAL;
	/* Trace memory: the chain without the sample's own windows. */
	ms_mem = o && o->ms_mem ? o->ms_mem : ms->ctx == (const void *)s && ms->next ?
		 ms->next : ms;
	memo = o && o->memo;
	if (memo && ljw__memo_hit(w, lay, s, ms, ms_mem, o, out))
		return 0;
	memset(out, 0, sizeof(*out));
	out->traceno = -1;
	out->trace.traceno = out->trace.root = out->trace.parent = out->trace.exitno = -1;
	out->trace.snapno = out->trace.startline = -1;
	memset(&w->ts, 0, sizeof(w->ts));
	w->ts.traceno = -1;
	w->nframes = 0;
	w->nomem = 0;
	w->cf_now = 0;
	ljw__arena_reset(w);
	ljw__protos_reset(w);
	w->s = s;
	w->o = o ? o : &defopts;
	w->ms_mem = ms_mem;
	w->mem_apart = ms_mem != ms;
	w->regs_used = 0;
	if (ljd__init(&w->d, lay, memo ? ljw__memo_begin(w, ms, ms_mem) : ms)) {
		ret = -EINVAL;
		goto out;
	}
	in_vm = w->o->vm_lo && s->regs.ip >= w->o->vm_lo && s->regs.ip < w->o->vm_hi;
	w->g = s->g;
	if (!w->g && lay->disp2g && w->o->vm_lo && s->regs.ip >= w->o->vm_lo &&
	    s->regs.ip < w->o->vm_hi)
		w->g = ljd__reg(&w->d, ljw__reg(w, LJW_REG_R14)) + (uint64_t)(int64_t)lay->disp2g;
	out->g = w->g;
	if (!w->g) {
		out->end = LJW_END_NO_LUA;
		if (s->flags & LJS_SAMPLE_F_LUAJIT)
			frame__unknown(w, out, LJW_R_NO_G, 0, 0);
		goto out;
	}
	err = g__read(w, &vmstate, &L, &jb);
	if (err != LJW_R_NONE) {
		frame__unknown(w, out, err, 0, 0);
		out->end = LJW_END_ERROR;
		goto out;
	}
	if (!ljw__on_stack(w, L)) {
		out->end = LJW_END_OTHER_THREAD;
		goto out;
	}
	vc = vmstate__class(lay, vmstate);
	/* Remembered: the states whose walks are proven alike with the memo
	 * and without (tests/harness, tests/golden); not the trace exit
	 * handler's or the compiler's. */
	memo_ok = memo && (vc == VC_INTERP || vc == VC_C || vc == VC_GC || vc == VC_TRACE);
	if (memo && !memo_ok)
		ljw__memo_stop(w);	/* not to be remembered: log no more */
	out->vmstate = vmstate;
	out->vmstate_name = vmclass__name(vc);
	out->L = L;
	/* On a trace (or entering one: RIP in its code, vmstate not yet set). */
	if ((vc == VC_TRACE && jb) || (vc == VC_INTERP && jb && !in_vm && w->o->vm_lo)) {
		int n = ljw__trace_which(w, out, vmstate, jb, in_vm);

		if (n >= 0)
			vc = VC_TRACE;
		else
			n = vc == VC_TRACE ? vmstate : -1;
		out->traceno = out->trace.traceno = n;
	}
	walk__threads(w, out, L, vc, vmstate, jb);
	ljw__defnames(w);
out:
	if (w->nomem) {
		out->unknown[LJW_R_NOMEM]++;
		out->nunknown++;
		out->end = LJW_END_ERROR;
		ret = ret ? ret : -ENOMEM;
	}
	if (out->unknown[LJW_R_STACK_CUT])
		out->truncated = 1;
	out->complete = out->end == LJW_END_COMPLETE || out->end == LJW_END_C_RESUME;
	out->frames = w->frames;
	out->nframes = w->nframes;
	if (memo)
		ljw__memo_end(w, memo_ok && ret == 0 && !w->nomem, out);
	return ret;
}
