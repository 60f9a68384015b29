/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report_proc.c -- the report's processes and their images; see
 * report_proc.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/report_proc.h"
#include "symtab/vec.h"
#include "unwind/pipeline.h"

/* The entry of pid; see report_proc.h. */
struct rproc *ptab__get(struct ptab *pt, uint32_t pid)
{
	struct rproc *p;
	uint64_t *idx;
	int found;

	if (VEC_GROW(pt->v, &pt->cap, pt->n + 1) != 0 ||
	    (found = intmap__slot(&pt->bypid, pid, &idx)) < 0)
		return NULL;
	if (found)
		return &pt->v[*idx];
	*idx = pt->n;
	p = &pt->v[pt->n++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

/* Free what a description holds. */
static void rdesc__exit(struct rdesc *d)
{
	free(d->build);
	ljs_proc__exit(&d->proc);
	d->build = NULL;
}

/* Take a PROCESS record; see report_proc.h. */
int ptab__process(struct ptab *pt, struct ljs_pipe *rs, const struct snapfile_process *sp,
		  uint64_t offset)
{
	struct rproc *p = ptab__get(pt, sp->pid);
	struct ljs_proc lp = { 0 };
	struct rdesc *d;
	char *build = NULL;

	if (!p)
		return -ENOMEM;
	if (sp->exited_ns) {
		if (!p->nd && !p->comm[0])
			memcpy(p->comm, sp->comm, sizeof(p->comm));
		return 0;
	}
	if (ljs_pipe__proc(rs, sp->maps, sp->nmaps, &lp) == -ENOMEM)
		return -ENOMEM;
	if (sp->has_luajit) {
		build = strdup(sp->lj_build && sp->lj_build[0] ? sp->lj_build :
			       lj_layout__family_name((enum lj_family)sp->layout.family));
		if (!build)
			goto nomem;
	}
	d = p->nd ? &p->d[p->nd - 1] : NULL;
	if (!d || d->image != sp->image) {
		if (VEC_GROW(p->d, &p->dcap, p->nd + 1) != 0)
			goto nomem;
		d = &p->d[p->nd++];
		memset(d, 0, sizeof(*d));
		d->image = sp->image;
		d->offset = offset;
	}
	rdesc__exit(d);
	d->build = build;
	memcpy(d->comm, sp->comm, sizeof(d->comm));
	d->comm[sizeof(d->comm) - 1] = '\0';
	d->proc = lp;
	d->proc.has_luajit = sp->has_luajit;
	d->proc.layout = sp->layout;
	d->proc.vm_lo = sp->vm_lo;
	d->proc.vm_hi = sp->vm_hi;
	return 0;
nomem:
	free(build);
	ljs_proc__exit(&lp);
	return -ENOMEM;
}

/* Free everything. */
void ptab__exit(struct ptab *pt)
{
	size_t i, k;

	for (i = 0; i < pt->n; i++) {
		for (k = 0; k < pt->v[i].nd; k++)
			rdesc__exit(&pt->v[i].d[k]);
		free(pt->v[i].d);
	}
	free(pt->v);
	intmap__exit(&pt->bypid);
	memset(pt, 0, sizeof(*pt));
}

/* The description a sample at offset belongs to; see report_proc.h. */
const struct rdesc *rproc__desc_at(struct rproc *p, uint64_t offset)
{
	if (!p->nd)
		return NULL;
	while (p->cur + 1 < p->nd && p->d[p->cur + 1].offset < offset)
		p->cur++;
	return &p->d[p->cur];
}

/* The last image's description; see report_proc.h. */
const struct rdesc *rproc__last(const struct rproc *p)
{
	return p->nd ? &p->d[p->nd - 1] : NULL;
}
