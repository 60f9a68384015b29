/* SPDX-License-Identifier: GPL-2.0-or-later */
/* snapfile_dedup.c -- format 3's stack references (see snapfile_dedup.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/capture/snapfile_dedup.h"
#include "symtab/intmap.h"
#include "symtab/vec.h"

#define DEDUP_SECS	8		/* stack sections remembered per thread */
#define DEDUP_BLOCK	256		/* bytes compared at once before word steps */
#define DEDUP_MAX_LEN	(1u << 20)	/* largest rebuilt section */

/*
 * One stack section of a thread: the one of its last sample (live), and a
 * window of target memory [base, base + cap) that holds it, so that the
 * next sample's section is made there by writing only the bytes that
 * changed (the writer's copy; the reader's rebuilt section).  A reader's
 * section that came whole points into the chunk instead (data outside img).
 */
struct dedup_ent {
	uint16_t kind;
	uint32_t aux;
	int live;			/* a section of the thread's last sample */
	uint64_t addr;			/* that section */
	uint32_t len;
	const uint8_t *data;
	int in_img;			/* data is in the window */
	uint8_t *img;			/* owned window, kept over samples and chunks */
	uint64_t base;
	size_t cap;
};

/* One thread. */
struct dedup_tid {
	uint32_t seq;			/* its samples in the chunk so far */
	uint32_t n;			/* entries used (live or not) */
	struct dedup_ent e[DEDUP_SECS];
};

struct snapfile_dedup {
	struct intmap bytid;		/* tid + 1 -> index into t */
	struct dedup_tid *t;		/* kept over resets for their windows */
	size_t n, cap;
	uint64_t resolved, unresolved;
};

/* The stack kinds: their outer part stays from sample to sample. */
static int dedup__kind(uint16_t kind)
{
	return kind == LJS_SEC_USTACK || kind == LJS_SEC_LSTACK || kind == LJS_SEC_RES_LSTACK;
}

struct snapfile_dedup *snapfile_dedup__new(void)
{
	return calloc(1, sizeof(struct snapfile_dedup));
}

void snapfile_dedup__delete(struct snapfile_dedup *d)
{
	size_t i, k;

	if (!d)
		return;
	for (i = 0; i < d->cap; i++)
		for (k = 0; k < DEDUP_SECS; k++)
			free(d->t[i].e[k].img);
	free(d->t);
	intmap__exit(&d->bytid);
	free(d);
}

void snapfile_dedup__reset(struct snapfile_dedup *d)
{
	intmap__clear(&d->bytid);
	d->n = 0;
}

/* The thread's state, or NULL. */
static struct dedup_tid *dedup__find(const struct snapfile_dedup *d, uint32_t tid)
{
	uint64_t *v = intmap__find(&d->bytid, (uint64_t)tid + 1);

	return v ? &d->t[*v] : NULL;
}

/* The thread's state, created empty if new (its windows kept from an
 * earlier thread); NULL on -ENOMEM. */
static struct dedup_tid *dedup__get(struct snapfile_dedup *d, uint32_t tid)
{
	size_t old = d->cap, k;
	uint64_t *v;
	int found;

	if (VEC_GROW(d->t, &d->cap, d->n + 1))
		return NULL;
	if (d->cap > old)
		memset(d->t + old, 0, (d->cap - old) * sizeof(*d->t));
	found = intmap__slot(&d->bytid, (uint64_t)tid + 1, &v);
	if (found < 0)
		return NULL;
	if (!found) {
		*v = d->n++;
		d->t[*v].seq = 0;
		for (k = 0; k < DEDUP_SECS; k++)
			d->t[*v].e[k].live = 0;
	}
	return &d->t[*v];
}

/* The live entry of kind and aux, or NULL. */
static struct dedup_ent *dedup__ent(struct dedup_tid *t, uint16_t kind, uint32_t aux)
{
	uint32_t i;

