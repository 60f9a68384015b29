/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljwalk_trace.c -- the walker's view of JIT traces: which trace a sample
 * runs in, whether the sample's GCtrace header still describes the trace in
 * memory, and which frames the trace had inlined at the sampled machine-code
 * offset (LuaJIT's lj_obj.h g->vmstate and jit_base, lj_jit.h GCtrace and
 * SnapShot, lj_snap.c for how a snapshot restores frames; ljtrace.h for
 * the data).
 *
 * Frames at and below g->jit_base are real and walked as usual.  The frame
 * at jit_base gets its PC from the snapshot covering the sampled offset (or
 * from GCtrace.startpc), and the functions the snapshot records above it
 * become LJW_F_INLINED frames, innermost first, named from their callers'
 * bytecode like real frames, which ljwalk.c appends to the result.  Anything inconsistent falls back to
 * the trace's start function, counted in ljw_stack.trace.src.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/ljwalk_int.h"

#define SCAN_CHUNK	512	/* J->trace[] entries read at once while scanning */

/* -- Finding the trace ---------------------------------------------------- */

/* J->trace[traceno] through the walk's memory; 0 or -EFAULT. */
static int trace__slot(struct ljw *w, uint32_t traceno, uint64_t *T)
{
	const struct lj_layout *lay = w->d.lay;
	uint64_t J, arr;
	uint32_t size;

	if (!lay->g2j || traceno == 0)
		return -EFAULT;
	J = w->g + (uint64_t)(int64_t)lay->g2j;
	if (ljd__ptr(&w->d, J + lay->j_trace, &arr) || arr == 0 ||
	    memsrc__u32(w->d.ms, J + lay->j_sizetrace, &size) || traceno >= size ||
	    ljd__ref(&w->d, arr + (uint64_t)w->d.ref * traceno, T) || *T == 0)
		return -EFAULT;
	return 0;
}

/* Header of trace traceno read from memory (not from the sample). */
static int trace__mem(struct ljw *w, uint32_t traceno, struct ljt_hdr *h)
{
	uint64_t T;

	if (trace__slot(w, traceno, &T) || ljt_hdr__read(w->d.lay, w->ms_mem, T, h) ||
	    h->traceno != traceno)
		return -EFAULT;
	return 0;
}

/* Is ip inside the trace's machine code? */
static int trace__has(const struct ljt_hdr *h, uint64_t ip)
{
	return h->mcode && ip >= h->mcode && ip - h->mcode < h->szmcode;
}

/* Scan J->trace[1 .. n) for the trace whose code holds ip (trace_exit_find);
 * the trace number, or -1. */
static int trace__scan(struct ljw *w, uint64_t ip, uint32_t n, struct ljt_hdr *h)
{
	const struct lj_layout *lay = w->d.lay;
	uint8_t buf[SCAN_CHUNK * 8], mc[16];
	uint64_t J, arr, T;
	uint32_t size, i, k, cnt, r = w->d.ref;

	if (!lay->g2j || lay->t_mcode + 8 > lay->t_size || lay->t_szmcode + 4 > lay->t_size)
		return -1;
	J = w->g + (uint64_t)(int64_t)lay->g2j;
	if (ljd__ptr(&w->d, J + lay->j_trace, &arr) || arr == 0 ||
	    memsrc__u32(w->d.ms, J + lay->j_sizetrace, &size))
		return -1;
	if (n > size)
		n = size;
	for (i = 0; i < n; i += SCAN_CHUNK) {
		cnt = n - i < SCAN_CHUNK ? n - i : SCAN_CHUNK;
		if (memsrc__read(w->d.ms, arr + (uint64_t)r * i, buf, (size_t)r * cnt))
			return -1;
		for (k = 0; k < cnt; k++) {
			uint64_t mcode = 0, sz = 0;
			unsigned b;

			T = 0;
			for (b = r; b-- > 0;)
				T = T << 8 | buf[r * k + b];
			if (!T || i + k == 0 || memsrc__read(w->d.ms, T + lay->t_szmcode, mc, 4) ||
			    memsrc__read(w->d.ms, T + lay->t_mcode, mc + 8, 8))
				continue;
			for (b = 4; b-- > 0;)
				sz = sz << 8 | mc[b];
			for (b = 8; b-- > 0;)
				mcode = mcode << 8 | mc[8 + b];
			if (ip < mcode || ip - mcode >= sz)
				continue;
			if (ljt_hdr__read(lay, w->ms_mem, T, h) == 0 && h->traceno == i + k &&
			    trace__has(h, ip))
				return (int)(i + k);
		}
	}
	return -1;
}

