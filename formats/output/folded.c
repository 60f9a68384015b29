/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * folded.c -- write aggregated stacks as folded lines (see folded.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "formats/output/folded.h"

/* One line: its text (NUL-terminated, no count) and its count. */
struct fline {
	const char *text;
	uint64_t count;
};

/* qsort comparator: by text, byte order. */
static int fline__cmp(const void *a, const void *b)
{
	return strcmp(((const struct fline *)a)->text, ((const struct fline *)b)->text);
}

/* Write every stack of a to out. */
int folded__write(const struct agg *a, const struct output_opts *o, FILE *out)
{
	size_t ns = agg__nstacks(a), i, j, total = 0, pos = 0;
	struct fline *lines = NULL;
	char *text = NULL;
	int err = 0;

	(void)o;
	/* Text of every line, back to back. */
	for (i = 0; i < ns; i++) {
		const uint32_t *ids;
		size_t n, len;
		uint64_t count;

		agg__stack(a, i, &ids, &n, &count);
		for (j = 0; j < n; j++) {
			agg__frame_name(a, ids[j], &len);
			total += len + 1;
		}
	}
	lines = calloc(ns ? ns : 1, sizeof(*lines));
	text = malloc(total ? total : 1);
	if (!lines || !text) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < ns; i++) {
		const uint32_t *ids;
		size_t n, len;
		uint64_t count;

		agg__stack(a, i, &ids, &n, &count);
		lines[i].text = text + pos;
		lines[i].count = count;
		for (j = 0; j < n; j++) {
			const char *name = agg__frame_name(a, ids[j], &len);

			memcpy(text + pos, name, len);
			pos += len;
			text[pos++] = j + 1 < n ? ';' : '\0';
		}
	}
	qsort(lines, ns, sizeof(*lines), fline__cmp);
	for (i = 0; i < ns; i++)
		if (fprintf(out, "%s %" PRIu64 "\n", lines[i].text, lines[i].count) < 0)
			break;
	if (fflush(out) || ferror(out))
		err = -EIO;
out:
	free(lines);
	free(text);
	return err;
}
