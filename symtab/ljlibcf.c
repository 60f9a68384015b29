/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljlibcf.c -- names of LuaJIT's library C functions from the lj_lib_cf_*
 * tables; see ljlibcf.h.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/elfrel.h"
#include "symtab/ljlibcf.h"

#include "symtab/ljlibcf_names.h"

#define LJCF_MAX	128	/* entries of one list (lj_lib_cf_base has 25) */
#define LJCF_NLISTS	(sizeof(ljcf_lists) / sizeof(ljcf_lists[0]))

/* The names of list l, NUL-separated, into v[0 .. l->n). */
static void ljcf__names(const struct ljcf_list *l, const char **v)
{
	const char *p = l->names;
	size_t i;

	for (i = 0; i < l->n; i++, p += strlen(p) + 1)
		v[i] = p;
}

/* Does list l fit the n slots from rel index j?  The number of functions
 * already named there (all with the list's names), or -1. */
static int ljcf__fit(const struct elf_rels *rels, size_t j, const char *const *v, size_t n,
		     const struct ljcf_ranges *r)
{
	int anchors = 0;
	size_t k;

	if (j + n > rels->n)
		return -1;
	for (k = 0; k < n; k++) {
		const struct elf_rel *x = &rels->v[j + k];
		const char *name;

		if (x->sym || x->off != rels->v[j].off + 8 * k || r->at(r->arg, x->val, &name))
			return -1;	/* not a run of relocated function pointers */
		if (name && strcmp(name, v[k]))
			return -1;
		if (name)
			anchors++;
		else if (r->has(r->arg, v[k]))
			return -1;	/* that name is another function's */
	}
	return anchors;
}

/* Name from the library tables; see ljlibcf.h. */
int ljnames__libcf(const struct elf_rels *rels, const char *version, const struct ljcf_ranges *r,
		   size_t *named)
{
	const char *v[LJCF_MAX];
	size_t at[LJCF_NLISTS];	/* where list i fits once; SIZE_MAX: nowhere or twice */
	size_t i, j, k;
	int err = 0;

	*named = 0;
	if (!version)
		return 0;
	for (i = 0; i < LJCF_NLISTS; i++) {
		const struct ljcf_list *l = &ljcf_lists[i];

		at[i] = SIZE_MAX;
		if (strcmp(l->version, version) || !l->n || l->n > LJCF_MAX)
			continue;
		ljcf__names(l, v);
		for (j = 0; j < rels->n; j++) {
			if (ljcf__fit(rels, j, v, l->n, r) <= 0)
				continue;
			if (at[i] != SIZE_MAX) {	/* two places: trust neither */
				at[i] = SIZE_MAX;
				break;
			}
			at[i] = j;
		}
	}
	for (i = 0; i < LJCF_NLISTS && !err; i++) {
		const struct ljcf_list *l = &ljcf_lists[i];
		int alone = at[i] != SIZE_MAX;

		for (k = 0; k < LJCF_NLISTS && alone; k++)	/* no other list overlaps it */
			if (k != i && at[k] != SIZE_MAX && at[k] < at[i] + l->n &&
			    at[i] < at[k] + ljcf_lists[k].n)
				alone = 0;
		if (!alone)
			continue;
		ljcf__names(l, v);
		for (k = 0; k < l->n && !err; k++) {
			const char *name;

			if (r->at(r->arg, rels->v[at[i] + k].val, &name) || name)
				continue;
			if ((err = r->set(r->arg, rels->v[at[i] + k].val, v[k])) == 0)
				(*named)++;
		}
	}
	return err;
}