/* vmstate INTERP with RIP outside the VM and jit_base set: BC_JLOOP (and
 * JFORL, JITERL, JFUNCF, JFUNCV) jumped into a trace that has not stored
 * its number yet; the PC register still points after that instruction,
 * whose D operand is the trace number. */
static int trace__jloop(struct ljw *w, uint64_t ip, struct ljt_hdr *h)
{
	uint32_t funcf = w->d.lay->bc_funcf ? w->d.lay->bc_funcf : 89, ins, op;
	uint64_t pc = ljd__reg(&w->d, ljw__reg(w, LJW_REG_BX));

	if (pc < 4 || (pc & 3) || memsrc__u32(w->d.ms, pc - 4, &ins))
		return -1;
	op = ljd_bc_op(ins);
	if (op != LJW_BC_JFORL && op != LJW_BC_JITERL && op != LJW_BC_JLOOP && op != funcf + 2 &&
	    op != funcf + 5)
		return -1;
	if (trace__mem(w, ljd_bc_d(ins), h) || !trace__has(h, ip))
		return -1;
	return (int)ljd_bc_d(ins);
}

/* The address a call made by the trace returns to: the trace runs with
 * rsp = (L->cframe & ~3) - 16 - spadjust (BC_JLOOP's area, §7.3), so a call
 * pushes its return address right below that.  Read from the sample's own
 * stack copy only (a stack slot read later belongs to another moment).  0
 * if it is not in the trace. */
static uint64_t trace__callret(struct ljw *w, uint64_t L, const struct ljt_hdr *h)
{
	uint64_t cf, ret;

	if (w->o->trace_ip && trace__has(h, w->o->trace_ip))
		return w->o->trace_ip;
	if (!L || ljd__ptr(&w->d, L + w->d.lay->l_cframe, &cf))
		return 0;
	cf &= ~(uint64_t)3;
	if (cf < 24 + (uint64_t)h->spadjust ||
	    ljw__read_own(w, cf - 24 - h->spadjust, &ret, sizeof(ret)))
		return 0;
	ret = le64toh(ret);
	if (!trace__has(h, ret) || ret == h->mcode)
		return 0;
	return ret;
}

/* The sample's own GCtrace header (LJS_SEC_TRACE), parsed; 0 or -1. */
static int trace__sample_hdr(struct ljw *w, struct ljt_hdr *h)
{
	uint32_t i;

	for (i = 0; i < w->s->nsec && i < LJS_SAMPLE_MAX_SECS; i++) {
		const struct ljs_section *sec = &w->s->sec[i];

		if (sec->kind == LJS_SEC_TRACE && sec->addr && sec->data) {
			ljw__memo_section(w, i);
			return ljt_hdr__parse(w->d.lay, sec->addr, sec->data, sec->len, h) ? -1 : 0;
		}
	}
	return -1;
}

/* Which trace the sample runs in (see ljwalk_int.h). */
int ljw__trace_which(struct ljw *w, struct ljw_stack *out, int32_t vmstate, uint64_t jit_base,
		     int in_vm)
{
	struct ljw_tstate *ts = &w->ts;
	uint64_t ip = w->s->regs.ip;
	struct ljt_hdr h2;
	int n;

	(void)jit_base;
	if (vmstate >= 0) {
		ts->traceno = vmstate;
		out->trace.found = LJW_TF_VMSTATE;
		if (trace__sample_hdr(w, &ts->h) == 0) {
			/* Another trace's header (the BPF read raced a flush): no start. */
			ts->have_hdr = ts->h.traceno == (uint32_t)vmstate;
			if (!ts->have_hdr || (w->mem_apart &&
					      ljt_hdr__check_run(w->d.lay, w->ms_mem, &ts->h)))
				ts->stale = 1;
		} else if (trace__mem(w, (uint32_t)vmstate, &ts->h) == 0) {
			ts->have_hdr = 1;
		}
		if (ts->have_hdr && !ts->stale && trace__has(&ts->h, ip)) {
			ts->ip = ip;
			return ts->traceno;
		}
		/* A link jump lands in the next trace before its head stores its number. */
		if (ts->have_hdr && !ts->stale && !in_vm && ts->h.link &&
		    ts->h.link != (uint32_t)vmstate && trace__mem(w, ts->h.link, &h2) == 0 &&
		    trace__has(&h2, ip)) {
			ts->h = h2;
			ts->traceno = (int)h2.traceno;
			ts->ip = ip;
			out->trace.found = LJW_TF_LINK;
			return ts->traceno;
		}
	} else {
		n = trace__jloop(w, ip, &h2);
		if (n >= 0) {
			ts->traceno = n;
			ts->h = h2;
			ts->have_hdr = 1;
			ts->ip = ip;
			out->trace.found = LJW_TF_JLOOP;
			return n;
		}
	}
	/* Scan memory for RIP, unless the sample's own header says the trace
	 * there now is not the one that ran (it would find the new one). */
	if (w->o->trace_scan && !in_vm && !ts->stale) {
		n = trace__scan(w, ip, w->o->trace_scan, &h2);
		if (n >= 0) {
			ts->traceno = n;
			ts->h = h2;
			ts->have_hdr = 1;
			ts->stale = 0;
			ts->ip = ip;
			out->trace.found = LJW_TF_SCAN;
			return n;
		}
	}
	if (ts->traceno < 0)
		return -1;
	/* RIP in code the trace called (FFI, IR helpers, lj_vm_*): its call site. */
	if (ts->have_hdr && !ts->stale) {
		ts->ip = trace__callret(w, out->L, &ts->h);
		ts->ip_call = ts->ip != 0;
	}
	return ts->traceno;
}

