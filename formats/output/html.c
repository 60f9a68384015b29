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
#include "symtab/vec.h"

/* Where the page's template takes the profile. */
#define HTML_MARK	"@LJSNAP_PROFILE_JSON@"

/* A frame, for sorting the frame table by name. */
struct hframe {
	const char *name;
	size_t len;
	unsigned kind;
	uint32_t id;
};

/* What the children of a node are sorted by. */
struct hsort {
	const struct agg *a;
	const uint32_t *rank;
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

/* qsort_r comparator: nodes by their frame's rank. */
static int hnode__cmp(const void *pa, const void *pb, void *ctx)
{
	const struct hsort *c = ctx;
	struct agg_tnode x, y;

	agg__node(c->a, *(const uint32_t *)pa, &x);
	agg__node(c->a, *(const uint32_t *)pb, &y);
	return c->rank[x.id] < c->rank[y.id] ? -1 : c->rank[x.id] > c->rank[y.id];
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
	size_t nf = agg__nframes(a), nn = agg__nnodes(a), nu = 0, i;
	struct hframe *f = calloc(nf ? nf : 1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	memset(rank, 0, nf * sizeof(*rank));
	for (i = 0; i < nn; i++) {
		struct agg_tnode t;

		agg__node(a, (uint32_t)i, &t);
		rank[t.id] = 1;
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

/* "tree": the call tree in preorder, each node's children by rank: one
 * (depth, rank, samples of the stack that ends there or 0) per node. */
static int tree__write(const struct agg *a, FILE *out, const uint32_t *rank)
{
	size_t nn = agg__nnodes(a), depth = 0, cap = 0, k = 0, i;
	struct hsort c = { a, rank };
	uint32_t *start = NULL, *kids = NULL;
	struct { size_t pos, end; } *lev = NULL;
	int err = agg__kids(a, &start, &kids);

	for (i = 0; !err && i <= nn; i++)
		qsort_r(kids + start[i], start[i + 1] - start[i], sizeof(*kids), hnode__cmp, &c);
	if (!err && VEC_GROW(lev, &cap, 1))
		err = -ENOMEM;
	if (err)
		goto out;
	fputs(",\n\"tree\":[", out);
	lev[0].pos = start[nn];
	lev[0].end = start[nn + 1];
	for (depth = 1; depth > 0;) {
		struct agg_tnode t;
		uint32_t n;

		if (lev[depth - 1].pos == lev[depth - 1].end) {
			depth--;
			continue;
		}
		n = kids[lev[depth - 1].pos++];
		agg__node(a, n, &t);
		fprintf(out, "%s%s%zu,%" PRIu32 ",%" PRIu64, k ? "," : "", k % 8 == 0 ? "\n" : "",
			depth - 1, rank[t.id], t.count);
		k++;
		if (start[n] == start[n + 1])
			continue;
		if (VEC_GROW(lev, &cap, depth + 1)) {
			err = -ENOMEM;
			goto out;
		}
		lev[depth].pos = start[n];
		lev[depth].end = start[n + 1];
		depth++;
	}
	fputs("]", out);
out:
	free(lev);
	free(start);
	free(kids);
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