	for (i = 0; t && i < t->n; i++)
		if (t->e[i].live && t->e[i].kind == kind && t->e[i].aux == aux)
			return &t->e[i];
	return NULL;
}

/* The entry for kind and aux in a sample being remembered: the one it had
 * (in `was`, live before this sample), else a free one; NULL if none. */
static struct dedup_ent *dedup__slot(struct dedup_tid *t, const int *was, uint16_t kind,
				     uint32_t aux, int *claimed)
{
	uint32_t i;

	for (i = 0; i < t->n; i++)
		if (was[i] && !claimed[i] && t->e[i].kind == kind && t->e[i].aux == aux)
			goto take;
	for (i = 0; i < t->n; i++)
		if (!was[i] && !claimed[i])
			goto take;
	if (t->n == DEDUP_SECS)
		return NULL;
	i = t->n++;
	t->e[i].img = NULL;
	t->e[i].cap = 0;
take:
	claimed[i] = 1;
	t->e[i].kind = kind;
	t->e[i].aux = aux;
	return &t->e[i];
}

/*
 * Make e's window hold [lo, hi), keeping the bytes of e's section when it
 * is in the window (keep).  Returns 0 or -ENOMEM.
 */
static int ent__window(struct dedup_ent *e, uint64_t lo, uint64_t hi, int keep)
{
	uint64_t nlo = lo, nhi = hi, margin;
	uint8_t *b;

	keep = keep && e->in_img;
	if (e->img && lo >= e->base && hi <= e->base + e->cap)
		return 0;
	if (keep) {
		nlo = e->addr < nlo ? e->addr : nlo;
		nhi = e->addr + e->len > nhi ? e->addr + e->len : nhi;
	}
	/* room on both sides: stacks grow and shrink at one end */
	margin = (nhi - nlo) / 4 + 512;
	nlo = nlo > margin ? nlo - margin : 0;
	nhi += margin;
	if (!(b = malloc(nhi - nlo)))
		return -ENOMEM;
	if (keep)
		memcpy(b + (e->addr - nlo), e->data, e->len);
	free(e->img);
	e->img = b;
	e->base = nlo;
	e->cap = nhi - nlo;
	if (keep)
		e->data = b + (e->addr - nlo);
	return 0;
}

/* memcpy that takes (NULL, 0). */
static void copy(uint8_t *to, const uint8_t *from, size_t n)
{
	if (n)
		memcpy(to, from, n);
}

/* -- Writer ---------------------------------------------------------------- */

/* Bytes at the top of [a, a + n) and [b, b + n) that are the same. */
static size_t same_top(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t k = n;

	while (k >= DEDUP_BLOCK && !memcmp(a + k - DEDUP_BLOCK, b + k - DEDUP_BLOCK, DEDUP_BLOCK))
		k -= DEDUP_BLOCK;
	while (k >= 8 && !memcmp(a + k - 8, b + k - 8, 8))
		k -= 8;
	return n - k;
}

/* Bytes at the bottom of [a, a + n) and [b, b + n) that are the same. */
static size_t same_bottom(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t k = 0;

	while (n - k >= DEDUP_BLOCK && !memcmp(a + k, b + k, DEDUP_BLOCK))
		k += DEDUP_BLOCK;
	while (n - k >= 8 && !memcmp(a + k, b + k, 8))
		k += 8;
	return k;
}

/* The longest run of sec that starts or ends its overlap with e and holds
 * the same bytes: the user stack keeps its top, the Lua stack its bottom. */
static struct snapfile_ref dedup__run(const struct ljs_section *sec, const struct dedup_ent *e)
{
	uint64_t lo = sec->addr > e->addr ? sec->addr : e->addr;
	uint64_t hi = sec->addr + sec->len < e->addr + e->len ? sec->addr + sec->len :
		      e->addr + e->len;
	struct snapfile_ref r = { 0, 0 };
	const uint8_t *a, *b;
	size_t top, bottom;