/* -- Attribution ------------------------------------------------------------------ */

/* Trace facts for the report: number, root, start function and line. */
static void trace__info(struct ljw *w, struct ljw_stack *out, const struct ljt_hdr *h)
{
	struct ljw_trace *tr = &out->trace;
	struct ljw_proto *p;
	int32_t pos;

	tr->traceno = out->traceno = (int)h->traceno;
	tr->root = h->root ? (int)h->root : (int)h->traceno;
	tr->T = h->T;
	tr->mcode = h->mcode;
	tr->szmcode = h->szmcode;
	tr->startpt = h->startpt;
	p = h->startpt ? ljw__proto(w, h->startpt) : NULL;
	if (!p || p->err != LJW_R_NONE)
		return;
	tr->chunkname = p->chunkname;
	tr->chunk = p->chunkname && (p->chunkname[0] == '@' || p->chunkname[0] == '=') ?
		    p->chunkname + 1 : p->chunkname;
	tr->linedefined = p->firstline;
	pos = ljw__proto_pos(w, p, h->startpc + 4);
	if (pos >= 0)
		tr->startline = ljw__proto_line(w, p, (uint32_t)pos);
}

/* The Lua function in the frame at base (its GCfunc), or 0. */
uint64_t ljw__base_fn(struct ljw *w, uint64_t base)
{
	struct ljd_frame fr;

	if (base < 16 || ljd__frame(&w->d, base - 8, &fr))
		return 0;
	return fr.fn;
}

/* Append a frame to the inlined frames w->inl[0 .. *n), in the state
 * ljw__frame_push gives a new frame; NULL when full. */
static struct ljw_frame *inl__push(struct ljw *w, size_t *n)
{
	struct ljw_frame *f;

	if (*n >= LJT_MAX_FRAMES)
		return NULL;
	f = &w->inl[(*n)++];
	memset(f, 0, sizeof(*f));
	f->pos = -1;
	f->line = -1;
	f->traceno = -1;
	return f;
}

/* Name the inlined frame at index pending from its caller p at pos. */
static void frame__name(struct ljw *w, size_t n, long pending, const struct ljw_proto *p,
			int32_t pos)
{
	struct ljw_frame *pf;

	if (pending < 0 || (size_t)pending >= n)
		return;
	pf = &w->inl[pending];
	if (p && pos >= 0 && pf->kind != LJW_FRAME_UNKNOWN)
		pf->what = ljw__funcname(w, p, pos, &pf->name);
}

/* The frames of snapshot s above the frame at base, innermost first, into
 * w->inl[0 .. *n); the base frame's PC and (tail call) function.  0, or -1
 * when the snapshot does not fit the stack (the caller drops the frames). */
