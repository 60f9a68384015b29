/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vec.c -- growable arrays; see vec.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/vec.h"

/* Grow the array at pv to hold need elements; see vec.h. */
int vec__grow_slow(void *pv, size_t *cap, size_t elem, size_t need)
{
	size_t ncap = *cap ? *cap : VEC_MIN_CAP;
	void *v, *nv;

	if (need <= *cap)
		return 0;
	if (!elem)
		return -EINVAL;
	if (need > SIZE_MAX / elem)
		return -EOVERFLOW;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / elem / 2 ? need : ncap * 2;
	/* The pointer is read and written as bytes: pv may point to any
	 * object pointer type (struct x **), which void * represents. */
	memcpy(&v, pv, sizeof(v));
	nv = realloc(v, ncap * elem);
	if (!nv)
		return -ENOMEM;
	memcpy(pv, &nv, sizeof(nv));
	*cap = ncap;
	return 0;
}

/* Ascending uint64_t; see vec.h. */
int vec__cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}
