/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * intmap.h -- a hash map from uint64_t keys to uint64_t values (a number, an
 * index, or a pointer cast through uintptr_t): open addressing with linear
 * probing in a power-of-two table kept at most half full, deletion by
 * backward shift (no tombstones).  Every key is allowed, 0 and UINT64_MAX
 * included.
 *
 * The map is a plain struct the owner embeds; all zero (or intmap__init) is
 * the empty map, intmap__exit frees it.  Pointers returned by intmap__find
 * and intmap__slot stay valid until the next intmap__put, intmap__slot or
 * intmap__del.  Iteration visits every key once, in no particular order,
 * and must not be mixed with changes to the map:
 *
 *	size_t it = 0;
 *	uint64_t k, v;
 *	while (intmap__next(m, &it, &k, &v))
 *		...
 *
 * Errors are negative errno: -ENOMEM, -EOVERFLOW (a table larger than a
 * size_t can count), -ENOENT (intmap__del of a missing key).
 */
#ifndef LJSNAP_SYMTAB_INTMAP_H
#define LJSNAP_SYMTAB_INTMAP_H

#include <stddef.h>
#include <stdint.h>

struct intmap_slot {
	uint64_t key;		/* 0 = empty slot */
	uint64_t val;
};

struct intmap {
	struct intmap_slot *slots;
	size_t n;		/* keys, key 0 included */
	size_t cap;		/* slots: 0 or a power of two */
	int has0;		/* key 0 lives here, outside the slots */
	uint64_t val0;
};

/* An empty map (the same as all zero). */
void intmap__init(struct intmap *m);

/* Free the map's memory; it is empty (and usable) afterwards. */
void intmap__exit(struct intmap *m);

/* Remove every key, keeping the table's memory. */
void intmap__clear(struct intmap *m);

/* Number of keys. */
static inline size_t intmap__count(const struct intmap *m)
{
	return m->n;
}

/* The value of key, or NULL when it is absent. */
uint64_t *intmap__find(const struct intmap *m, uint64_t key);

/* 1 and *val set when key is present, else 0. */
int intmap__get(const struct intmap *m, uint64_t key, uint64_t *val);

/* Set key's value (added or replaced): 0 or negative errno. */
int intmap__put(struct intmap *m, uint64_t key, uint64_t val);

/* Find or add key: *valp points to its value, 0 when just added.  Returns
 * 1 if key was there, 0 if added, or negative errno (*valp untouched). */
int intmap__slot(struct intmap *m, uint64_t key, uint64_t **valp);

/* Remove key: 0, or -ENOENT when it is absent. */
int intmap__del(struct intmap *m, uint64_t key);

/* Make room for n keys without growing again: 0 or negative errno. */
int intmap__reserve(struct intmap *m, size_t n);

/* The next key from *iter (0 at the start): 1 with *key and *val (either
 * may be NULL) set, or 0 at the end. */
int intmap__next(const struct intmap *m, size_t *iter, uint64_t *key, uint64_t *val);

#endif
