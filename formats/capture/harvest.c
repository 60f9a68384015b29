/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * harvest.c -- the harvest cache between the walker and the live process.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "formats/capture/harvest.h"
#include "formats/capture/snapfile.h"
#include "symtab/intmap.h"
#include "symtab/vec.h"

#define HARVEST_MAX_READ	(1u << 20)	/* larger reads are refused */
#define HARVEST_PAGE_SHIFT	12	/* the overlap index works by 4 KiB page */
#define HARVEST_HOT_NS		250000000ull	/* prefetch what walks read this recently, */
#define HARVEST_HOT_WALKS	8	/* and only the last this many walks */

struct hv_ent {
	struct hv_ent *next;	/* another length at the same address */
	uint32_t pid;
	uint32_t len;
	uint64_t addr;
	uint64_t gen;		/* 1 for the first content seen, +1 per change */
	uint64_t checked_ns;	/* sample time of the last live validation */
	uint64_t seen_ns;	/* when that read happened (the recorder's clock) */
	uint64_t used_ns;	/* sample time of the last walk that read it */
	uint64_t batch;		/* the batch of its last live validation (harvest__batch) */
	int reconfirm;		/* an overlapping range was written with other bytes */
	int hot;		/* in its process's hot list */
	uint8_t data[];
};

/* The overlap index: one node per page an entry touches. */
struct hv_pref {
	struct hv_pref *next;	/* another entry on the same page */
	struct hv_ent *e;
	uint64_t page;
};

/* The cached ranges of one process. */
struct hv_proc {
	struct intmap ents;	/* addr -> struct hv_ent * */
	struct intmap pages;	/* page -> struct hv_pref * */
	struct hv_ent **hot;	/* the ranges walks of this process read lately */
	size_t nhot, caphot;
	uint64_t last_walk_ns;	/* sample time of its last walk */
	uint64_t walk_ns[HARVEST_HOT_WALKS];	/* of its last walks (a ring) */
	unsigned nwalks;
	uint64_t pref_batch;	/* the batch its hot ranges were last prefetched in */
};

struct harvest {
	struct snapfile_writer *w;
	size_t max_bytes, bytes;
	struct intmap procs;	/* pid -> struct hv_proc * */
	struct harvest_stats st;
	int err;
	/* the current sample */
	uint32_t pid;
	uint64_t time_ns;	/* the sample's time: validations are per sample */
	uint64_t now_ns;	/* when its live reads happen */
	uint64_t batch;		/* its batch (harvest__batch), 0: none */
	const struct memsrc *live;	/* the live process */
	struct memsrc src;
	uint8_t *tmp;
};

/* The cached ranges of pid, or NULL; created if create (NULL then means
 * out of memory). */
static struct hv_proc *proc_get(struct harvest *h, uint32_t pid, int create)
{
	struct hv_proc *p;
	uint64_t *v, got;
	int found;

	if (!create)
		return intmap__get(&h->procs, pid, &got) ? (struct hv_proc *)(uintptr_t)got : NULL;
	if ((found = intmap__slot(&h->procs, pid, &v)) < 0)
		return NULL;
	if (found)
		return (struct hv_proc *)(uintptr_t)*v;
	p = calloc(1, sizeof(*p));
	if (!p) {
		intmap__del(&h->procs, pid);
		return NULL;
	}
	*v = (uintptr_t)p;
	return p;
}

/* Free a process's ranges and overlap index (giving back their bytes). */
static void proc_free(struct harvest *h, struct hv_proc *p)
{
	size_t it = 0;
	uint64_t v;

	while (intmap__next(&p->pages, &it, NULL, &v)) {
		struct hv_pref *r = (struct hv_pref *)(uintptr_t)v, *next;

		for (; r; r = next) {
			next = r->next;
			free(r);
		}
	}
	it = 0;
	while (intmap__next(&p->ents, &it, NULL, &v)) {
		struct hv_ent *e = (struct hv_ent *)(uintptr_t)v, *next;

		for (; e; e = next) {
			next = e->next;
			h->bytes -= e->len;
			free(e);
		}
	}
	intmap__exit(&p->pages);
	intmap__exit(&p->ents);
	free(p->hot);
	free(p);
}

