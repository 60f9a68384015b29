/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ksyms.c -- kernel symbol tables and the set of kernel IPs seen (ksyms.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/intmap.h"
#include "symtab/ksyms.h"
#include "symtab/vec.h"

#define KSYMS_CHUNK	(256 * 1024)	/* string arena chunk */
#define KSYMS_LINE_MAX	1024

/* A symbol while the table is built (rank chooses among aliases). */
struct ksym_ent {
	struct ksym s;
	uint8_t global;
	uint32_t seq;		/* insertion order, for a stable choice */
};

struct ksyms_chunk {
	struct ksyms_chunk *next;
	size_t used, size;
	char data[];
};

struct ksyms {
	struct ksym_ent *v;
	size_t n, cap;
	struct ksym *sorted;	/* after __finish: one per address, ascending */
	size_t nsorted;
	struct ksyms_chunk *arena;
	const char *empty;
};

/* -- Building ----------------------------------------------------------------- */

/* Copy a string into the arena. */
static const char *ksyms__strdup(struct ksyms *k, const char *s)
{
	size_t n = strlen(s) + 1;
	struct ksyms_chunk *c = k->arena;
	char *p;

	if (n == 1 && k->empty)
		return k->empty;
	if (!c || c->size - c->used < n) {
		size_t size = n > KSYMS_CHUNK ? n : KSYMS_CHUNK;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->next = k->arena;
		c->used = 0;
		c->size = size;
		k->arena = c;
	}
	p = c->data + c->used;
	memcpy(p, s, n);
	c->used += n;
	if (n == 1)
		k->empty = p;
	return p;
}

/* An empty table. */
struct ksyms *ksyms__new(void)
{
	return calloc(1, sizeof(struct ksyms));
}

/* Free a table. */
void ksyms__delete(struct ksyms *k)
{
	if (!k)
		return;
	while (k->arena) {
		struct ksyms_chunk *c = k->arena;

		k->arena = c->next;
		free(c);
	}
	free(k->v);
	free(k->sorted);
	free(k);
}

/* Add one symbol. */
int ksyms__add(struct ksyms *k, uint64_t addr, const char *name, const char *module, int global)
{
	struct ksym_ent *e;
	int err;

	if (!k || !name)
		return -EINVAL;
	if ((err = VEC_GROW(k->v, &k->cap, k->n + 1)) != 0)
		return err;
	e = &k->v[k->n];
	e->s.addr = addr;
	e->s.name = ksyms__strdup(k, name);
	e->s.module = ksyms__strdup(k, module ? module : "");
	if (!e->s.name || !e->s.module)
		return -ENOMEM;
	e->global = (uint8_t)!!global;
	e->seq = (uint32_t)k->n;
	k->n++;
	return 0;
}

/* Add the symbols of a KSYMS record. */
int ksyms__add_records(struct ksyms *k, const struct ksym *v, size_t n)
{
	size_t i;
	int err;

	for (i = 0; v && i < n; i++) {
		/* the record keeps no type: every saved symbol counts as global */
		err = ksyms__add(k, v[i].addr, v[i].name ? v[i].name : "", v[i].module, 1);
		if (err)
			return err;
	}
	return 0;
}

/* Leading underscores of a name. */
static size_t ksyms__underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Order: address, then the preferred alias first. */
static int ksyms__cmp(const void *a, const void *b)
{
	const struct ksym_ent *x = a, *y = b;
	size_t ux, uy, lx, ly;

	if (x->s.addr != y->s.addr)
		return x->s.addr < y->s.addr ? -1 : 1;
	if (x->global != y->global)
		return x->global ? -1 : 1;
	ux = ksyms__underscores(x->s.name);
	uy = ksyms__underscores(y->s.name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(x->s.name);
	ly = strlen(y->s.name);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sort and keep one symbol per address. */
int ksyms__finish(struct ksyms *k)
{
	size_t i;

	if (!k)
		return -EINVAL;
	if (k->n)	/* qsort wants an array, even of nothing */
		qsort(k->v, k->n, sizeof(*k->v), ksyms__cmp);
	free(k->sorted);
	k->nsorted = 0;
	k->sorted = malloc((k->n ? k->n : 1) * sizeof(*k->sorted));
	if (!k->sorted)
		return -ENOMEM;
	for (i = 0; i < k->n; i++)
		if (!k->nsorted || k->sorted[k->nsorted - 1].addr != k->v[i].s.addr)
			k->sorted[k->nsorted++] = k->v[i].s;
	return 0;
}

/* Parse one kallsyms line: "addr type name[\t[module]]".  1 = symbol. */
static int ksyms__parse(char *line, uint64_t *addr, char *type, char **name, char **module)
{
	char *p = line, *end;

	*addr = strtoull(p, &end, 16);
	if (end == p || *end != ' ')
		return 0;
	p = end + 1;
	if (!*p || p[1] != ' ')
		return 0;
	*type = *p;
	p += 2;
	*name = p;
	p += strcspn(p, "\t\n ");
	*module = NULL;
	if (*p == '\t' && p[1] == '[') {
		*p = 0;
		*module = p + 2;
		(*module)[strcspn(*module, "]\n")] = 0;
	} else {
		*p = 0;
	}
	return **name != 0;
}

/* Read kallsyms. */
int ksyms__load(const char *path, struct ksyms **out)
{
	char line[KSYMS_LINE_MAX];
	struct ksyms *k = NULL;
	size_t nonzero = 0;
	FILE *f;
	int err;

	f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!f)
		return -errno;
	err = -ENOMEM;
	k = ksyms__new();
	if (!k)
		goto out;
	while (fgets(line, sizeof(line), f)) {
		char type, *name, *module;
		uint64_t addr;

		if (!ksyms__parse(line, &addr, &type, &name, &module))
			continue;
		nonzero += addr != 0;
		err = ksyms__add(k, addr, name, module, isupper((unsigned char)type));
		if (err)
			goto out;
	}
	err = k->n == 0 ? -ENODATA : nonzero == 0 ? -EPERM : ksyms__finish(k);
out:
	fclose(f);
	if (err) {
		ksyms__delete(k);
		return err;
	}
	*out = k;
	return 0;
}

/* -- Lookups -------------------------------------------------------------------- */

/* Index of the symbol holding ip, or -1. */
static long ksyms__index(const struct ksyms *k, uint64_t ip)
{
	size_t lo = 0, hi = k->nsorted;

	while (lo < hi) {	/* first symbol with addr > ip */
		size_t mid = lo + (hi - lo) / 2;

		if (k->sorted[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* The symbol holding ip. */
const struct ksym *ksyms__find(const struct ksyms *k, uint64_t ip, uint64_t *off)
{
	long i;

	if (!k || !k->sorted)
		return NULL;
	i = ksyms__index(k, ip);
	if (i < 0)
		return NULL;
	if (off)
		*off = ip - k->sorted[i].addr;
	return &k->sorted[i];
}

/* Symbols in the table. */
size_t ksyms__count(const struct ksyms *k)
{
	return k ? k->nsorted : 0;
}

/* The subset that resolves ips exactly as k does. */
int ksyms__select(const struct ksyms *k, const uint64_t *ips, size_t n, struct ksym **out,
		  size_t *nout)
{
	uint8_t *keep;
	struct ksym *v;
	size_t i, m = 0;
	long j;

	*out = NULL;
	*nout = 0;
	if (!k || !k->sorted || (n && !ips))
		return -EINVAL;
	keep = calloc(k->nsorted ? k->nsorted : 1, 1);
	if (!keep)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		j = ksyms__index(k, ips[i]);
		if (j < 0)
			continue;
		keep[j] = 1;
		if ((size_t)j + 1 < k->nsorted)
			keep[j + 1] = 1;	/* bounds the symbol */
	}
	for (i = 0; i < k->nsorted; i++)
		m += keep[i];
	v = malloc((m ? m : 1) * sizeof(*v));
	if (!v) {
		free(keep);
		return -ENOMEM;
	}
	for (i = 0, m = 0; i < k->nsorted; i++)
		if (keep[i]) {
			v[m].addr = k->sorted[i].addr;
			v[m].name = k->sorted[i].name;
			v[m].module = k->sorted[i].module;
			m++;
		}
	free(keep);
	*out = v;
	*nout = m;
	return 0;
}

/* -- The set of ips --------------------------------------------------------------- */

struct ksym_ipset {
	uint64_t *vals;		/* in the order they came */
	size_t n, cap;
	struct intmap seen;	/* the same ips (values unused) */
};

/* An empty set. */
struct ksym_ipset *ksym_ipset__new(void)
{
	return calloc(1, sizeof(struct ksym_ipset));
}

/* Free a set. */
void ksym_ipset__delete(struct ksym_ipset *s)
{
	if (!s)
		return;
	free(s->vals);
	intmap__exit(&s->seen);
	free(s);
}

/* Add one ip. */
int ksym_ipset__add(struct ksym_ipset *s, uint64_t ip)
{
	uint64_t *unused;
	int err;

	if (!s)
		return -EINVAL;
	if (!ip)
		return 0;
	/* Room first, so that an ip in the set is always in vals too. */
	if ((err = VEC_GROW(s->vals, &s->cap, s->n + 1)) != 0)
		return err;
	if ((err = intmap__slot(&s->seen, ip, &unused)) != 0)
		return err < 0 ? err : 0;
	s->vals[s->n++] = ip;
	return 0;
}

/* The distinct ips. */
const uint64_t *ksym_ipset__values(const struct ksym_ipset *s, size_t *n)
{
	*n = s ? s->n : 0;
	return s ? s->vals : NULL;
}
