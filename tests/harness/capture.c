/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * capture.c -- in-process emulation of what the BPF program copies per
 * sample (see capture.h).  The rules are the BPF program's:
 *   g        r14 (DISPATCH) + disp2g at the C function's entry, validated by
 *            g->mainthref == g - GG_OFS(g), mainthread->glref == g and the
 *            thread gct; else L->glref of the lua_State we were called with
 *   G        g window (sizeof(global_State), capped at LJS_G_WIN_MAX)
 *   L        cur_L window (sizeof(lua_State), capped at LJS_L_WIN_MAX)
 *   LSTACK   [L->stack, max(L->base, L->top) + LJS_LSTACK_SLACK), within the
 *            stack, cut to the budget keeping the newest (highest) part
 *   USTACK   native stack from sp, up to the budget or the mapping's end
 *   RES_L/RES_LSTACK  resumers found through the cframe chain (§6.5): from
 *            L->cframe follow SAVE_CFRAME to the resume frame (SAVE_CFRAME
 *            == 0 or cframe & 1); if [cf + CFRAME_SIZE - 8] is in the VM,
 *            cf + CFRAME_SIZE is the resumer's cframe, SAVE_L there the
 *            resumer; repeat with its L->cframe
 *   TRACE    GCtrace header of J->trace[vmstate] (vmstate >= 0)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "symtab/vec.h"
#include "tests/harness/capture.h"

/* Copy len bytes of our own memory at addr; bytes copied (0 on fault). */
size_t cap__peek(uint64_t addr, void *buf, size_t len)
{
	struct iovec lo = { buf, len }, re = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (len == 0)
		return 0;
	n = process_vm_readv(getpid(), &lo, 1, &re, 1, 0);
	return n < 0 ? 0 : (size_t)n;
}

/* Read a reference-sized value. */
static int peek_ref(const struct lj_layout *lay, uint64_t addr, uint64_t *v)
{
	uint32_t v32;

	if (lay->ref_size == 8)
		return cap__peek(addr, v, 8) == 8 ? 0 : -EFAULT;
	if (cap__peek(addr, &v32, 4) != 4)
		return -EFAULT;
	*v = v32;
	return 0;
}

/* Read a plain 8-byte value. */
static int peek_u64(uint64_t addr, uint64_t *v)
{
	return cap__peek(addr, v, 8) == 8 ? 0 : -EFAULT;
}

/* Check a g candidate by its GG_State self references. */
static int g__valid(const struct lj_layout *lay, uint64_t g)
{
	uint64_t mt, gl;
	uint8_t gct;

	if (!g || g < lay->gg_ofs_g)
		return 0;
	if (peek_ref(lay, g + lay->g_mainthref, &mt) || mt != g - lay->gg_ofs_g)
		return 0;
	if (peek_ref(lay, mt + lay->l_glref, &gl) || gl != g)
		return 0;
	if (cap__peek(mt + lay->ref_size + 1, &gct, 1) != 1 || gct != 6)
		return 0;
	return 1;
}

/* Append a section copied from addr; len may shrink at a fault. */
static struct ljs_section *sec__add(struct cap_sample *o, int kind, uint64_t addr,
				    size_t want, uint32_t aux)
{
	struct ljs_section *sec;
	size_t room = o->size - o->used, got;

	if (o->s.nsec >= LJS_SAMPLE_MAX_SECS || want > room)
		return NULL;
	got = cap__peek(addr, o->buf + o->used, want);
	if (got < want) {
		/* process_vm_readv stops at the first unreadable page */
		size_t part = 0, step;

		for (step = 4096 - (addr & 4095); part < want; step = 4096) {
			size_t n = step < want - part ? step : want - part;

			if (cap__peek(addr + part, o->buf + o->used + part, n) != n)
				break;
			part += n;
		}
		got = part;
	}
	sec = &o->s.sec[o->s.nsec++];
	memset(sec, 0, sizeof(*sec));
	sec->kind = (uint16_t)kind;
	sec->status = got == want ? LJS_ST_OK : (got ? LJS_ST_PARTIAL : LJS_ST_FAULT);
	sec->len = (uint32_t)got;
	sec->want = (uint32_t)want;
	sec->aux = aux;
	sec->addr = addr;
	sec->data = o->buf + o->used;
	o->used += (got + 7) & ~(size_t)7;
	return sec;
}

