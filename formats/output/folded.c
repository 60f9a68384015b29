/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * folded.c -- write aggregated stacks as folded lines (see folded.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "formats/output/folded.h"

/* One line: its stack's frames and count. */
struct fline {
	const uint32_t *ids;
	size_t n;
	uint64_t count;
};

/* The byte that follows frame j of a line in its text: ';' or the end. */
static int line__sep(const struct fline *l, size_t j)
{
	return j + 1 < l->n ? ';' : 0;
}

/* qsort_r comparator: lines in the byte order of their text (strcmp of
 * "frame;frame..."), found frame by frame without building the text.
 * Names hold no ';' and no NUL (aggregate.c), so at the first frame whose
 * names differ the texts differ at the first differing byte of
 * "name" + separator. */
static int fline__cmp(const void *x, const void *y, void *ctx)
{
	const struct fline *a = x, *b = y;
	const struct agg *g = ctx;
	size_t j = 0, k, la, lb, m = a->n < b->n ? a->n : b->n;

	/* Stacks share long roots: skip equal ids two at a time first. */
	while (j + 2 <= m) {
		uint64_t u, v;

		memcpy(&u, a->ids + j, sizeof(u));
		memcpy(&v, b->ids + j, sizeof(v));
		if (u != v)
			break;
		j += 2;
	}
	for (; j < m; j++) {
		const unsigned char *na, *nb;

		if (a->ids[j] == b->ids[j])
			continue;
		na = (const unsigned char *)agg__frame_name(g, a->ids[j], &la);
		nb = (const unsigned char *)agg__frame_name(g, b->ids[j], &lb);
		for (k = 0; k < la && k < lb && na[k] == nb[k]; k++)
			;
		if (k < la && k < lb)
			return na[k] < nb[k] ? -1 : 1;
		if (la == lb) {
			if (j + 1 < m)
				continue;	/* equal names of two frame kinds */
			break;
		}
		if (k == la)
			return line__sep(a, j) < nb[k] ? -1 : 1;
		return (int)na[k] < line__sep(b, j) ? -1 : 1;
	}
	/* One text is a prefix of the other: the shorter ends first. */
	return a->n < b->n ? -1 : a->n > b->n;
}

/* Write every stack of a to out. */
int folded__write(const struct agg *a, const struct output_opts *o, FILE *out)
{
	size_t ns = agg__nstacks(a), i, j, len;
	struct fline *lines;
	int err = 0;

	(void)o;
	lines = calloc(ns ? ns : 1, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	for (i = 0; i < ns; i++)
		agg__stack(a, i, &lines[i].ids, &lines[i].n, &lines[i].count);
	qsort_r(lines, ns, sizeof(*lines), fline__cmp, (void *)a);
	for (i = 0; i < ns && !ferror(out); i++) {
		for (j = 0; j < lines[i].n; j++) {
			const char *name = agg__frame_name(a, lines[i].ids[j], &len);

			if (j)
				putc_unlocked(';', out);
			fwrite_unlocked(name, 1, len, out);
		}
		fprintf(out, " %" PRIu64 "\n", lines[i].count);
	}
	if (fflush(out) || ferror(out))
		err = -EIO;
	free(lines);
	return err;
}
