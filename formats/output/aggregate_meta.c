/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * aggregate_meta.c -- what the profile model holds beside its stacks: the
 * samples per JIT trace, the walk statistics, when and where the samples
 * came from, the processes and the notes (see aggregate.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/output/aggregate_int.h"
#include "symtab/vec.h"

/* Free what this file holds. */
void agg__meta_exit(struct agg *a)
{
	size_t i;

	for (i = 0; i < a->ntr; i++)
		free((char *)a->tr[i].label);
	free(a->tr);
	free(a->trh);
	free(a->tsorted);
	free(a->file);
	free(a->selection);
	for (i = 0; i < a->nprocs; i++) {
		free((char *)a->procs[i].comm);
		free((char *)a->procs[i].build);
	}
	free(a->procs);
	for (i = 0; i < a->nnotes; i++)
		free(a->notes[i]);
	free(a->notes);
}

/* djb2 of a name of len bytes. */
static size_t trace__hash(const char *c, size_t len)
{
	size_t h = 5381, i;

	for (i = 0; i < len; i++)
		h = h * 33 + (unsigned char)c[i];
	return h;
}

/* Double the trace hash. */
static int traces__rehash(struct agg *a)
{
	size_t ncap = a->trhcap ? a->trhcap * 2 : 64, k, i;
	uint32_t *nv = calloc(ncap, sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	for (k = 0; k < a->ntr; k++) {
		for (i = trace__hash(a->tr[k].label, a->tr[k].name_len) & (ncap - 1); nv[i];
		     i = (i + 1) & (ncap - 1))
			;
		nv[i] = (uint32_t)k + 1;
	}
	free(a->trh);
	a->trh = nv;
	a->trhcap = ncap;
	return 0;
}

/* Count one sample in its trace (traces are few: names hashed as strings). */
/* Append s to name[*n], kept NUL-terminated and cut at size - 1 bytes. */
static void tname__str(char *name, size_t size, size_t *n, const char *s)
{
	size_t l = strlen(s);

	if (l > size - 1 - *n)
		l = size - 1 - *n;
	memcpy(name + *n, s, l);
	*n += l;
	name[*n] = '\0';
}

/* Append v as %d does. */
static void tname__int(char *name, size_t size, size_t *n, int v)
{
	char d[16];
	size_t k = sizeof(d) - 1;
	unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;

	d[k] = '\0';
	do {
		d[--k] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		d[--k] = '-';
	tname__str(name, size, n, d + k);
}

/* "TRACE_%d::%s:%d (root %d)" into name, as snprintf writes it (one per
 * sample in a trace: without the format parser). */
static void trace__name(char *name, size_t size, const struct ljs_trace_hit *hit)
{
	size_t n = 0;

	name[0] = '\0';
	tname__str(name, size, &n, "TRACE_");
	tname__int(name, size, &n, hit->traceno);
	tname__str(name, size, &n, "::");
	tname__str(name, size, &n, hit->chunk ? hit->chunk : "?");
	tname__str(name, size, &n, ":");
	tname__int(name, size, &n, hit->startline);
	tname__str(name, size, &n, " (root ");
	tname__int(name, size, &n, hit->root);
	tname__str(name, size, &n, ")");
}

int agg__trace(struct agg *a, const struct ljs_trace_hit *hit)
{
	char name[512], label[768];
	struct agg_trace *t;
	size_t i, len;

	a->tsrc[hit->src < LJS_TRACE_SRC_MAX ? hit->src : 0]++;
	if (!(a->flags & AGG_TRACES))
		return 0;
	trace__name(name, sizeof(name), hit);
	len = strlen(name);
	if ((a->ntr + 1) * 2 > a->trhcap && traces__rehash(a))
		return -ENOMEM;
	for (i = trace__hash(name, len) & (a->trhcap - 1); a->trh[i];
	     i = (i + 1) & (a->trhcap - 1)) {
		t = &a->tr[a->trh[i] - 1];
		if (t->name_len == len && !memcmp(t->label, name, len)) {
			t->n++;
			return 0;
		}
	}
	if (a->ntr >= AGG_IDS_MAX || VEC_GROW(a->tr, &a->trcap, a->ntr + 1))
		return -ENOMEM;
	/* The name is the label's start (label is larger than name). */
	snprintf(label, sizeof(label), "%s; starts in %s%s <%s:%d>", name,
		 hit->start_fn ? "function " : "", hit->start_fn ? hit->start_fn : "function",
		 hit->chunk ? hit->chunk : "?", hit->linedefined);
	t = &a->tr[a->ntr];
	t->label = strdup(label);
	if (!t->label)
		return -ENOMEM;
	t->name_len = len;
	t->n = 1;
	a->trh[i] = (uint32_t)++a->ntr;
	return 0;
}

/* The walk statistics. */
void agg__set_walk(struct agg *a, const struct ljs_walk_stats *ws)
{
	a->walk = *ws;
}

/* Where the samples came from. */
int agg__set_source(struct agg *a, const char *file, const char *selection)
{
	free(a->file);
	free(a->selection);
	a->file = file ? strdup(file) : NULL;
	a->selection = selection ? strdup(selection) : NULL;
	return (file && !a->file) || (selection && !a->selection) ? -ENOMEM : 0;
}

/* A process that had samples. */
int agg__add_proc(struct agg *a, const struct agg_proc *p)
{
	struct agg_proc *d;

	if (VEC_GROW(a->procs, &a->proccap, a->nprocs + 1))
		return -ENOMEM;
	d = &a->procs[a->nprocs];
	*d = *p;
	d->comm = p->comm ? strdup(p->comm) : NULL;
	d->build = p->build ? strdup(p->build) : NULL;
	if ((p->comm && !d->comm) || (p->build && !d->build)) {
		free((char *)d->comm);
		free((char *)d->build);
		return -ENOMEM;
	}
	a->nprocs++;
	return 0;
}

/* A note. */
int agg__add_note(struct agg *a, const char *note)
{
	char *c;

	if (VEC_GROW(a->notes, &a->notecap, a->nnotes + 1) ||
	    !(c = strdup(note)))
		return -ENOMEM;
	a->notes[a->nnotes++] = c;
	return 0;
}

/* When the samples were taken. */
void agg__set_time(struct agg *a, const struct agg_time *t)
{
	a->time = *t;
}

const struct agg_time *agg__time(const struct agg *a)
{
	return &a->time;
}

/* Walk statistics. */
const struct ljs_walk_stats *agg__walk(const struct agg *a)
{
	return &a->walk;
}

/* Samples per way of attributing them to a trace. */
const uint64_t *agg__trace_src(const struct agg *a)
{
	return a->tsrc;
}

/* qsort: by count descending, then name. */
static int trace__cmp(const void *x, const void *y)
{
	const struct agg_trace *p = x, *q = y;

	size_t m = p->name_len < q->name_len ? p->name_len : q->name_len;
	int c;

	if (p->n != q->n)
		return p->n > q->n ? -1 : 1;
	c = memcmp(p->label, q->label, m);
	if (c)
		return c;
	return p->name_len < q->name_len ? -1 : p->name_len > q->name_len;
}

/* The traces with samples, sorted. */
const struct agg_trace *agg__traces(const struct agg *a, size_t *n)
{
	struct agg *m = (struct agg *)a;	/* the sorted copy is a cache */

	*n = 0;
	free(m->tsorted);
	m->tsorted = a->ntr ? malloc(a->ntr * sizeof(*m->tsorted)) : NULL;
	if (!m->tsorted)
		return NULL;
	memcpy(m->tsorted, a->tr, a->ntr * sizeof(*m->tsorted));
	qsort(m->tsorted, a->ntr, sizeof(*m->tsorted), trace__cmp);
	*n = a->ntr;
	return m->tsorted;
}

const char *agg__source_file(const struct agg *a)
{
	return a->file;
}

const char *agg__source_selection(const struct agg *a)
{
	return a->selection;
}

const struct agg_proc *agg__procs(const struct agg *a, size_t *n)
{
	*n = a->nprocs;
	return a->procs;
}

const char *const *agg__notes(const struct agg *a, size_t *n)
{
	*n = a->nnotes;
	return (const char *const *)a->notes;
}
