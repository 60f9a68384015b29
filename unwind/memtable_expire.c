/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memtable_expire.c -- drop the entries of a memory table that no read at
 * a later time can use (see memtable.h), so that a reader going through a
 * long capture in time order holds the memory that is still current, not
 * every version ever recorded.
 *
 * Why a dropped version can never answer again: at a time t >= time_ns, a
 * version E whose window ended before time_ns does not contain t, and the
 * slack rule needs first_ns > t, so E could only answer as the latest
 * version first seen at or before t (rule 1 of memtable.h).  A version V of
 * the same range first seen at or before time_ns, with a later first_ns (or
 * the same and a higher gen), is first seen at or before t too and ranks
 * above E as such, or contains t and ranks above it anyway.  So E is never
 * its range's answer, and a read's outcome depends only on each range's
 * answer (rules 2 and 3).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/memtable_int.h"

/* Mark pid's entries for the next expiry. */
int memtable__drop_pid(struct memtable *t, uint32_t pid)
{
	uint64_t v;

	if (!t)
		return -EINVAL;
	if (intmap__get(&t->pids, pid, &v))
		((struct mt_pid *)(uintptr_t)v)->dropped = 1;
	return 0;
}

/* Mark the versions of p that no read at time_ns or later can use; their
 * count.  p's index is wholly sorted. */
static size_t pid__mark(const struct memtable *t, const struct mt_pid *p, uint64_t time_ns,
			uint8_t *dead)
{
	size_t r, i, n = 0;

	if (p->dropped) {
		for (i = 0; i < p->n; i++)
			dead[p->idx[i]] = 1;
		return p->n;
	}
	for (r = 0; r < p->nruns; r++) {
		const struct mt_run *run = &p->runs[r];
		const uint32_t *v = p->idx + run->start;
		const uint64_t *first = p->first + run->start;
		const struct mt_ent *last;
		size_t lo = 0, hi = run->n;

		/* The last version first seen at or before time_ns (sorted by
		 * first_ns, then gen): every earlier one ranks below it, unless
		 * it has the same first_ns and gen. */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (first[mid] <= time_ns)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < 2)
			continue;
		last = &t->ents[v[lo - 1]];
		for (i = 0; i + 1 < lo; i++) {
			const struct memtable_entry *e = &t->ents[v[i]].e;

			if (e->last_ns < time_ns &&
			    (e->first_ns != last->e.first_ns || e->gen != last->e.gen)) {
				dead[v[i]] = 1;
				n++;
			}
		}
	}
	return n;
}

/* Give back what p's index holds beyond twice its entries, all of it once
 * p has none: a capture of thousands of processes that come and go would
 * otherwise keep each one's largest index to the end. */
static void pid__shrink(struct mt_pid *p)
{
	uint32_t *idx;
	size_t cap = p->n ? p->n + MT_SHRINK_SLACK : 0;

	if (cap && p->cap <= 2 * p->n + MT_SHRINK_SLACK)
		return;
	if (!cap) {
		free(p->idx);
		free(p->first);
		p->idx = NULL;
		p->first = NULL;
		p->cap = 0;
		return;
	}
	idx = realloc(p->idx, cap * sizeof(*idx));
	if (idx) {		/* mt_pid__runs sizes first to the same */
		p->idx = idx;
		p->cap = cap;
	}
}

/* The same for p's runs. */
static void pid__shrink_runs(struct mt_pid *p)
{
	struct mt_run *r;
	size_t cap = p->nruns ? p->nruns + MT_SHRINK_SLACK : 0;

	if (cap && p->runcap <= 2 * p->nruns + MT_SHRINK_SLACK)
		return;
	if (!cap) {
		free(p->runs);
		p->runs = NULL;
		p->runcap = 0;
		return;
	}
	r = realloc(p->runs, cap * sizeof(*r));
	if (r) {
		p->runs = r;
		p->runcap = cap;
	}
}

/* Remove the marked entries: free their bytes, renumber the rest in
 * insertion order and rebuild each pid's index from what is left. */
static void table__compact(struct memtable *t, const uint8_t *dead, uint32_t *map)
{
	size_t i, j, k = 0, it = 0;
	uint64_t v;

	for (i = 0; i < t->n; i++) {
		if (dead[i]) {
			t->bytes -= t->ents[i].e.len;
			free((void *)t->ents[i].e.data);
			map[i] = UINT32_MAX;
			continue;
		}
		t->ents[k] = t->ents[i];
		map[i] = (uint32_t)k++;
	}
	t->n = k;
	if (t->cap > 2 * k + 1024) {
		struct mt_ent *ne = realloc(t->ents, (k + 1024) * sizeof(*ne));

		if (ne) {
			t->ents = ne;
			t->cap = k + 1024;
		}
	}
	while (intmap__next(&t->pids, &it, NULL, &v)) {
		struct mt_pid *p = (struct mt_pid *)(uintptr_t)v;

		for (i = j = 0; i < p->n; i++)
			if (map[p->idx[i]] != UINT32_MAX)
				p->idx[j++] = map[p->idx[i]];
		p->n = p->nsorted = j;
		pid__shrink(p);
		if (mt_pid__runs(t, p)) {
			p->nsorted = 0;	/* all tail: scanned linearly, never wrong */
			p->nruns = 0;
			p->runs_gen++;
		}
		pid__shrink_runs(p);
	}
	/* Memos hold entry numbers and run indexes. */
	if (t->memo)
		memset(t->memo, 0, MT_MEMO * sizeof(*t->memo));
}

/* Drop what no read at time_ns or later can use (see memtable.h). */
long memtable__expire(struct memtable *t, uint64_t time_ns)
{
	uint8_t *dead = NULL;
	uint32_t *map = NULL;
	size_t it = 0, ndead = 0;
	uint64_t v;
	long ret = 0;

	if (!t)
		return -EINVAL;
	if (!t->n)
		goto out;
	dead = calloc(t->n, 1);
	map = malloc(t->n * sizeof(*map));
	if (!dead || !map) {
		ret = -ENOMEM;
		goto out;
	}
	while (intmap__next(&t->pids, &it, NULL, &v)) {
		struct mt_pid *p = (struct mt_pid *)(uintptr_t)v;

		if (p->nsorted < p->n && mt_pid__merge(t, p)) {
			ret = -ENOMEM;	/* nothing dropped yet */
			goto out;
		}
	}
	it = 0;
	while (intmap__next(&t->pids, &it, NULL, &v))
		ndead += pid__mark(t, (struct mt_pid *)(uintptr_t)v, time_ns, dead);
	if (ndead)
		table__compact(t, dead, map);
	ret = (long)ndead;
out:
	free(dead);
	free(map);
	return ret;
}