int ljw__inline_emit(struct ljw *w, struct ljw_stack *out, uint64_t L, uint64_t base,
		     const struct ljt_snap *s, uint64_t *pc, uint64_t *fn, size_t *n)
{
	const struct ljd *d = &w->d;
	uint64_t cur = s->pc + 4, stack_fn = ljw__base_fn(w, base), root_fn;
	struct ljw_frame tmp;
	struct ljw_proto *p;
	enum ljw_reason err;
	long pending = -1, i;
	uint64_t skip_fn = 0;
	int skip = 0;

	root_fn = s->root_fn ? s->root_fn : stack_fn;
	if (!root_fn || s->pc == 0 || (s->pc & 3))
		return -1;
	if (d->fr2 && s->topslot != (s->nframes ? s->frames[s->nframes - 1].slot : 0))
		return -1;
	for (i = (long)s->nframes - 1; i >= 0; i--) {
		const struct ljt_frame *f = &s->frames[i];
		int32_t lower = i ? s->frames[i - 1].slot : 0;
		uint64_t link = f->link;
		struct ljw_frame *o = NULL;
		int32_t pos = -1;

		if (f->slot <= lower || !f->has_link)
			return -1;
		if (!skip) {
			o = inl__push(w, n);
			if (!o)
				return -1;
			o->L = L;
			o->frame = base + 8 * (uint64_t)f->slot - 8;
			o->flags = LJW_F_INLINED;
			o->traceno = out->trace.traceno;
			if (f->fn)
				p = ljw__frame_fill(w, o, f->fn, cur, &err);
			else if (f->pt)
				p = ljw__frame_fill_proto(w, o, f->pt, cur, &err);
			else
				return -1;
			if (err != LJW_R_NONE || (o->kind == LJW_FRAME_LUA && o->pos < 0))
				return -1;
			pos = o->pos;
			frame__name(w, *n, pending, p, pos);
			pending = (long)(o - w->inl);
			out->trace.ninlined++;
		} else if (f->fn != skip_fn || !f->fn) {
			return -1;	/* a vararg frame's original is the same function */
		} else {
			skip = 0;
		}
		if ((link & 3) == LJD_FRAME_LUA) {
			uint64_t cpc = ljd__ftsz_pc(d, (int64_t)link);
			uint32_t ins, op;

			if (cpc < 4 || memsrc__u32(d->ms, cpc - 4, &ins))
				return -1;
			op = ljd_bc_op(ins);
			if (op != LJW_BC_CALL && op != LJW_BC_CALLM && op != LJW_BC_ITERC &&
			    op != LJW_BC_ITERN)
				return -1;
			if (f->slot - (int32_t)(1 + d->fr2 + ljd_bc_a(ins)) != lower)
				return -1;
			cur = cpc;
			continue;
		}
		{
			uint64_t delta = (d->fr2 ? link : (link & 0xffffffffu)) & ~(uint64_t)7;

			if (delta == 0 || delta / 8 > (uint64_t)f->slot ||
			    f->slot - (int32_t)(delta / 8) != lower)
				return -1;
		}
		switch (link & 7) {
		case LJD_FRAME_VARG:
			if (i == 0 || !o)
				return -1;
			o->flags |= LJW_F_VARARG;
			skip = 1;
			skip_fn = f->fn;
			break;
		case LJD_FRAME_CONT:
			cur = ljt_snap__contpc(s, f->slot - 1);
			if (!cur || !o)
				return -1;
			o->flags |= LJW_F_CONT;
			break;
		case LJD_FRAME_PCALL: case LJD_FRAME_PCALLH:
			if (!o)
				return -1;
			o->flags |= LJW_F_PCALL;
			cur = 0;
			break;
		default:
			return -1;
		}
	}
	if (skip)
		return -1;
	/* The base frame: a Lua function whose bytecode holds the PC. */
	memset(&tmp, 0, sizeof(tmp));
	p = ljw__frame_fill(w, &tmp, root_fn, cur, &err);
	if (err != LJW_R_NONE || tmp.kind != LJW_FRAME_LUA || tmp.pos < 0)
		return -1;
	frame__name(w, *n, pending, p, tmp.pos);
	*pc = cur;
	*fn = root_fn != stack_fn ? root_fn : 0;
	return 0;
}

/* Put an [unknown: call_frames] frame innermost above the n inlined frames
 * of the covering snapshot, counted: the frames the call had are not known,
 * these are the ones around it.  The new count. */
static size_t call__unsure(struct ljw *w, struct ljw_stack *out, uint64_t L, size_t n)
{
	struct ljw_frame *f;

	if (n >= LJT_MAX_FRAMES)
		return n;
	memmove(w->inl + 1, w->inl, n * sizeof(*w->inl));
	f = &w->inl[0];
	memset(f, 0, sizeof(*f));
	f->kind = LJW_FRAME_UNKNOWN;
	f->reason = LJW_R_CALL_FRAMES;
	f->flags = LJW_F_INLINED;
	f->pos = f->line = -1;
	f->traceno = out->trace.traceno;
	f->L = L;
	out->unknown[LJW_R_CALL_FRAMES]++;
	out->nunknown++;
	return n + 1;
}