	if (hi <= lo || hi - lo < SNAPFILE_DEDUP_MIN)
		return r;
	a = sec->data + (lo - sec->addr);
	b = e->data + (lo - e->addr);
	top = same_top(a, b, hi - lo);
	bottom = top == hi - lo ? 0 : same_bottom(a, b, hi - lo);
	if (top >= bottom && top >= SNAPFILE_DEDUP_MIN) {
		r.lo = hi - top;
		r.hi = hi;
	} else if (bottom > top && bottom >= SNAPFILE_DEDUP_MIN) {
		r.lo = lo;
		r.hi = lo + bottom;
	}
	return r;
}

uint32_t snapfile_dedup__match(struct snapfile_dedup *d, const struct ljs_sample *s,
			       struct snapfile_ref *ref, uint32_t room, uint32_t *prev_seq)
{
	struct dedup_tid *t = dedup__find(d, s->tid);
	uint32_t i, n = 0;

	for (i = 0; i < s->nsec; i++) {
		const struct ljs_section *sec = &s->sec[i];
		const struct dedup_ent *e;

		ref[i].lo = ref[i].hi = 0;
		if (!t || n >= room || !dedup__kind(sec->kind) || !sec->data ||
		    !(e = dedup__ent(t, sec->kind, sec->aux)))
			continue;
		ref[i] = dedup__run(sec, e);
		n += ref[i].hi > ref[i].lo;
	}
	*prev_seq = t ? t->seq : 0;
	return n;
}

void snapfile_dedup__unwrite(struct snapfile_dedup *d, uint32_t tid)
{
	struct dedup_tid *t = dedup__find(d, tid);
	uint32_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		t->e[i].live = 0;
	t->seq--;
}

/* Forget the thread's sections, noting in was[] which were live. */
static void tid__start(struct dedup_tid *t, int *was, int *claimed)
{
	uint32_t i;

	for (i = 0; i < DEDUP_SECS; i++) {
		was[i] = i < t->n && t->e[i].live;
		claimed[i] = 0;
		t->e[i].live = 0;
	}
	t->seq++;
}

int snapfile_dedup__remember(struct snapfile_dedup *d, const struct ljs_sample *s,
			     const struct snapfile_ref *ref)
{
	struct dedup_tid *t = dedup__get(d, s->tid);
	int was[DEDUP_SECS], claimed[DEDUP_SECS], err = 0;
	uint32_t i;

	if (!t)
		return -ENOMEM;
	tid__start(t, was, claimed);
	for (i = 0; i < s->nsec; i++) {
		const struct ljs_section *sec = &s->sec[i];
		uint64_t lo = sec->addr, hi = sec->addr + sec->len;
		struct dedup_ent *e;
		int run;

		if (!dedup__kind(sec->kind) || !sec->data ||
		    !(e = dedup__slot(t, was, sec->kind, sec->aux, claimed)))
			continue;
		/* a run the match found is in e's window already */
		run = ref && ref[i].hi > ref[i].lo && e->in_img;
		if (ent__window(e, lo, hi, run)) {
			err = -ENOMEM;
			continue;
		}
		if (run) {
			copy(e->img + (lo - e->base), sec->data, ref[i].lo - lo);
			copy(e->img + (ref[i].hi - e->base), sec->data + (ref[i].hi - lo),
			     hi - ref[i].hi);
		} else {
			copy(e->img + (lo - e->base), sec->data, sec->len);
		}
		e->addr = lo;
		e->len = sec->len;
		e->data = e->img + (lo - e->base);
		e->in_img = 1;
		e->live = 1;
	}
	return err;
}

/* -- Reader ---------------------------------------------------------------- */

/* Is r, the REF section after c, one that can be applied to c?  Its addr
 * is the offset of the range in c, its want the range's length. */
static int ref__valid(const struct ljs_section *c, const struct ljs_section *r)
{
	return c->kind != SNAPFILE_SEC_REF && r->want && r->addr <= c->len &&
	       (uint64_t)c->len + r->want <= DEDUP_MAX_LEN;
}

