/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * textreport.c -- the human-readable summary (see textreport.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "formats/output/textreport.h"

#define TOP_DEFAULT 25

/* Per-function counts (by frame base id). */
struct fn_count {
	uint32_t id;
	uint64_t self, total;
};

/* Sort context for the top lists. */
struct top_ctx {
	const struct agg *a;
	int by_total;
};

/* Percentage of n in d (0 when d is 0). */
static double pct(uint64_t n, uint64_t d)
{
	return d ? 100.0 * (double)n / (double)d : 0.0;
}

/* qsort_r comparator: by self (or total) descending, then by name. */
static int fn__cmp(const void *x, const void *y, void *ctx)
{
	const struct fn_count *a = x, *b = y;
	const struct top_ctx *c = ctx;
	uint64_t ka = c->by_total ? a->total : a->self, kb = c->by_total ? b->total : b->self;

	if (ka != kb)
		return ka > kb ? -1 : 1;
	return strcmp(agg__frame_name(c->a, a->id, NULL), agg__frame_name(c->a, b->id, NULL));
}

/* Self and total samples of every function (base name), root frames aside.
 * Total counts a function once per stack, however often it recurses. */
static struct fn_count *fn__counts(const struct agg *a, size_t *nout)
{
	size_t nf = agg__nframes(a), ns = agg__nstacks(a), i, j, n = 0;
	struct fn_count *fc = calloc(nf ? nf : 1, sizeof(*fc));
	size_t *mark = calloc(nf ? nf : 1, sizeof(*mark));
	struct agg_stack sb = { NULL, 0, 0 };

	if (!fc || !mark) {
		free(fc);
		free(mark);
		return NULL;
	}
	for (i = 0; i < ns; i++) {
		const uint32_t *ids;
		size_t len;
		uint64_t count;
		uint32_t b;

		if (agg__stack(a, i, &sb, &count)) {
			free(fc);
			fc = NULL;
			goto out;
		}
		ids = sb.ids;
		len = sb.n;
		if (len == 0)
			continue;
		b = agg__frame_base(a, ids[len - 1]);
		if (agg__frame_kind(a, b) != LJS_FK_ROOT)
			fc[b].self += count;
		for (j = 0; j < len; j++) {
			b = agg__frame_base(a, ids[j]);
			if (agg__frame_kind(a, b) == LJS_FK_ROOT || mark[b] == i + 1)
				continue;
			mark[b] = i + 1;
			fc[b].total += count;
		}
	}
	for (i = 0; i < nf; i++)
		if (fc[i].total) {
			fc[n] = fc[i];
			fc[n++].id = (uint32_t)i;
		}
out:
	agg_stack__exit(&sb);
	free(mark);
	*nout = n;
	return fc;
}

/* One top list. */
static void top__print(FILE *out, const struct agg *a, struct fn_count *fc, size_t n,
		       unsigned top, int by_total)
{
	struct top_ctx c = { a, by_total };
	uint64_t all = agg__total(a);
	size_t i;

	qsort_r(fc, n, sizeof(*fc), fn__cmp, &c);
	fprintf(out, "\ntop functions by %s samples%s:\n", by_total ? "total" : "self",
		by_total ? " (a function counts once per sample, recursive or not)" : "");
	fprintf(out, "  %9s %6s  %9s %6s  function\n", by_total ? "total" : "self", "%",
		by_total ? "self" : "total", "%");
	for (i = 0; i < n && i < top; i++) {
		uint64_t k1 = by_total ? fc[i].total : fc[i].self;
		uint64_t k2 = by_total ? fc[i].self : fc[i].total;

		if (k1 == 0)
			break;
		/* A kernel function keeps its mark, as in the stacks. */
		fprintf(out, "  %9" PRIu64 " %5.1f%%  %9" PRIu64 " %5.1f%%  %s%s\n", k1, pct(k1, all),
			k2, pct(k2, all), agg__frame_name(a, fc[i].id, NULL),
			agg__frame_kind(a, fc[i].id) == LJS_FK_KERNEL ? "_[k]" : "");
	}
}

/* VM states of the samples with LuaJIT state. */
static void vm__print(FILE *out, const struct ljs_walk_stats *s)
{
	int v;

	fprintf(out, "\nVM state (of %" PRIu64 " samples with LuaJIT state):\n", s->lua_state);
	for (v = 0; v < LJS_VM__MAX; v++)
		fprintf(out, "  %-28s %9" PRIu64 " %5.1f%%\n", ljs_vm__name((enum ljs_vm)v),
			s->vm[v], pct(s->vm[v], s->lua_state));
}

/* How well the stacks were unwound. */
static void unwind__print(FILE *out, const struct ljs_walk_stats *s)
{
	unsigned r;

	fprintf(out, "\nunwinding:\n");
	fprintf(out, "  %-44s %9" PRIu64 "\n", "samples", s->samples);
	fprintf(out, "  %-44s %9" PRIu64 "\n", "of processes without LuaJIT", s->no_luajit);
	fprintf(out, "  %-44s %9" PRIu64 "\n", "LuaJIT processes, no LuaJIT state found",
		s->no_state);
	if (s->other_thread)	/* only when it happened: older reports stay the same */
		fprintf(out, "  %-44s %9" PRIu64 "\n",
			"Lua state of another thread or fiber", s->other_thread);
	fprintf(out, "  %-44s %9" PRIu64 "\n", "with LuaJIT state", s->lua_state);
	fprintf(out, "  unwound to the main chunk with no unknown frame: %" PRIu64 " of %" PRIu64
		" (%.1f%%)\n", s->to_main, s->lua_state, pct(s->to_main, s->lua_state));
	fprintf(out, "  %-44s %9" PRIu64 "\n", "reached the stack bottom, no unknown frame",
		s->clean);
	fprintf(out, "  %-44s %9" PRIu64 "\n", "of them: coroutines resumed from C",
		s->end_c_resume);
	fprintf(out, "  %-44s %9" PRIu64 "\n", "ended in a coroutine without resumer",
		s->end_coroutine);
	fprintf(out, "  %-44s %9" PRIu64 "\n", "not inside Lua (no VM entry on the thread)",
		s->end_not_in_lua);
	fprintf(out, "  %-44s %9" PRIu64 "\n", "stopped at an unknown frame", s->end_error);
	fprintf(out, "  %-44s %9" PRIu64 "\n", "truncated (Lua stack copy cut)", s->truncated);
	fprintf(out, "  %-44s %9" PRIu64 "\n", "with an [unknown] frame", s->with_unknown);
	if (s->lua_state)
		fprintf(out, "  %-44s %9.1f (deepest %" PRIu32 ")\n", "Lua frames per sample",
			(double)s->frames / (double)s->lua_state, s->max_depth);
	for (r = 1; ljs_walk__reason_name(r); r++)
		if (s->unknown[r])
			break;
	if (!ljs_walk__reason_name(r))
		return;
	fprintf(out, "  [unknown] frames by reason:\n");
	for (r = 1; ljs_walk__reason_name(r); r++)
		if (s->unknown[r])
			fprintf(out, "    %-42s %9" PRIu64 "\n", ljs_walk__reason_name(r),
				s->unknown[r]);
}

/* How trace samples were attributed, and (by_trace) the top traces. */
static int traces__print(FILE *out, const struct agg *a, int by_trace, unsigned top)
{
	const uint64_t *src = agg__trace_src(a);
	const struct agg_trace *t;
	uint64_t total = 0;
	size_t i, n;

	for (i = 1; ljs_trace__src_name((unsigned)i); i++)
		total += src[i];
	if (!total)
		return 0;
	fprintf(out, "\nJIT trace samples: %" PRIu64 ", attributed by\n", total);
	for (i = 1; ljs_trace__src_name((unsigned)i); i++)
		if (src[i])
			fprintf(out, "  %-34s %8" PRIu64 " %5.1f%%\n", ljs_trace__src_name((unsigned)i),
				src[i], 100.0 * src[i] / total);
	if (!by_trace)
		return 0;
	t = agg__traces(a, &n);
	if (!t)
		return -ENOMEM;
	fprintf(out, "\ntop traces (%zu distinct):\n", n);
	for (i = 0; i < n && i < top; i++)
		fprintf(out, "  %8" PRIu64 " %5.1f%%  %s\n", t[i].n, 100.0 * t[i].n / total, t[i].label);
	return 0;
}

/* Write the summary. */
int textreport__write(const struct agg *a, const struct output_opts *o, FILE *out)
{
	unsigned top = o && o->top ? o->top : TOP_DEFAULT;
	const struct agg_proc *procs;
	const char *const *notes;
	const char *file = agg__source_file(a), *sel = agg__source_selection(a);
	struct fn_count *fc;
	size_t n = 0, nprocs, nnotes, i;
	int err;

	fc = fn__counts(a, &n);
	if (!fc)
		return -ENOMEM;
	procs = agg__procs(a, &nprocs);
	notes = agg__notes(a, &nnotes);
	fprintf(out, "ljsnap report: %s\n", file ? file : "?");
	if (sel)
		fprintf(out, "selection: %s\n", sel);
	fprintf(out, "samples: %" PRIu64 "%s\n", agg__total(a),
		(agg__flags(a) & AGG_LINES) ? " (Lua frames by line)" : "");
	if (agg__total(a)) {
		top__print(out, a, fc, n, top, 0);
		top__print(out, a, fc, n, top, 1);
	}
	vm__print(out, agg__walk(a));
	unwind__print(out, agg__walk(a));
	if (nprocs)
		fprintf(out, "\nprocesses:\n");
	for (i = 0; i < nprocs; i++) {
		const struct agg_proc *p = &procs[i];

		fprintf(out, "  pid %" PRIu32 " %s: %" PRIu64 " samples, ", p->pid,
			p->comm ? p->comm : "?", p->samples);
		if (p->build)
			fprintf(out, "LuaJIT %s\n", p->build);
		else
			fprintf(out, "no LuaJIT (its stacks show [native])\n");
	}
	if (nnotes)
		fprintf(out, "\nnotes:\n");
	for (i = 0; i < nnotes; i++)
		fprintf(out, "  %s\n", notes[i]);
	free(fc);
	err = traces__print(out, a, o && o->by_trace, top);
	if (err)
		return err;
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}