/* For the jit_base frame of the running trace (see ljwalk_int.h). */
size_t ljw__trace_top(struct ljw *w, struct ljw_stack *out, uint64_t L, uint64_t base,
		      uint64_t *pc, uint64_t *fn, const struct ljw_frame **inl)
{
	const struct lj_layout *lay = w->d.lay;
	struct ljw_tstate *ts = &w->ts;
	struct ljw_trace *tr = &out->trace;
	uint32_t snapno;
	uint64_t ofs, bfn, fpc;
	size_t n = 0;
	struct ljw_proto *p;
	int src;

	*pc = *fn = 0;
	*inl = w->inl;
	if (!ts->have_hdr) {
		tr->src = ts->stale ? LJW_TS_STALE : LJW_TS_NOHDR;
		return 0;
	}
	trace__info(w, out, &ts->h);
	if (ts->stale) {
		tr->src = LJW_TS_STALE;
	} else if (!(lay->flags & LJ_LAYOUT_F_MCOFS) || lay->snap_mcofs == UINT32_MAX) {
		tr->src = LJW_TS_NOSNAP;
	} else if (!ts->ip) {
		tr->src = LJW_TS_START;
	} else {
		ofs = ts->ip - ts->h.mcode - (ts->ip_call ? 1 : 0);
		if (!w->snap)
			w->snap = malloc(sizeof(*w->snap));
		if (!w->inl)
			w->inl = malloc(LJT_MAX_FRAMES * sizeof(*w->inl));
		*inl = w->inl;
		tr->src = LJW_TS_BADSNAP;
		tr->ninlined = 0;
		if (w->snap && w->inl && ljt__bind(&w->tr, lay, w->ms_mem, &ts->h) == 0 &&
		    (src = ljw__snap_frames(w, out, L, base, ofs, pc, fn, &n, &snapno)) >= 0) {
			tr->src = (enum ljw_tsrc)src;
			tr->snapno = (int)snapno;
			tr->mcofs = ofs;
			out->pc_src = LJW_SRC_SNAPSHOT;
			if (src == LJW_TS_SNAP_CALL_UNSURE || src == LJW_TS_SNAP_CALL_SPLIT ||
			    src == LJW_TS_SNAP_CALL_UNSEEN)
				n = call__unsure(w, out, L, n);
			return n;
		}
		n = 0;	/* drop what a bad snapshot produced */
		tr->ninlined = 0;
		*pc = *fn = 0;
	}
	/* The start PC, when the jit_base frame runs the trace's start prototype. */
	bfn = ljw__base_fn(w, base);
	if (bfn && ljd__ref(&w->d, bfn + lay->fn_pc, &fpc) == 0 && fpc > lay->pt_size &&
	    fpc - lay->pt_size == ts->h.startpt) {
		p = ljw__proto(w, ts->h.startpt);
		if (p && ljw__proto_pos(w, p, ts->h.startpc + 4) >= 0) {
			*pc = ts->h.startpc + 4;
			out->pc_src = LJW_SRC_TRACE_START;
		}
	}
	return 0;
}

/* EXIT / compiler states: the trace numbers J holds. */
void ljw__trace_pseudo(struct ljw *w, struct ljw_stack *out, struct ljw_frame *f, int exit,
		       int32_t vmstate)
{
	const struct lj_layout *lay = w->d.lay;
	uint64_t J = w->g + (uint64_t)(int64_t)lay->g2j;
	uint32_t parent = 0, exitno = UINT32_MAX;
	uint16_t cur;
	struct ljt_hdr h;

	if (!lay->g2j)
		return;
	if (!exit) {
		/* J->cur is the GCtrace being compiled: its number. */
		if (memsrc__u16(w->d.ms, J + lay->t_traceno, &cur) == 0 && cur)
			f->traceno = cur;
		return;
	}
	if (vmstate >= 0) {	/* exit handler before it sets vmstate EXIT */
		parent = (uint32_t)vmstate;
	} else if (memsrc__u32(w->d.ms, J + lay->j_parent, &parent) ||
		   memsrc__u32(w->d.ms, J + lay->j_exitno, &exitno)) {
		return;
	}
	if (parent == 0 || parent > 0xffff)
		return;
	f->traceno = (int)parent;
	out->trace.parent = (int)parent;
	out->trace.exitno = exitno <= 0xffff ? (int)exitno : -1;
	out->trace.src = LJW_TS_EXIT;
	out->trace.found = LJW_TF_PARENT;
	out->traceno = out->trace.traceno = (int)parent;
	if (trace__mem(w, parent, &h) == 0)
		trace__info(w, out, &h);
}