/* Copy a thread's used stack: [stack, max(base, top) + slack) cut to budget. */
static void stack__add(const struct cap_cfg *c, struct cap_sample *o, int kind, uint64_t L,
		       uint32_t budget, uint32_t aux)
{
	const struct lj_layout *lay = c->lay;
	uint64_t stack, base, top, lo, hi, end;
	uint32_t stacksize;
	struct ljs_section *sec;

	if (peek_ref(lay, L + lay->l_stack, &stack) || peek_u64(L + lay->l_base, &base) ||
	    peek_u64(L + lay->l_top, &top) || cap__peek(L + lay->l_stacksize, &stacksize, 4) != 4)
		return;
	end = stack + 8 * (uint64_t)stacksize;
	hi = (base > top ? base : top) + LJS_LSTACK_SLACK;
	if (hi > end)
		hi = end;
	lo = stack;
	if (hi <= lo)
		return;
	if (hi - lo > budget)
		lo = hi - budget;
	sec = sec__add(o, kind, lo, (size_t)(hi - lo), aux);
	if (sec && lo != stack && sec->status == LJS_ST_OK)
		sec->status = LJS_ST_TRUNCATED;
}

/* Follow the cframe chain to the resumers of L and copy each. */
static void resumers__add(const struct cap_cfg *c, struct cap_sample *o, uint64_t g, uint64_t L)
{
	const struct lj_layout *lay = c->lay;
	uint64_t raw, cf, prev, ret, RL, gl;
	uint32_t depth, n;
	uint8_t gct;

	for (depth = 1; depth <= LJS_RESUMERS_MAX; depth++) {
		if (peek_u64(L + lay->l_cframe, &raw))
			return;
		cf = raw & ~(uint64_t)3;
		for (n = 0; cf && !(raw & 1) && n < LJS_CFRAME_CHAIN_MAX; n++) {
			if (peek_u64(cf + lay->cf_prev, &prev) || prev == 0)
				break;
			raw = prev;
			cf = raw & ~(uint64_t)3;
		}
		if (!cf || peek_u64(cf + lay->cf_size - 8, &ret) ||
		    ret < c->vm_lo || ret >= c->vm_hi)
			return;
		if (peek_ref(lay, cf + lay->cf_size + lay->cf_l, &RL) || RL == 0 ||
		    cap__peek(RL + lay->ref_size + 1, &gct, 1) != 1 || gct != 6 ||
		    peek_ref(lay, RL + lay->l_glref, &gl) || gl != g)
			return;
		sec__add(o, LJS_SEC_RES_L, RL, lay->l_size < LJS_L_WIN_MAX ? lay->l_size :
			 LJS_L_WIN_MAX, depth);
		stack__add(c, o, LJS_SEC_RES_LSTACK, RL, LJS_RES_LSTACK_MAX, depth);
		L = RL;
	}
}

/* A sample buffer with room for size bytes of sections. */
struct cap_sample *cap_sample__new(size_t size)
{
	struct cap_sample *o = malloc(sizeof(*o) + size);

	if (o) {
		memset(o, 0, sizeof(*o));
		o->size = size;
	}
	return o;
}

/* Take a sample of the calling thread (see capture.h). */
int cap__take(const struct cap_cfg *c, const struct ljs_regs *regs, uint64_t L,
	      struct cap_sample *o)
{
	const struct lj_layout *lay = c->lay;
	uint64_t g = 0, curL, glref, arr, T;
	int32_t vmstate;

