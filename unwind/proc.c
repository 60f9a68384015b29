/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc.c -- a process's mappings for the pipeline: resolved (symtab), and
 * as the native unwinder's mapping set.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/proc.h"

/* The unwinder's view of one resolved mapping. */
static void proc__native_map(const struct procmap_ent *e, struct native_map *m)
{
	m->start = e->start;
	m->end = e->end;
	m->bias = e->has_bias ? e->bias : 0;
	m->path = e->path;
	m->flags = 0;
	if (e->prot & PROCMAP_PROT_EXEC)
		m->flags |= NATIVE_MAP_EXEC;
	if (e->obj && e->obj->status == OBJFILE_OK && e->has_bias && e->obj->found) {
		m->flags |= NATIVE_MAP_CFI;
		m->path = e->obj->found;
	}
	if (strcmp(e->path, "[stack]") == 0)
		m->flags |= NATIVE_MAP_STACK;
	if (!e->path[0])
		m->flags |= NATIVE_MAP_ANON;
}

/* Resolve the mappings; see proc.h. */
int ljs_proc__maps(struct ljs_proc *p, struct objcache *c, const struct procmap_desc *maps,
		   size_t n)
{
	size_t i;
	int err;

	p->pm = NULL;
	p->nat = NULL;
	memset(&p->nmaps, 0, sizeof(p->nmaps));
	if (!n)
		return 0;
	err = procmap__new(c, maps, n, &p->pm);
	if (err)
		goto out;
	err = -ENOMEM;
	p->nat = calloc(p->pm->n ? p->pm->n : 1, sizeof(*p->nat));
	if (!p->nat)
		goto out;
	for (i = 0; i < p->pm->n; i++)
		proc__native_map(&p->pm->v[i], &p->nat[i]);
	native_maps__init(&p->nmaps, p->nat, p->pm->n);
	err = 0;
out:
	if (err)
		ljs_proc__exit(p);
	return err;
}

/* Free the mappings. */
void ljs_proc__exit(struct ljs_proc *p)
{
	procmap__delete(p->pm);
	free(p->nat);
	p->pm = NULL;
	p->nat = NULL;
	memset(&p->nmaps, 0, sizeof(p->nmaps));
}

/* memsrc read over the found files. */
static int proc__read_files(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	return procmap__read(ms->ctx, addr, buf, len);
}

/* A memory source over the read-only file-backed mappings. */
void memsrc__init_procmap(struct memsrc *ms, const struct procmap *pm, const struct memsrc *next)
{
	ms->read = proc__read_files;
	ms->ctx = (void *)pm;
	ms->next = next;
}