/*
 * Rebuild section c from its bytes and the run [lo, lo + want) of e, the
 * thread's previous section of its kind, in e's window: when e is there
 * already, only c's own bytes are written.  0 or -ENOMEM.
 */
static int ent__rebuild(struct dedup_ent *e, struct ljs_section *c, uint64_t lo, uint32_t want)
{
	uint64_t pl = lo - c->addr, full = (uint64_t)c->len + want;
	const uint8_t *run;

	if (!e->in_img) {	/* e is in the chunk: its run is copied once */
		run = e->data + (lo - e->addr);
		if (ent__window(e, c->addr, c->addr + full, 0))
			return -ENOMEM;
		memcpy(e->img + (lo - e->base), run, want);
	} else if (ent__window(e, c->addr, c->addr + full, 1)) {
		return -ENOMEM;
	}
	copy(e->img + (c->addr - e->base), c->data, pl);
	copy(e->img + (lo + want - e->base), c->data + pl, c->len - pl);
	c->data = e->img + (c->addr - e->base);
	c->len = (uint32_t)full;
	return 0;
}

int snapfile_dedup__resolve(struct snapfile_dedup *d, struct ljs_sample *s)
{
	struct dedup_tid *t = dedup__get(d, s->tid);
	int was[DEDUP_SECS], claimed[DEDUP_SECS], rebuilt[LJS_SAMPLE_MAX_SECS], ok;
	uint32_t i, j, seq;

	if (!t)
		return -ENOMEM;
	seq = t->seq;
	for (i = j = 0; i < s->nsec; i++) {
		struct ljs_section *c = &s->sec[i], *r = i + 1 < s->nsec ? &s->sec[i + 1] : NULL;
		struct dedup_ent *e;

		if (c->kind == SNAPFILE_SEC_REF) {	/* one that follows no section */
			d->unresolved++;
			continue;
		}
		rebuilt[j] = 0;
		if (r && r->kind == SNAPFILE_SEC_REF && ref__valid(c, r)) {
			uint64_t lo = c->addr + r->addr;

			e = seq == r->aux ? dedup__ent(t, c->kind, c->aux) : NULL;
			ok = e && lo >= e->addr && lo + r->want <= e->addr + e->len;
			if (ok && ent__rebuild(e, c, lo, r->want))
				return -ENOMEM;
			if (ok) {
				d->resolved++;
				rebuilt[j] = 1;
			} else {
				c->len = (uint32_t)r->addr;
				c->status = LJS_ST_FAULT;
				d->unresolved++;
			}
			i++;
		}
		s->sec[j++] = *c;
	}
	s->nsec = j;
	/* Remember this sample's stack sections: rebuilt in their windows, or
	 * in the chunk. */
	tid__start(t, was, claimed);
	for (i = 0; i < s->nsec; i++) {
		const struct ljs_section *sec = &s->sec[i];
		struct dedup_ent *e;

		if (!dedup__kind(sec->kind) || !sec->data ||
		    !(e = dedup__slot(t, was, sec->kind, sec->aux, claimed)))
			continue;
		e->addr = sec->addr;
		e->len = sec->len;
		e->data = sec->data;
		e->in_img = rebuilt[i];	/* by ent__rebuild, in e's window */
		e->live = 1;
	}
	return 0;
}

void snapfile_dedup__counts(const struct snapfile_dedup *d, uint64_t *resolved,
			    uint64_t *unresolved)
{
	*resolved = d->resolved;
	*unresolved = d->unresolved;
}

size_t snapfile_dedup__mem(const struct snapfile_dedup *d)
{
	size_t i, k, n = sizeof(*d) + d->cap * sizeof(*d->t) +
			 d->bytid.cap * sizeof(struct intmap_slot);

	for (i = 0; i < d->cap; i++)
		for (k = 0; k < DEDUP_SECS; k++)
			n += d->t[i].e[k].cap;
	return n;
}
