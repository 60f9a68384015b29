/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proctab.c -- process table (open addressing on pid) and BPF config.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/proctab.h"

/* Create an empty table. */
int proctab__init(struct proctab *pt)
{
	memset(pt, 0, sizeof(*pt));
	pt->cap = 256;
	pt->v = calloc(pt->cap, sizeof(*pt->v));
	return pt->v ? 0 : -ENOMEM;
}

/* Free the table. */
void proctab__exit(struct proctab *pt)
{
	uint32_t i;

	for (i = 0; pt->v && i < pt->cap; i++)
		free(pt->v[i].xr);
	free(pt->v);
	memset(pt, 0, sizeof(*pt));
}

/* Slot for pid: its entry, or the empty slot where it would go. */
static struct proc *slot(struct proc *v, uint32_t cap, uint32_t pid)
{
	uint32_t i = (pid * 2654435761u) & (cap - 1);

	while (v[i].pid && v[i].pid != pid)
		i = (i + 1) & (cap - 1);
	return &v[i];
}

/* Double the capacity. */
static int grow(struct proctab *pt)
{
	uint32_t ncap = pt->cap * 2, i;
	struct proc *nv = calloc(ncap, sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	for (i = 0; i < pt->cap; i++)
		if (pt->v[i].pid)
			*slot(nv, ncap, pt->v[i].pid) = pt->v[i];
	free(pt->v);
	pt->v = nv;
	pt->cap = ncap;
	return 0;
}

/* Find a process, or NULL. */
struct proc *proctab__find(struct proctab *pt, uint32_t pid)
{
	struct proc *p;

	if (!pid)
		return NULL;
	p = slot(pt->v, pt->cap, pid);
	return p->pid ? p : NULL;
}

/* Find or add a process. */
struct proc *proctab__get(struct proctab *pt, uint32_t pid)
{
	struct proc *p;

	if (!pid)
		return NULL;
	p = slot(pt->v, pt->cap, pid);
	if (p->pid)
		return p;
	if ((pt->n + 1) * 4 > pt->cap * 3) {
		if (grow(pt))
			return NULL;
		p = slot(pt->v, pt->cap, pid);
	}
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	pt->n++;
	return p;
}

/* Next used entry from *iter on. */
struct proc *proctab__next(struct proctab *pt, uint32_t *iter)
{
	while (*iter < pt->cap) {
		struct proc *p = &pt->v[(*iter)++];

		if (p->pid)
			return p;
	}
	return NULL;
}

/* Replace p's executable ranges; see proctab.h. */
void proctab__set_xranges(struct proc *p, uint64_t *pairs, uint32_t n)
{
	free(p->xr);
	p->xr = pairs;
	p->nxr = pairs ? n : 0;
}

/* Whether addr lies in one of p's executable ranges (binary search). */
int proctab__in_xrange(const struct proc *p, uint64_t addr)
{
	uint32_t lo = 0, hi = p->nxr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (addr < p->xr[2 * mid])
			hi = mid;
		else if (addr >= p->xr[2 * mid + 1])
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

/* Forget what p's last inspection saw; see proctab.h. */
void proctab__reset(struct proc *p)
{
	proctab__set_xranges(p, NULL, 0);
	p->state = PROC_NEW;
	p->has_luajit = 0;
	p->cfg_gen = 0;
	p->maps_sig = 0;
	p->g_hint = 0;
	p->reinspect_gap_ns = 0;
	p->image_key = 0;
	p->other_image_ns = 0;
	p->image++;
}

/* Largest of a few offsets, plus the 8 bytes of the field there. */
static uint32_t window(const uint32_t *offs, int n, uint32_t cap)
{
	uint32_t m = 0;
	int i;

	for (i = 0; i < n; i++)
		if (offs[i] != UINT32_MAX && offs[i] > m)
			m = offs[i];
	m = (m + 8 + 7) & ~7u;
	return m > cap ? cap : m;
}

/* Build the BPF configuration for a LuaJIT process. */
void proctab__cfg(const struct proc *p, uint32_t lstack_bytes, struct ljs_proc_cfg *c)
{
	const struct lj_layout *l = &p->layout;
	uint32_t goffs[] = { l->g_vmstate, l->g_cur_L, l->g_jit_base, l->g_mainthref,
			     l->g_tmpbuf_L, l->g_bc_cfunc_int, l->g_bc_cfunc_ext,
			     l->g_strempty, l->g_hookmask };

	memset(c, 0, sizeof(*c));
	c->gen = p->cfg_gen;
	c->flags = (l->flags & LJ_LAYOUT_F_GC64) ? (LJS_CFG_F_GC64 | LJS_CFG_F_R14_IN_TRACE) : 0;
	c->disp2g = l->disp2g;
	c->vm_lo = p->vm_lo;
	c->vm_hi = p->vm_hi;
	c->gg_ofs_g = l->gg_ofs_g;
	c->g_win = window(goffs, sizeof(goffs) / sizeof(goffs[0]), LJS_G_WIN_MAX);
	c->g_vmstate = l->g_vmstate;
	c->g_cur_L = l->g_cur_L;
	c->g_jit_base = l->g_jit_base;
	c->g_mainthref = l->g_mainthref;
	c->g2j = l->g2j;
	c->j_trace = l->j_trace;
	c->j_sizetrace = l->j_sizetrace;
	c->l_win = l->l_size > LJS_L_WIN_MAX ? LJS_L_WIN_MAX : l->l_size;
	c->l_glref = l->l_glref;
	c->l_base = l->l_base;
	c->l_top = l->l_top;
	c->l_stack = l->l_stack;
	c->l_stacksize = l->l_stacksize;
	c->l_cframe = l->l_cframe;
	c->t_win = l->t_size > LJS_TRACE_WIN_MAX ? LJS_TRACE_WIN_MAX : l->t_size;
	c->cf_size = l->cf_size;
	c->cf_l = l->cf_l;
	c->cf_prev = l->cf_prev;
	c->lstack_bytes = lstack_bytes;
	c->g_hint = p->g_hint;
}
