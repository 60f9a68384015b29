/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * folded.c -- write aggregated stacks as folded lines (see folded.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "formats/output/folded.h"
#include "symtab/vec.h"

/* An entry of the sorted walk of the stack tree: the stack that ends at
 * node (stack set), or the stacks that go on below it (stack AGG_NONE). */
struct fitem {
	const unsigned char *name;	/* node's frame name */
	size_t len;
	uint32_t node, stack;
};

/* One node group of the walk: its entries, items[start .. end), and the next one. */
struct flevel {
	size_t start, pos, end;
};

/* The byte that follows an entry's frame name in the text of its lines:
 * the end of the line, or ';'. */
static int fitem__sep(const struct fitem *e)
{
	return e->stack != AGG_NONE ? 0 : ';';
}

/*
 * qsort comparator: entries in the byte order of the text of their lines
 * (strcmp of "frame;frame...", the count left out).  Below one prefix, the
 * lines of an entry start with its name and then its separator; names hold
 * no ';' and no NUL (aggregate.c), so name + separator of two entries are
 * never a proper prefix of each other, and their order is the order of
 * every line of one against every line of the other.  Equal names and
 * separators: two stacks of the same text (one frame of another kind
 * somewhere) keep the order they were first seen in; the frames below two
 * nodes of the same text are merged into one group (fold__walk).
 */
static int fitem__cmp(const void *x, const void *y)
{
	const struct fitem *a = x, *b = y;
	size_t m = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->name, b->name, m), sa = fitem__sep(a), sb = fitem__sep(b);

	if (c)
		return c;
	if (a->len < b->len)
		return sa < b->name[m] ? -1 : 1;
	if (a->len > b->len)
		return (int)a->name[m] < sb ? -1 : 1;
	if (sa != sb)
		return sa < sb ? -1 : 1;
	if (a->stack != b->stack)
		return a->stack < b->stack ? -1 : 1;
	return a->node < b->node ? -1 : a->node > b->node;
}

/* The walk of the stack tree in the order of the lines. */
struct fold {
	const struct agg *a;
	uint32_t *start, *kids;		/* agg__kids */
	struct fitem *items;		/* the entries of every open group */
	size_t nitems, itemcap;
	struct flevel *lev;
	size_t nlev, levcap;
	uint32_t *path;			/* the frame of each open group but the first */
	size_t pathcap;
};

/* The entry of node k of the kind stack (AGG_NONE: what goes on below it). */
static int fold__item(struct fold *f, uint32_t k, uint32_t stack)
{
	struct agg_tnode t;
	struct fitem *e;

	if (VEC_GROW(f->items, &f->itemcap, f->nitems + 1))
		return -ENOMEM;
	agg__node(f->a, k, &t);
	e = &f->items[f->nitems++];
	e->name = (const unsigned char *)agg__frame_name(f->a, t.id, &e->len);
	e->node = k;
	e->stack = stack;
	return 0;
}

/* The entries of node k's children (k = agg__nnodes: the roots). */
static int fold__kids(struct fold *f, uint32_t k)
{
	struct agg_tnode t;
	size_t j;
	int err;

	for (j = f->start[k]; j < f->start[k + 1]; j++) {
		uint32_t c = f->kids[j];

		agg__node(f->a, c, &t);
		if (t.stack != AGG_NONE && (err = fold__item(f, c, t.stack)))
			return err;
		if (f->start[c] < f->start[c + 1] && (err = fold__item(f, c, AGG_NONE)))
			return err;
	}
	return 0;
}

/* Open a group: its entries, items[base ..), sorted. */
static int fold__open(struct fold *f, size_t base)
{
	if (VEC_GROW(f->lev, &f->levcap, f->nlev + 1))
		return -ENOMEM;
	qsort(f->items + base, f->nitems - base, sizeof(*f->items), fitem__cmp);
	f->lev[f->nlev].start = f->lev[f->nlev].pos = base;
	f->lev[f->nlev].end = f->nitems;
	f->nlev++;
	return 0;
}

/* One line: the open groups' frames, the entry's, the count. */
static void fold__line(const struct fold *f, const struct fitem *e, FILE *out)
{
	struct agg_tnode t;
	size_t i, len;

	for (i = 0; i + 1 < f->nlev; i++) {
		const char *name = agg__frame_name(f->a, f->path[i], &len);

		fwrite_unlocked(name, 1, len, out);
		putc_unlocked(';', out);
	}
	fwrite_unlocked(e->name, 1, e->len, out);
	agg__node(f->a, e->node, &t);
	fprintf(out, " %" PRIu64 "\n", t.count);
}

/* Every line, in order: depth first, each group's entries sorted. */
static int fold__walk(struct fold *f, FILE *out)
{
	int err = fold__kids(f, (uint32_t)agg__nnodes(f->a));

	if (!err)
		err = fold__open(f, 0);
	while (!err && f->nlev && !ferror(out)) {
		struct flevel *l = &f->lev[f->nlev - 1];
		const struct fitem *e;
		struct agg_tnode t;
		size_t i, from, base;

		if (l->pos == l->end) {
			f->nitems = l->start;
			f->nlev--;
			continue;
		}
		e = &f->items[l->pos];
		if (e->stack != AGG_NONE) {
			fold__line(f, e, out);
			l->pos++;
			continue;
		}
		/* The frames below every node of this text are one group. */
		for (from = l->pos++; l->pos < l->end && f->items[l->pos].stack == AGG_NONE &&
		     f->items[l->pos].len == e->len &&
		     !memcmp(f->items[l->pos].name, e->name, e->len); l->pos++)
			;
		if (VEC_GROW(f->path, &f->pathcap, f->nlev)) {
			err = -ENOMEM;
			break;
		}
		agg__node(f->a, e->node, &t);
		f->path[f->nlev - 1] = t.id;
		base = f->nitems;	/* e is not used again: the items may move */
		for (i = from; !err && i < l->pos; i++)
			err = fold__kids(f, f->items[i].node);
		if (!err)
			err = fold__open(f, base);
	}
	return err;
}

/* Write every stack of a to out. */
int folded__write(const struct agg *a, const struct output_opts *o, FILE *out)
{
	struct fold f = { .a = a };
	int err;

	(void)o;
	err = agg__kids(a, &f.start, &f.kids);
	if (!err)
		err = fold__walk(&f, out);
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
	free(f.start);
	free(f.kids);
	free(f.items);
	free(f.lev);
	free(f.path);
	return err;
}
