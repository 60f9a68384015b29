/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * html.c -- the profile as a self-contained HTML flame graph (see html.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "formats/output/flamegraph_html.h"
#include "formats/output/html.h"
#include "formats/output/json.h"

/* Where the page's template takes the profile. */
#define HTML_MARK	"@LJSNAP_PROFILE_JSON@"

/* A frame, for sorting the frame table by name. */
struct hframe {
	const char *name;
	size_t len;
	unsigned kind;
	uint32_t id;
};

/* A stack as frame ranks (indices into the sorted table), root first. */
struct hstack {
	const uint32_t *seq;
	size_t n;
	uint64_t count;
};

/* qsort comparator: by name bytes, then kind. */
static int hframe__cmp(const void *pa, const void *pb)
{
	const struct hframe *a = pa, *b = pb;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->name, b->name, n);

	if (c)
		return c;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->kind < b->kind ? -1 : a->kind > b->kind;
}

/* qsort comparator: by ranks, a stack before the stacks it is a prefix of. */
static int hstack__cmp(const void *pa, const void *pb)
{
	const struct hstack *a = pa, *b = pb;
	size_t i, n = a->n < b->n ? a->n : b->n;

	for (i = 0; i < n; i++)
		if (a->seq[i] != b->seq[i])
			return a->seq[i] < b->seq[i] ? -1 : 1;
	return a->n < b->n ? -1 : a->n > b->n;
}

/* A JSON string in the page: '<' escaped too (json.h). */
static void json__cstr(FILE *out, const char *s)
{
	json__str(out, s, s ? strlen(s) : 0, JSON_ESC_LT);
}

/* "file", "selection", "time", "walk", "procs", "notes". */
static void meta__write(const struct agg *a, FILE *out)
{
	const struct ljs_walk_stats *w = agg__walk(a);
	const struct agg_time *t = agg__time(a);
	const struct agg_proc *p;
	const char *const *notes;
	size_t i, n;

	fputs("\"v\":1,\"file\":", out);
	json__cstr(out, agg__source_file(a));
	fputs(",\"selection\":", out);
	json__cstr(out, agg__source_selection(a));
	fprintf(out, ",\"lines\":%d,\"total\":%" PRIu64, (agg__flags(a) & AGG_LINES) ? 1 : 0,
		agg__total(a));
	fprintf(out, ",\n\"time\":{\"start_ms\":%" PRIu64 ",\"duration_ns\":%" PRIu64
		",\"freq_hz\":%" PRIu32 "}", t->start_ns / 1000000, t->duration_ns, t->freq_hz);
	fprintf(out, ",\n\"walk\":{\"samples\":%" PRIu64 ",\"no_luajit\":%" PRIu64
		",\"no_state\":%" PRIu64 ",\"lua_state\":%" PRIu64 ",\"clean\":%" PRIu64
		",\"to_main\":%" PRIu64 ",\"with_unknown\":%" PRIu64 ",\"truncated\":%" PRIu64 "}",
		w->samples, w->no_luajit, w->no_state, w->lua_state, w->clean, w->to_main,
		w->with_unknown, w->truncated);
	fputs(",\n\"procs\":[", out);
	p = agg__procs(a, &n);
	for (i = 0; i < n; i++) {
		fprintf(out, "%s[%" PRIu32 ",", i ? "," : "", p[i].pid);
		json__cstr(out, p[i].comm);
		fprintf(out, ",%" PRIu64 ",", p[i].samples);
		json__cstr(out, p[i].build);
		putc(']', out);
	}
	fputs("],\n\"notes\":[", out);
	notes = agg__notes(a, &n);
	for (i = 0; i < n; i++) {
		if (i)
			putc(',', out);
		json__cstr(out, notes[i]);
	}
	fputs("],\n\"kinds\":[", out);
	for (i = 0; i < LJS_FK__MAX; i++) {
		if (i)
			putc(',', out);
		json__cstr(out, ljs_fkind__name((enum ljs_fkind)i));
	}
	putc(']', out);
}

/* "frames": the frames the stacks use, sorted by name; rank[id] = the
 * frame's index in that table. */
