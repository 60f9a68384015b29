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

/* The addresses the ranges' code reaches, all ranges' in one vector. */
struct funcs_targets {
	uint64_t *to;
	size_t n, cap;
};

static int funcs__target(uint64_t to, void *arg)
{
	struct funcs_targets *t = arg;

	if (VEC_GROW(t->to, &t->cap, t->n + 1) != 0)
		return -ENOMEM;
	t->to[t->n++] = to;
	return 0;
}

/* Signatures of every range; see funcs.h.  One pass decodes each range's
 * code once (its base signature and the addresses it reaches); the second
 * puts in the base signatures of the ranges those addresses start. */
int funcs__signatures(const struct funcs *f, struct elf_file *ef, uint64_t *sig, uint8_t *has)
{
	struct funcs_targets t = { NULL, 0, 0 };
	uint64_t *base = calloc(f->n + 1, sizeof(*base)), *reached = NULL;
	size_t *first = calloc(f->n + 2, sizeof(*first));
	uint8_t *hasbase = calloc(f->n + 1, 1), *code = NULL;
	size_t i, j, ccap = 0, rcap = 0;
	int err = -ENOMEM;

	memset(has, 0, f->n);
	if (!base || !first || !hasbase)
		goto out;
	for (i = 0; i < f->n; i++) {
		size_t len = f->v[i].hi - f->v[i].lo, n0 = t.n;

		first[i] = t.n;
		if (len > (16u << 20))
			continue;
		if ((err = VEC_GROW(code, &ccap, len)) != 0)
			goto out;
		if (elf_file__read(ef, f->v[i].lo, code, len) != 0)
			continue;
		err = ljsig__base(code, len, f->v[i].lo, funcs__target, &t, &base[i]);
		if (err == -ENOMEM)
			goto out;
		hasbase[i] = !err;
		if (err)
			t.n = n0;	/* not whole instructions: no targets either */
	}
	first[f->n] = t.n;
	for (i = 0; i < f->n; i++) {
		size_t n = first[i + 1] - first[i];

		if (!hasbase[i])
			continue;
		if ((err = VEC_GROW(reached, &rcap, n + 1)) != 0)
			goto out;
		for (j = 0; j < n; j++) {
			const struct func_range *at = funcs__at(f, t.to[first[i] + j]);

			reached[j] = at && at->lo == t.to[first[i] + j] && hasbase[at - f->v] ?
				     base[at - f->v] : 0;
		}
		has[i] = ljsig__sig(base[i], f->v[i].hi - f->v[i].lo, reached, n, &sig[i]) == 0;
	}
	err = 0;
out:
	free(t.to);
	free(base);
	free(first);
	free(hasbase);
	free(reached);
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
	qsort(sorted, ns, sizeof(*sorted), vec__cmp_u64);
	for (i = 0; i < f->n; i++) {
		const uint64_t *at;

		if (!name[i])
			continue;
		at = bsearch(&h[i], sorted, ns, sizeof(*sorted), vec__cmp_u64);
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
