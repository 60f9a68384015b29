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

/* One remembered section. */
struct dedup_ent {
	uint16_t kind;
	uint32_t aux;
	uint64_t addr;
	uint32_t len;
	const uint8_t *data;
};

/* The last sample of one thread. */
struct dedup_tid {
	uint32_t seq;			/* its samples in the chunk so far */
	uint32_t n;			/* entries; 0 = forgotten */
	struct dedup_ent e[DEDUP_SECS];
	uint8_t *buf[2];		/* owned bytes: the writer's copies, the
					 * reader's rebuilt sections */
	size_t cap[2];
	int cur;			/* buf[cur] holds what e points at */
};

struct snapfile_dedup {
	struct intmap bytid;		/* tid + 1 -> index into t */
	struct dedup_tid *t;		/* kept over resets for their buffers */
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
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->cap; i++) {
		free(d->t[i].buf[0]);
		free(d->t[i].buf[1]);
	}
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

	return v && d->t[*v].n ? &d->t[*v] : NULL;
}

/* The thread's state, created empty if new; NULL on -ENOMEM. */
static struct dedup_tid *dedup__get(struct snapfile_dedup *d, uint32_t tid)
{
	size_t old = d->cap;
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
		d->t[*v].n = 0;
		d->t[*v].seq = 0;
	}
	return &d->t[*v];
}

/* The entry of kind and aux, or NULL. */
static const struct dedup_ent *dedup__ent(const struct dedup_tid *t, uint16_t kind, uint32_t aux)
{
	uint32_t i;

	for (i = 0; i < t->n; i++)
		if (t->e[i].kind == kind && t->e[i].aux == aux)
			return &t->e[i];
	return NULL;
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
	const struct dedup_tid *t = dedup__find(d, s->tid);
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
	uint64_t *v = intmap__find(&d->bytid, (uint64_t)tid + 1);

	if (v) {
		d->t[*v].n = 0;
		d->t[*v].seq--;
	}
}

int snapfile_dedup__remember(struct snapfile_dedup *d, const struct ljs_sample *s)
{
	struct dedup_tid *t = dedup__get(d, s->tid);
	size_t need = 0, off = 0;
	uint32_t i;

	if (!t)
		return -ENOMEM;
	t->n = 0;
	t->seq++;
	for (i = 0; i < s->nsec; i++)
		if (dedup__kind(s->sec[i].kind) && s->sec[i].data)
			need += s->sec[i].len;
	if (vec__grow(&t->buf[0], &t->cap[0], 1, need ? need : 1))
		return -ENOMEM;
	t->cur = 0;
	for (i = 0; i < s->nsec && t->n < DEDUP_SECS; i++) {
		const struct ljs_section *sec = &s->sec[i];
		struct dedup_ent *e = &t->e[t->n];

		if (!dedup__kind(sec->kind) || !sec->data)
			continue;
		memcpy(t->buf[0] + off, sec->data, sec->len);
		e->kind = sec->kind;
		e->aux = sec->aux;
		e->addr = sec->addr;
		e->len = sec->len;
		e->data = t->buf[0] + off;
		off += sec->len;
		t->n++;
	}
	return 0;
}

/* -- Reader ---------------------------------------------------------------- */

/* memcpy that takes (NULL, 0). */
static void copy(uint8_t *to, const uint8_t *from, size_t n)
{
	if (n)
		memcpy(to, from, n);
}

/* Is r, the REF section after c, one that can be applied to c?  Its addr
 * is the offset of the range in c, its want the range's length. */
static int ref__valid(const struct ljs_section *c, const struct ljs_section *r)
{
	return c->kind != SNAPFILE_SEC_REF && r->want && r->addr <= c->len &&
	       (uint64_t)c->len + r->want <= DEDUP_MAX_LEN;
}

int snapfile_dedup__resolve(struct snapfile_dedup *d, struct ljs_sample *s)
{
	const struct dedup_tid *prev;
	struct dedup_tid *t;
	size_t need = 0, off = 0;
	uint32_t i, j;
	uint8_t *out;
	int nb;

	for (i = 0; i + 1 < s->nsec; i++)
		if (s->sec[i + 1].kind == SNAPFILE_SEC_REF && ref__valid(&s->sec[i], &s->sec[i + 1]))
			need += (size_t)s->sec[i].len + s->sec[i + 1].want;
	if (!(t = dedup__get(d, s->tid)))
		return -ENOMEM;
	prev = t->n ? t : NULL;
	nb = prev ? !prev->cur : 0;
	if (vec__grow(&t->buf[nb], &t->cap[nb], 1, need ? need : 1))
		return -ENOMEM;
	out = t->buf[nb];
	for (i = j = 0; i < s->nsec; i++) {
		struct ljs_section *c = &s->sec[i], *r = i + 1 < s->nsec ? &s->sec[i + 1] : NULL;
		const struct dedup_ent *e;
		uint64_t pl;

		if (c->kind == SNAPFILE_SEC_REF) {	/* one that follows no section */
			d->unresolved++;
			continue;
		}
		if (r && r->kind == SNAPFILE_SEC_REF && ref__valid(c, r)) {
			uint64_t lo = c->addr + r->addr;

			pl = r->addr;
			e = prev && prev->seq == r->aux ? dedup__ent(prev, c->kind, c->aux) : NULL;
			if (e && lo >= e->addr && lo + r->want <= e->addr + e->len) {
				copy(out + off, c->data, pl);
				copy(out + off + pl, e->data + (lo - e->addr), r->want);
				copy(out + off + pl + r->want, c->data + pl, c->len - pl);
				c->data = out + off;
				c->len += r->want;
				off += c->len;
				d->resolved++;
			} else {
				c->len = (uint32_t)pl;
				c->status = LJS_ST_FAULT;
				d->unresolved++;
			}
			i++;
		}
		s->sec[j++] = *c;
	}
	s->nsec = j;
	/* Remember where this sample's stack sections are now. */
	t->n = 0;
	for (i = 0; i < s->nsec && t->n < DEDUP_SECS; i++) {
		const struct ljs_section *sec = &s->sec[i];

		if (!dedup__kind(sec->kind) || !sec->data)
			continue;
		t->e[t->n].kind = sec->kind;
		t->e[t->n].aux = sec->aux;
		t->e[t->n].addr = sec->addr;
		t->e[t->n].len = sec->len;
		t->e[t->n].data = sec->data;
		t->n++;
	}
	t->seq++;
	t->cur = nb;
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
	size_t i, n = sizeof(*d) + d->cap * sizeof(*d->t) + d->bytid.cap * sizeof(struct intmap_slot);

	for (i = 0; i < d->cap; i++)
		n += d->t[i].cap[0] + d->t[i].cap[1];
	return n;
}
