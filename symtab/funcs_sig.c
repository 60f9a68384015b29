/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * funcs_sig.c -- the ranges of a file named by the signatures of their
 * code (symtab/ljsig.h): a step of funcs__new (funcs.c), and
 * funcs__signatures (funcs.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/elf.h"
#include "symtab/funcs.h"
#include "symtab/funcs_int.h"
#include "symtab/ljsig.h"
#include "symtab/vec.h"

#define FUNCS_SIG_MIN_AGREE	8	/* named ranges whose signature must agree */

/* Whether two function names are one function's: equal up to gcc's clone
 * suffix (hashkey.isra.0 is hashkey; lj_alloc_free.cold holds its code). */
static int funcs__same_function(const char *a, const char *b)
{
	size_t la = strcspn(a, "."), lb = strcspn(b, ".");

	return la == lb && !memcmp(a, b, la);
}

static int funcs__u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* What a range's field reaching to adds to its signature: the base
 * signature of the range that starts at to, or 0. */
struct funcs_sigref {
	const struct funcs *f;
	const uint64_t *base;
	const uint8_t *has;
};

static uint64_t funcs__sigref(uint64_t to, void *arg)
{
	const struct funcs_sigref *r = arg;
	const struct func_range *at = funcs__at(r->f, to);

	if (!at || at->lo != to || !r->has[at - r->f->v])
		return 0;
	return r->base[at - r->f->v];
}

/* Signatures of every range; see funcs.h. */
int funcs__signatures(const struct funcs *f, struct elf_file *ef, uint64_t *sig, uint8_t *has)
{
	struct funcs_sigref ref = { f, NULL, NULL };
	uint64_t *base = calloc(f->n + 1, sizeof(*base));
	uint8_t *hasbase = calloc(f->n + 1, 1), *code = NULL;
	size_t i, ccap = 0;
	int pass, err = -ENOMEM;

	memset(has, 0, f->n);
	if (!base || !hasbase)
		goto out;
	ref.base = base;
	ref.has = hasbase;
	for (pass = 0; pass < 2; pass++) {	/* the base signatures, then the signatures */
		for (i = 0; i < f->n; i++) {
			size_t len = f->v[i].hi - f->v[i].lo;

			if (len > (16u << 20) || (pass && len < LJSIG_MIN_LEN))
				continue;
			if (VEC_GROW(code, &ccap, len) != 0)
				goto out;
			if (elf_file__read(ef, f->v[i].lo, code, len) != 0)
				continue;
			if (!pass)
				hasbase[i] = ljsig__base(code, len, &base[i]) == 0;
			else
				has[i] = ljsig__hash(code, len, f->v[i].lo, funcs__sigref, &ref,
						     &sig[i]) == 0;
		}
	}
	err = 0;
out:
	free(base);
	free(hasbase);
	free(code);
	return err;
}

/* Give or take back signatures' names; see funcs_int.h. */
void funcs__set_names(struct funcs *f, const char **bysig, int on)
{
	size_t i;

	f->lj_signames = 0;
	for (i = 0; i < f->n; i++) {
		if (!bysig[i])
			continue;
		f->v[i].name = on ? bysig[i] : NULL;
		f->v[i].how = on ? FUNC_LUAJIT : FUNC_UNNAMED;
		f->lj_signames += on;
	}
}

/* Names from the ranges' code (ljsig.h), once the IR call table said which
 * LuaJIT source this is.  Only a signature that one range alone has counts.
 * Every range that already has a name (a symbol, the IR call table, the
 * interpreter's calls) and whose signature is in the data must be named so
 * there, and at least FUNCS_SIG_MIN_AGREE must be: else the data does not
 * describe this build (another compiler, other flags), and none is used. */
int funcs__name_sigs(struct funcs *f, struct elf_file *ef, const char **bysig)
{
	uint64_t *h = NULL, *sorted = NULL;
	const char **name = NULL;
	uint8_t *has = NULL;
	size_t i, ns = 0, agree = 0, disagree = 0;
	int err = 0;

	if (!f->lj_version || !ljsig__known(f->lj_version))
		goto out;
	err = -ENOMEM;
	h = calloc(f->n + 1, sizeof(*h));
	sorted = malloc((f->n + 1) * sizeof(*sorted));
	name = calloc(f->n + 1, sizeof(*name));
	has = malloc(f->n + 1);
	if (!h || !sorted || !name || !has || (err = funcs__signatures(f, ef, h, has)) != 0)
		goto out;
	for (i = 0; i < f->n; i++)
		if (has[i] && (name[i] = ljsig__name(f->lj_version, h[i])))
			sorted[ns++] = h[i];
	qsort(sorted, ns, sizeof(*sorted), funcs__u64_cmp);
	for (i = 0; i < f->n; i++) {
		const uint64_t *at;

		if (!name[i])
			continue;
		at = bsearch(&h[i], sorted, ns, sizeof(*sorted), funcs__u64_cmp);
		if ((at > sorted && at[-1] == h[i]) || (at + 1 < sorted + ns && at[1] == h[i])) {
			name[i] = NULL;		/* two ranges have it */
			continue;
		}
		if (f->v[i].name)
			funcs__same_function(f->v[i].name, name[i]) ? agree++ : disagree++;
	}
	if (disagree || agree < FUNCS_SIG_MIN_AGREE)
		goto out;
	for (i = 0; i < f->n; i++) {
		if (!name[i] || f->v[i].how != FUNC_UNNAMED)
			continue;
		f->v[i].name = name[i];
		f->v[i].how = FUNC_LUAJIT;
		f->lj_signames++;
		bysig[i] = name[i];
	}
out:
	free(h);
	free(sorted);
	free(name);
	free(has);
	return err;
}
