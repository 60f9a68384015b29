/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * intmap.c -- the uint64_t -> uint64_t hash map; see intmap.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/intmap.h"

#define INTMAP_MIN_CAP	16

/* Home slot of a key: the 64-bit finalizer of MurmurHash3, so that keys
 * that differ only in high bits (addresses, pid << 32) spread too. */
static size_t intmap__home(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	key *= 0xc4ceb9fe1a85ec53ull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

/* An empty map. */
void intmap__init(struct intmap *m)
{
	memset(m, 0, sizeof(*m));
}

/* Free the map's memory. */
void intmap__exit(struct intmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* Remove every key, keeping the slots. */
void intmap__clear(struct intmap *m)
{
	if (m->slots)
		memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->n = 0;
	m->has0 = 0;
	m->val0 = 0;
}

/* Slot holding key (not 0), or the empty slot where it would go. */
static struct intmap_slot *intmap__probe(const struct intmap *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = intmap__home(key, m->cap);

	while (m->slots[i].key && m->slots[i].key != key)
		i = (i + 1) & mask;
	return &m->slots[i];
}

/* Rebuild the table with cap slots (a power of two above 2 * n). */
static int intmap__rehash(struct intmap *m, size_t cap)
{
	struct intmap_slot *old = m->slots, *s;
	size_t ocap = m->cap, i;

	if (cap > SIZE_MAX / sizeof(*old))
		return -EOVERFLOW;
	s = calloc(cap, sizeof(*s));
	if (!s)
		return -ENOMEM;
	m->slots = s;
	m->cap = cap;
	for (i = 0; i < ocap; i++)
		if (old[i].key)
			*intmap__probe(m, old[i].key) = old[i];
	free(old);
	return 0;
}

/* Make room for n keys; see intmap.h. */
int intmap__reserve(struct intmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : INTMAP_MIN_CAP;

	if (n > SIZE_MAX / 4)
		return -EOVERFLOW;
	while (cap < 2 * n)
		cap *= 2;
	return cap == m->cap ? 0 : intmap__rehash(m, cap);
}

/* The value of key, or NULL. */
uint64_t *intmap__find(const struct intmap *m, uint64_t key)
{
	struct intmap_slot *s;

	if (!key)
		return m->has0 ? (uint64_t *)&m->val0 : NULL;
	if (!m->cap)
		return NULL;
	s = intmap__probe(m, key);
	return s->key ? &s->val : NULL;
}

/* 1 and *val when key is present, else 0. */
int intmap__get(const struct intmap *m, uint64_t key, uint64_t *val)
{
	const uint64_t *v = intmap__find(m, key);

	if (!v)
		return 0;
	*val = *v;
	return 1;
}

/* Find or add key; see intmap.h. */
int intmap__slot(struct intmap *m, uint64_t key, uint64_t **valp)
{
	struct intmap_slot *s;
	int err;

	if (!key) {
		if (!m->has0) {
			m->has0 = 1;
			m->val0 = 0;
			m->n++;
			*valp = &m->val0;
			return 0;
		}
		*valp = &m->val0;
		return 1;
	}
	if (m->cap) {
		s = intmap__probe(m, key);
		if (s->key) {
			*valp = &s->val;
			return 1;
		}
	}
	/* Not there: grow first if the table would be over half full. */
	if (2 * (m->n + 1) > m->cap) {
		if ((err = intmap__reserve(m, m->n + 1)) != 0)
			return err;
	}
	s = intmap__probe(m, key);
	s->key = key;
	s->val = 0;
	m->n++;
	*valp = &s->val;
	return 0;
}

/* Set key's value. */
int intmap__put(struct intmap *m, uint64_t key, uint64_t val)
{
	uint64_t *v;
	int err = intmap__slot(m, key, &v);

	if (err < 0)
		return err;
	*v = val;
	return 0;
}

/* Remove key, shifting back the entries of its probe run that would
 * otherwise be cut off from their home slot. */
int intmap__del(struct intmap *m, uint64_t key)
{
	size_t mask = m->cap - 1, i, j, h;
	struct intmap_slot *s;

	if (!key) {
		if (!m->has0)
			return -ENOENT;
		m->has0 = 0;
		m->val0 = 0;
		m->n--;
		return 0;
	}
	if (!m->cap || !(s = intmap__probe(m, key))->key)
		return -ENOENT;
	i = (size_t)(s - m->slots);
	for (j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
		h = intmap__home(m->slots[j].key, m->cap);
		/* j's entry may move to i unless its home lies in (i, j]. */
		if (i <= j ? (h <= i || h > j) : (h <= i && h > j)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].key = 0;
	m->slots[i].val = 0;
	m->n--;
	return 0;
}

/* Next key from *iter: 0 is key 0, i + 1 is slot i. */
int intmap__next(const struct intmap *m, size_t *iter, uint64_t *key, uint64_t *val)
{
	if (*iter == 0) {
		*iter = 1;
		if (m->has0) {
			if (key)
				*key = 0;
			if (val)
				*val = m->val0;
			return 1;
		}
	}
	while (*iter - 1 < m->cap) {
		const struct intmap_slot *s = &m->slots[*iter - 1];

		(*iter)++;
		if (s->key) {
			if (key)
				*key = s->key;
			if (val)
				*val = s->val;
			return 1;
		}
	}
	return 0;
}
