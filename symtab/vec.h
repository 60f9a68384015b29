/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vec.h -- growable arrays: the one capacity check (doubling, with the size
 * arithmetic checked) behind every array that grows in the tree.
 *
 * An array is a pointer T *v with its capacity in elements next to it, as
 * the owners keep them (`T *v; size_t n, cap;` inside their own struct):
 *
 *	if ((err = VEC_GROW(x->v, &x->cap, x->n + 1)) != 0)
 *		return err;
 *	x->v[x->n++] = item;
 *
 * vec__grow(&v, &cap, elem, need) makes room for need elements of elem
 * bytes: nothing when cap >= need; else cap doubles (from VEC_MIN_CAP) until
 * it holds need, or becomes need itself where doubling would overflow, and v
 * is realloc'ed.  Returns 0, -EOVERFLOW when need * elem does not fit in a
 * size_t, or -ENOMEM; on failure v and cap are unchanged and still valid
 * (the owner frees v as usual).  A NULL v with cap 0 is the empty array.
 */
#ifndef LJSNAP_SYMTAB_VEC_H
#define LJSNAP_SYMTAB_VEC_H

#include <stddef.h>

#define VEC_MIN_CAP	16	/* elements at the first growth */

/* The slow half of vec__grow: pv is the address of the array pointer. */
int vec__grow_slow(void *pv, size_t *cap, size_t elem, size_t need);

/* Make room for need elements in the array whose pointer is at pv. */
static inline int vec__grow(void *pv, size_t *cap, size_t elem, size_t need)
{
	return need <= *cap ? 0 : vec__grow_slow(pv, cap, elem, need);
}

/* vec__grow with the element size taken from the array pointer p. */
#define VEC_GROW(p, capp, need)	vec__grow(&(p), (capp), sizeof(*(p)), (need))

/* The qsort and bsearch order of an array of uint64_t, ascending. */
int vec__cmp_u64(const void *a, const void *b);

#endif