/* Put e in p's overlap index (best effort: an entry left out is only not
 * reconfirmed). */
static void index_add(struct hv_proc *p, struct hv_ent *e)
{
	uint64_t pg, last = (e->addr + e->len - 1) >> HARVEST_PAGE_SHIFT, *head;

	for (pg = e->addr >> HARVEST_PAGE_SHIFT; pg <= last; pg++) {
		struct hv_pref *r = malloc(sizeof(*r));

		if (!r || intmap__slot(&p->pages, pg, &head) < 0) {
			free(r);
			return;
		}
		r->e = e;
		r->page = pg;
		r->next = (struct hv_pref *)(uintptr_t)*head;
		*head = (uintptr_t)r;
	}
}

/* e was just written: the cached ranges overlapping it with other bytes in
 * the overlap must be written again when next confirmed. */
static void mark_overlaps(struct hv_proc *p, const struct hv_ent *e)
{
	uint64_t pg, last = (e->addr + e->len - 1) >> HARVEST_PAGE_SHIFT, v;

	for (pg = e->addr >> HARVEST_PAGE_SHIFT; pg <= last; pg++) {
		struct hv_pref *r;

		if (!intmap__get(&p->pages, pg, &v))
			continue;
		for (r = (struct hv_pref *)(uintptr_t)v; r; r = r->next) {
			struct hv_ent *o = r->e;
			uint64_t lo, hi;

			if (o == e || o->reconfirm)
				continue;
			lo = o->addr > e->addr ? o->addr : e->addr;
			hi = o->addr + o->len < e->addr + e->len ? o->addr + o->len : e->addr + e->len;
			if (lo < hi && memcmp(o->data + (lo - o->addr), e->data + (lo - e->addr), hi - lo))
				o->reconfirm = 1;
		}
	}
}

/* Drop every entry (the size cap was reached, or at the end). */
static void clear_all(struct harvest *h)
{
	size_t it = 0;
	uint64_t v;

	while (intmap__next(&h->procs, &it, NULL, &v))
		proc_free(h, (struct hv_proc *)(uintptr_t)v);
	intmap__clear(&h->procs);
	h->bytes = 0;
}

/* Write one generation of p's range e (again, when reconfirmed), valid from
 * time t on. */
static void write_gen(struct harvest *h, struct hv_proc *p, struct hv_ent *e, uint64_t t)
{
	struct snapfile_memory m = {
		.pid = e->pid, .len = e->len, .addr = e->addr, .data = e->data,
		.first_ns = t, .last_ns = t, .gen = e->gen,
	};
	int err = snapfile_writer__memory(h->w, &m);

	if (err) {
		if (!h->err)
			h->err = err;
		return;
	}
	h->st.records++;
	h->st.bytes += e->len;
	e->reconfirm = 0;
	mark_overlaps(p, e);
}

/* Remember that the walk of the sample at t read e (best effort: a range
 * left out is only not prefetched). */
static void note_used(struct hv_proc *p, struct hv_ent *e, uint64_t t)
{
	if (!p)
		return;
	e->used_ns = t;
	if (p->last_walk_ns != t)
		p->walk_ns[p->nwalks++ % HARVEST_HOT_WALKS] = t;
	p->last_walk_ns = t;
	if (!e->hot && VEC_GROW(p->hot, &p->caphot, p->nhot + 1) == 0) {
		p->hot[p->nhot++] = e;
		e->hot = 1;
	}
}

/*
 * The bytes of cached range e were just read live, at the current sample:
 * unchanged, it is confirmed (and written again if an overlapping range
 * disagreed, see harvest.h); changed, it is a new generation.  The change
 * happened after the old bytes were last seen.  Usually that was before
 * this sample was taken, and the sample, which led here, used the object
 * now there: valid from the sample on.  But a recorder that trails its
 * samples may have seen the old bytes after this sample was taken: then
 * the sample used those, and the new ones are valid from now (the object
 * was freed since: lua_close at exit, say).
 */