static int frames__write(const struct agg *a, FILE *out, uint32_t *rank)
{
	size_t nf = agg__nframes(a), ns = agg__nstacks(a), nu = 0, i, j;
	struct hframe *f = calloc(nf ? nf : 1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	memset(rank, 0, nf * sizeof(*rank));
	for (i = 0; i < ns; i++) {
		const uint32_t *ids;
		size_t n;
		uint64_t count;

		agg__stack(a, i, &ids, &n, &count);
		for (j = 0; j < n; j++)
			rank[ids[j]] = 1;
	}
	for (i = 0; i < nf; i++) {
		if (!rank[i])
			continue;
		f[nu].name = agg__frame_name(a, (uint32_t)i, &f[nu].len);
		f[nu].kind = (unsigned)agg__frame_kind(a, (uint32_t)i);
		f[nu++].id = (uint32_t)i;
	}
	qsort(f, nu, sizeof(*f), hframe__cmp);
	fputs(",\n\"frames\":[", out);
	for (i = 0; i < nu; i++) {
		rank[f[i].id] = (uint32_t)i;
		if (i)
			putc(',', out);
		if (i % 8 == 0)
			putc('\n', out);
		json__str(out, f[i].name, f[i].len, JSON_ESC_LT);
		fprintf(out, ",%u", f[i].kind);
	}
	putc(']', out);
	free(f);
	return 0;
}

/* "tree": the stacks sorted by ranks are the call tree in preorder; each
 * stack adds the nodes past what it shares with the one before it. */
static int tree__write(const struct agg *a, FILE *out, const uint32_t *rank)
{
	size_t ns = agg__nstacks(a), nall = 0, pos = 0, i, j, k = 0;
	struct hstack *st = calloc(ns ? ns : 1, sizeof(*st));
	uint32_t *seq = NULL;
	int err = 0;

	if (!st)
		return -ENOMEM;
	for (i = 0; i < ns; i++) {
		const uint32_t *ids;
		size_t n;
		uint64_t count;

		agg__stack(a, i, &ids, &n, &count);
		nall += n;
	}
	seq = malloc((nall ? nall : 1) * sizeof(*seq));
	if (!seq) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < ns; i++) {
		const uint32_t *ids;

		agg__stack(a, i, &ids, &st[i].n, &st[i].count);
		for (j = 0; j < st[i].n; j++)
			seq[pos + j] = rank[ids[j]];
		st[i].seq = seq + pos;
		pos += st[i].n;
	}
	qsort(st, ns, sizeof(*st), hstack__cmp);
	fputs(",\n\"tree\":[", out);
	for (i = 0; i < ns; i++) {
		size_t l = 0;

		if (i)
			while (l < st[i].n && l < st[i - 1].n && st[i].seq[l] == st[i - 1].seq[l])
				l++;
		for (j = l; j < st[i].n; j++, k++)
			fprintf(out, "%s%s%zu,%" PRIu32 ",%" PRIu64, k ? "," : "",
				k % 8 == 0 ? "\n" : "", j, st[i].seq[j],
				j + 1 == st[i].n ? st[i].count : 0);
	}
	fputs("]", out);
out:
	free(seq);
	free(st);
	return err;
}

/* Write the page: the template with the profile at its mark. */
int html__write(const struct agg *a, const struct output_opts *o, FILE *out)
{
	const char *page = flamegraph_html, *mark = strstr(page, HTML_MARK);
	size_t nf = agg__nframes(a);
	uint32_t *rank = calloc(nf ? nf : 1, sizeof(*rank));
	int err = 0;

	(void)o;
	if (!rank) {
		err = -ENOMEM;
		goto out;
	}
	if (!mark) {		/* the build embedded a page without its mark */
		err = -EINVAL;
		goto out;
	}
	fwrite(page, 1, (size_t)(mark - page), out);
	putc('{', out);
	meta__write(a, out);
	err = frames__write(a, out, rank);
	if (!err)
		err = tree__write(a, out, rank);
	if (err)
		goto out;
	fputs("}\n", out);
	fputs(mark + strlen(HTML_MARK), out);
	if (fflush(out) || ferror(out))
		err = -EIO;
out:
	free(rank);
	return err;
}