	memset(&o->s, 0, sizeof(o->s));
	o->used = 0;
	o->s.pid = (uint32_t)getpid();
	o->s.tid = (uint32_t)gettid();
	o->s.regs = *regs;
	o->s.flags = LJS_SAMPLE_F_REGS_VALID | LJS_SAMPLE_F_LUAJIT;
	sec__add(o, LJS_SEC_USTACK, regs->sp, c->ustack_bytes, 0);
	if (lay->disp2g && g__valid(lay, regs->r14 + (uint64_t)(int64_t)lay->disp2g)) {
		g = regs->r14 + (uint64_t)(int64_t)lay->disp2g;
		o->s.flags |= LJS_SAMPLE_F_G_FROM_REG;
	} else if (L && peek_ref(lay, L + lay->l_glref, &glref) == 0 && g__valid(lay, glref)) {
		g = glref;
		o->s.flags |= LJS_SAMPLE_F_G_FROM_CACHE;
	}
	if (!g)
		return -ENOENT;
	o->s.g = g;
	sec__add(o, LJS_SEC_G, g, lay->g_size < LJS_G_WIN_MAX ? (lay->g_size + 7) & ~7u :
		 LJS_G_WIN_MAX, 0);
	if (cap__peek(g + lay->g_vmstate, &vmstate, 4) != 4 || peek_ref(lay, g + lay->g_cur_L, &curL))
		return -EFAULT;
	sec__add(o, LJS_SEC_L, curL, lay->l_size < LJS_L_WIN_MAX ? lay->l_size : LJS_L_WIN_MAX, 0);
	stack__add(c, o, LJS_SEC_LSTACK, curL, c->lstack_bytes, 0);
	if (vmstate >= 0 && lay->g2j &&
	    peek_u64(g + (uint64_t)(int64_t)lay->g2j + lay->j_trace, &arr) == 0 && arr) {
		uint64_t slot = arr + (uint64_t)lay->ref_size * (uint32_t)vmstate;

		if (peek_ref(lay, slot, &T) == 0 && T)
			sec__add(o, LJS_SEC_TRACE, T, lay->t_size < LJS_TRACE_WIN_MAX ?
				 lay->t_size : LJS_TRACE_WIN_MAX, 0);
	}
	resumers__add(c, o, g, curL);
	return 0;
}

/* -- Memory sources ---------------------------------------------------------- */

/* memsrc read callback: our own memory, all or nothing. */
static int live__read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	struct cap_live *st = ms->ctx;

	if (cap__peek(addr, buf, len) != len)
		return -EFAULT;
	st->nreads++;
	st->nbytes += len;
	return 0;
}

/* A memsrc reading our own memory. */
void cap__live_init(struct memsrc *ms, struct cap_live *st)
{
	memset(st, 0, sizeof(*st));
	ms->read = live__read;
	ms->ctx = st;
	ms->next = NULL;
}

/* memsrc read callback: forward, and keep a copy of what was served. */
static int rec__read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	struct cap_rec *r = ms->ctx;
	uint8_t *copy;
	int err = memsrc__read(r->inner, addr, buf, len);

	if (err)
		return err;
	if (VEC_GROW(r->w, &r->cap, r->n + 1) != 0)
		return 0;	/* served, just not recorded */
	copy = malloc(len);
	if (!copy)
		return 0;
	memcpy(copy, buf, len);
	r->w[r->n].addr = addr;
	r->w[r->n].len = len;
	r->w[r->n].data = copy;
	r->n++;
	r->bytes += len;
	r->ws.w = r->w;
	r->ws.n = r->n;
	return 0;
}

/* A memsrc that forwards to inner and records every range it served. */
void cap__rec_init(struct memsrc *ms, struct cap_rec *r, const struct memsrc *inner)
{
	memset(r, 0, sizeof(*r));
	r->inner = inner;
	ms->read = rec__read;
	ms->ctx = r;
	ms->next = NULL;
}

/* Forget every recorded range. */
void cap__rec_reset(struct cap_rec *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free((void *)r->w[i].data);
	r->n = 0;
	r->bytes = 0;
	r->ws.w = r->w;
	r->ws.n = 0;
}

/* Free the recorder. */
void cap__rec_exit(struct cap_rec *r)
{
	cap__rec_reset(r);
	free(r->w);
	r->w = NULL;
	r->cap = 0;
}