static void update(struct harvest *h, struct hv_proc *p, struct hv_ent *e, const uint8_t *now)
{
	uint64_t t = h->time_ns;

	e->batch = h->batch;
	if (!memcmp(e->data, now, e->len)) {
		e->checked_ns = h->time_ns;
		e->seen_ns = h->now_ns;
		if (e->reconfirm) {
			h->st.reconfirmed++;
			write_gen(h, p, e, h->time_ns);
		}
		return;
	}
	if (e->seen_ns >= h->time_ns) {
		t = h->now_ns;
		h->st.late_changes++;
	}
	memcpy(e->data, now, e->len);
	e->gen++;
	h->st.generations++;
	e->checked_ns = h->time_ns;
	e->seen_ns = h->now_ns;
	write_gen(h, p, e, t);
}

/* memsrc read: cache validated at this sample, else live (see harvest.h). */
static int hv_read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	struct harvest *h = ms->ctx;
	struct hv_proc *p;
	struct hv_ent *e = NULL;
	uint64_t v, *head;
	int err;

	if (len == 0 || len > HARVEST_MAX_READ)
		return -EINVAL;
	h->st.reads++;
	p = proc_get(h, h->pid, 0);
	if (p && intmap__get(&p->ents, addr, &v))
		for (e = (struct hv_ent *)(uintptr_t)v; e && e->len != len; e = e->next)
			;
	if (e && (e->checked_ns == h->time_ns || (h->batch && e->batch == h->batch))) {
		note_used(p, e, h->time_ns);
		memcpy(buf, e->data, len);
		return 0;
	}
	h->st.live_reads++;
	err = memsrc__read(h->live, addr, h->tmp, len);
	if (err) {
		h->st.live_faults++;
		if (!e)
			return err;
		h->st.stale_served++;	/* the process is gone: last known bytes */
		memcpy(buf, e->data, len);
		return 0;
	}
	memcpy(buf, h->tmp, len);
	if (e) {
		update(h, p, e, h->tmp);
		note_used(p, e, h->time_ns);
		return 0;
	}
	{
		if (h->bytes + len > h->max_bytes) {
			clear_all(h);
			h->st.evictions++;
		}
		p = proc_get(h, h->pid, 1);
		if (!p || intmap__slot(&p->ents, addr, &head) < 0 ||
		    !(e = malloc(sizeof(*e) + len)))
			return 0;	/* served, just not kept */
		e->pid = h->pid;
		e->addr = addr;
		e->len = len;
		e->gen = 1;
		e->reconfirm = 0;
		e->used_ns = 0;
		e->hot = 0;
		memcpy(e->data, h->tmp, len);
		e->next = (struct hv_ent *)(uintptr_t)*head;
		*head = (uintptr_t)e;
		h->bytes += len;
		index_add(p, e);
	}
	e->checked_ns = h->time_ns;
	e->seen_ns = h->now_ns;
	e->batch = h->batch;
	write_gen(h, p, e, h->time_ns);
	note_used(p, e, h->time_ns);
	return 0;
}

/* Create a harvest cache writing MEMORY records to w. */
struct harvest *harvest__new(struct snapfile_writer *w, size_t max_bytes)
{
	struct harvest *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->tmp = malloc(HARVEST_MAX_READ);
	if (!h->tmp) {
		free(h);
		return NULL;
	}
	h->w = w;
	h->max_bytes = max_bytes;
	return h;
}

/* Free the cache. */
void harvest__delete(struct harvest *h)
{
	if (!h)
		return;
	clear_all(h);
	intmap__exit(&h->procs);
	free(h->tmp);
	free(h);
}

