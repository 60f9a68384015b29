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

/* Free what a description holds but its machine-code areas. */
static void rdesc__exit(struct rdesc *d)
{
	free(d->build);
	ljs_proc__exit(&d->proc);
	d->build = NULL;
}

/* An anonymous executable mapping: LuaJIT's machine code, or other JIT code. */
static int is_xanon(const struct procmap_desc *m)
{
	return (m->prot & PROCMAP_PROT_EXEC) && (!m->path || !m->path[0]);
}

/* Whether m and x share an address. */
static int overlap(const struct procmap_desc *m, const struct procmap_desc *x)
{
	return m->start < x->end && x->start < m->end;
}

/* Whether any of v[0..n) that is executable or file-backed overlaps x (when
 * any_anon, anonymous non-executable ones count as well). */
static int overlaps_any(const struct procmap_desc *v, size_t n, const struct procmap_desc *x,
			int any_anon)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (overlap(&v[i], x) && (any_anon || (v[i].prot & PROCMAP_PROT_EXEC) ||
					  (v[i].path && v[i].path[0])))
			return 1;
	return 0;
}

/* The mappings of sp with the image's earlier machine-code areas put back
 * (report_proc.h): *out is NULL when sp's stand as they are, else an array
 * to free.  d->xanon becomes every area still standing.  0 or -ENOMEM. */
static int merge_xanon(struct rdesc *d, const struct snapfile_process *sp,
		       struct procmap_desc **out, size_t *nout)
{
	struct procmap_desc *keep = NULL, *v = NULL;
	size_t nkeep = 0, n = 0, i;
	int err = -ENOMEM;

	*out = NULL;
	*nout = 0;
	keep = calloc(d->nxanon + sp->nmaps + 1, sizeof(*keep));
	if (!keep)
		goto out;
	for (i = 0; i < d->nxanon; i++)
		if (!overlaps_any(sp->maps, sp->nmaps, &d->xanon[i], 0))
			keep[nkeep++] = d->xanon[i];
	if (nkeep) {
		/* An area now writable shows as an anonymous mapping: it gives way. */
		v = calloc(sp->nmaps + nkeep, sizeof(*v));
		if (!v)
			goto out;
		for (i = 0; i < sp->nmaps; i++)
			if ((sp->maps[i].prot & PROCMAP_PROT_EXEC) ||
			    (sp->maps[i].path && sp->maps[i].path[0]) ||
			    !overlaps_any(keep, nkeep, &sp->maps[i], 1))
				v[n++] = sp->maps[i];
		memcpy(v + n, keep, nkeep * sizeof(*keep));
		n += nkeep;
	}
	for (i = 0; i < sp->nmaps; i++)
		if (is_xanon(&sp->maps[i]))
			keep[nkeep++] = sp->maps[i];
	for (i = 0; i < nkeep; i++) {
		keep[i].path = "";
		keep[i].build_id = NULL;
		keep[i].build_id_len = 0;
	}
	free(d->xanon);
	d->xanon = keep;
	d->nxanon = nkeep;
	keep = NULL;
	*out = v;
	*nout = n;
	v = NULL;
	err = 0;
out:
	free(keep);
	free(v);
	return err;
}

/* Take a PROCESS record; see report_proc.h. */
int ptab__process(struct ptab *pt, struct ljs_pipe *rs, const struct snapfile_process *sp,
		  uint64_t offset)
{
	struct rproc *p = ptab__get(pt, sp->pid);
	struct ljs_proc lp = { 0 };
	struct procmap_desc *merged = NULL;
	size_t nmerged = 0;
	struct rdesc *d;
	char *build = NULL;
	int err;

	if (!p)
		return -ENOMEM;
	if (sp->exited_ns) {
		if (!p->nd && !p->comm[0])
			memcpy(p->comm, sp->comm, sizeof(p->comm));
		return 0;
	}
	if (sp->has_luajit) {
		build = strdup(sp->lj_build && sp->lj_build[0] ? sp->lj_build :
			       lj_layout__family_name((enum lj_family)sp->layout.family));
		if (!build)
			goto nomem;
	}
	d = p->nd ? &p->d[p->nd - 1] : NULL;
	if (d && d->image == sp->image && d->proc.pm &&
	    (!sp->nmaps || (d->proc.has_luajit && !sp->has_luajit))) {
		/* A look that found the process gone (no mappings), or no LuaJIT
		 * in an image that had it (an nginx worker shutting down after a
		 * reload: its VM closed, libluajit and more unmapped), adds
		 * nothing to what its image was described with.  The last
		 * description serves all of the image's samples, and an image's
		 * LuaJIT does not change without an exec. */
		free(build);
		return 0;
	}
	if (!d || d->image != sp->image) {
		if (VEC_GROW(p->d, &p->dcap, p->nd + 1) != 0)
			goto nomem;
		d = &p->d[p->nd++];
		memset(d, 0, sizeof(*d));
		d->image = sp->image;
		d->offset = offset;
	}
	if (merge_xanon(d, sp, &merged, &nmerged) != 0)
		goto nomem;
	err = merged ? ljs_pipe__proc(rs, merged, nmerged, &lp) :
		ljs_pipe__proc(rs, sp->maps, sp->nmaps, &lp);
	free(merged);
	if (err == -ENOMEM)
		goto nomem;
	rdesc__exit(d);
	d->build = build;
	memcpy(d->comm, sp->comm, sizeof(d->comm));
	d->comm[sizeof(d->comm) - 1] = '\0';
	d->proc = lp;
	d->proc.has_luajit = sp->has_luajit;
	d->proc.layout = sp->layout;
	d->proc.vm_lo = sp->vm_lo;
	d->proc.vm_hi = sp->vm_hi;
	d->proc.vm_exit_ret = sp->vm_exit;
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
		for (k = 0; k < pt->v[i].nd; k++) {
			rdesc__exit(&pt->v[i].d[k]);
			free(pt->v[i].d[k].xanon);
		}
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