/* Memory source for one sample; see harvest.h. */
const struct memsrc *harvest__source(struct harvest *h, uint32_t pid, uint64_t sample_ns,
				     uint64_t now_ns, const struct memsrc *live)
{
	h->pid = pid;
	h->time_ns = sample_ns;
	h->now_ns = now_ns > sample_ns ? now_ns : sample_ns;
	h->live = live;
	h->batch = 0;
	h->src.read = hv_read;
	h->src.ctx = h;
	h->src.next = NULL;
	return &h->src;
}

/* The current sample is one of batch (see harvest.h). */
void harvest__batch(struct harvest *h, uint64_t batch)
{
	h->batch = batch;
}

/* A prefetched range, read whole (now: its bytes): the ranges of the last
 * walk are validated as that walk's own read would (a change is a new
 * generation, written); older ones only when unchanged and not due for a
 * rewrite, else left to a walk that reads them. */
static void prefetched(struct harvest *h, struct hv_proc *p, struct hv_ent *e, const uint8_t *now)
{
	h->st.prefetched++;
	if (e->used_ns == p->last_walk_ns) {
		update(h, p, e, now);
	} else if (!e->reconfirm && !memcmp(e->data, now, e->len)) {
		e->checked_ns = h->time_ns;
		e->seen_ns = h->now_ns;
		e->batch = h->batch;
	}
}

/* Read the ranges walks of the current process read lately (see above),
 * in batches of at most HARVEST_PREFETCH_BATCH ranges and
 * HARVEST_MAX_READ bytes, and validate each one read whole; see harvest.h. */
void harvest__prefetch(struct harvest *h, harvest_readv_fn *readv, void *ctx)
{
	struct harvest_range r[HARVEST_PREFETCH_BATCH];
	struct hv_proc *p = proc_get(h, h->pid, 0);
	size_t n = 0, i, k, nb, off;
	uint64_t since;

	if (!p || (h->batch && p->pref_batch == h->batch))
		return;		/* read once per batch */
	p->pref_batch = h->batch;
	/* Forget what no walk read lately: in the last HARVEST_HOT_NS and the
	 * last HARVEST_HOT_WALKS walks (a working set of thousands of traces
	 * sampled in turn would otherwise all be read at every sample). */
	since = h->time_ns > HARVEST_HOT_NS ? h->time_ns - HARVEST_HOT_NS : 0;
	if (p->nwalks >= HARVEST_HOT_WALKS && p->walk_ns[p->nwalks % HARVEST_HOT_WALKS] > since)
		since = p->walk_ns[p->nwalks % HARVEST_HOT_WALKS];
	for (i = 0; i < p->nhot; i++) {
		struct hv_ent *e = p->hot[i];

		if (e->used_ns < since)
			e->hot = 0;
		else
			p->hot[n++] = e;
	}
	p->nhot = n;
	for (i = 0; i < n; i += nb) {
		for (nb = 0, off = 0; i + nb < n && nb < HARVEST_PREFETCH_BATCH &&
		     off + p->hot[i + nb]->len <= HARVEST_MAX_READ; nb++) {
			r[nb].addr = p->hot[i + nb]->addr;
			r[nb].len = p->hot[i + nb]->len;
			r[nb].buf = h->tmp + off;
			r[nb].ok = 0;
			off += p->hot[i + nb]->len;
		}
		h->st.prefetch_calls++;
		readv(ctx, r, nb);
		for (k = 0; k < nb; k++)
			if (r[k].ok)
				prefetched(h, p, p->hot[i + k], r[k].buf);
	}
}

/* Forget a process. */
void harvest__forget(struct harvest *h, uint32_t pid)
{
	struct hv_proc *p = proc_get(h, pid, 0);

	if (!p)
		return;
	proc_free(h, p);
	intmap__del(&h->procs, pid);
}

/* First write error. */
int harvest__error(const struct harvest *h)
{
	return h->err;
}

/* Counters. */
const struct harvest_stats *harvest__stats(const struct harvest *h)
{
	return &h->st;
}
