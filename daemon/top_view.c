/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * top_view.c -- `ljsnap top`'s view: self and total samples per function
 * from the profile model (formats/output/aggregate.h), over the last
 * interval and since the start, the processes and the VM states, printed
 * on an 80x24 screen or as plain text.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/top.h"

#define TOP_COLS	80
#define TOP_LINES	24
#define TOP_PLAIN_ROWS	30	/* functions in the plain-text view */
#define TOP_SCREEN_PROCS 4	/* processes on the screen */
#define TOP_NAME_COLS	(TOP_COLS - 1 - 36)	/* the function column */

/* Whether a frame of kind k counts in mode m (1: Lua only). */
static int counts(enum ljs_fkind k, int m)
{
	if (k == LJS_FK_ROOT)
		return 0;
	if (!m)
		return 1;
	return ljs_fkind__is_lua(k) || k == LJS_FK_C || k == LJS_FK_BUILTIN ||
	       k == LJS_FK_PSEUDO || k == LJS_FK_UNKNOWN;
}

/* Hottest first: the last interval, then since the start (ctx: whether
 * by total). */
static int row_cmp(const void *a, const void *b, void *ctx)
{
	const struct top_row *x = a, *y = b;
	int by_total = *(const int *)ctx;
	uint64_t kx = by_total ? x->total : x->self, ky = by_total ? y->total : y->self;
	uint64_t ax = by_total ? x->total_all : x->self_all;
	uint64_t ay = by_total ? y->total_all : y->self_all;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (ax != ay)
		return ax > ay ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Count one mode: self and total per frame id since the start, and the
 * rows with their differences from the last refresh. */
static int refresh_mode(struct top *t, int m, uint32_t *mark, uint64_t *self, uint64_t *total,
			size_t nf)
{
	struct top_mode *md = &t->mode[m];
	size_t i, j, ns = agg__nstacks(t->agg), nrows = 0;
	struct agg_stack sb = { NULL, 0, 0 };
	uint64_t *sp, *tp;
	struct top_row *rows;

	memset(self, 0, nf * sizeof(*self));
	memset(total, 0, nf * sizeof(*total));
	memset(mark, 0, nf * sizeof(*mark));
	for (i = 0; i < ns; i++) {
		const uint32_t *ids;
		uint64_t count;
		size_t n;
		long leaf = -1;

		if (agg__stack(t->agg, i, &sb, &count))
			continue;
		ids = sb.ids;
		n = sb.n;
		for (j = 0; j < n; j++) {
			uint32_t b = agg__frame_base(t->agg, ids[j]);

			if (!counts(agg__frame_kind(t->agg, ids[j]), m))
				continue;
			leaf = b;
			if (mark[b] != i + 1) {		/* once per stack: recursion */
				mark[b] = (uint32_t)(i + 1);
				total[b] += count;
			}
		}
		if (leaf >= 0)
			self[leaf] += count;
	}
	agg_stack__exit(&sb);
	rows = calloc(nf ? nf : 1, sizeof(*rows));
	sp = realloc(md->self_prev, (nf ? nf : 1) * sizeof(*sp));
	if (sp)
		md->self_prev = sp;
	tp = realloc(md->total_prev, (nf ? nf : 1) * sizeof(*tp));
	if (tp)
		md->total_prev = tp;
	if (!rows || !sp || !tp) {
		free(rows);
		return -ENOMEM;
	}
	for (i = 0; i < nf; i++) {
		uint64_t s0 = i < md->nprev ? md->self_prev[i] : 0;
		uint64_t t0 = i < md->nprev ? md->total_prev[i] : 0;

		if (total[i])
			rows[nrows++] = (struct top_row){ (uint32_t)i, self[i] - s0, total[i] - t0,
							  self[i], total[i] };
	}
	memcpy(md->self_prev, self, nf * sizeof(*self));
	memcpy(md->total_prev, total, nf * sizeof(*total));
	md->nprev = nf;
	free(md->rows);
	md->rows = rows;
	md->nrows = nrows;
	return 0;
}

/* Sort the rows again (the sort key changed); see top.h. */
void top_view__sort(struct top *t)
{
	int m;

	for (m = 0; m < 2; m++)
		qsort_r(t->mode[m].rows, t->mode[m].nrows, sizeof(struct top_row), row_cmp,
			&t->sort_total);
}

/* Count the functions; see top.h. */
int top_view__refresh(struct top *t, uint64_t now_ns)
{
	size_t nf = agg__nframes(t->agg), i;
	uint64_t *self = calloc(nf ? nf : 1, sizeof(*self));
	uint64_t *total = calloc(nf ? nf : 1, sizeof(*total));
	uint32_t *mark = calloc(nf ? nf : 1, sizeof(*mark));
	int err = -ENOMEM, m;

	if (!self || !total || !mark)
		goto out;
	for (m = 0; m < 2; m++) {
		err = refresh_mode(t, m, mark, self, total, nf);
		if (err)
			goto out;
	}
	top_view__sort(t);
	t->samples_last = t->samples - t->samples_prev;
	t->samples_prev = t->samples;
	t->lost_last = t->lost - t->lost_prev;
	t->lost_prev = t->lost;
	for (i = 0; i <= LJS_VM__MAX; i++) {
		t->vm_last[i] = t->vm[i] - t->vm_prev[i];
		t->vm_prev[i] = t->vm[i];
	}
	for (i = 0; i < t->nprocs; i++) {
		t->procs[i].last = t->procs[i].all - t->procs[i].prev;
		t->procs[i].prev = t->procs[i].all;
	}
	t->interval_ns = t->last_refresh_ns ? now_ns - t->last_refresh_ns : now_ns - t->start_ns;
	t->last_refresh_ns = now_ns;
	err = 0;
out:
	free(self);
	free(total);
	free(mark);
	return err;
}

/* A percentage of what out of all (0 when all is 0). */
static double pct(uint64_t what, uint64_t all)
{
	return all ? 100.0 * (double)what / (double)all : 0.0;
}

/* Short name of a frame kind for the KIND column. */
static const char *kind_tag(enum ljs_fkind k)
{
	switch (k) {
	case LJS_FK_LUA:
	case LJS_FK_LUA_TRACE:
	case LJS_FK_LUA_INLINED:
		return "lua";
	case LJS_FK_C:
		return "C";
	case LJS_FK_BUILTIN:
		return "ff";
	case LJS_FK_PSEUDO:
		return "vm";
	case LJS_FK_UNKNOWN:
		return "?";
	case LJS_FK_KERNEL:
		return "kern";
	default:
		return "nat";
	}
}

/* End a line: cut at the screen's width, clear the rest of it. */
static void line_out(FILE *out, int screen, const char *s)
{
	if (screen)
		fprintf(out, "%.*s\033[K\r\n", TOP_COLS - 1, s);
	else
		fprintf(out, "%s\n", s);
}

/* Processes, hottest first in the last interval (indexes into t->procs). */
static size_t procs_sorted(const struct top *t, size_t *idx)
{
	size_t i, j, n = 0;

	for (i = 0; i < t->nprocs; i++) {
		for (j = n; j > 0 && t->procs[idx[j - 1]].last < t->procs[i].last; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
		n++;
	}
	return n;
}

/* The header: target, rates, VM states. */
static void print_head(const struct top *t, FILE *out, int screen)
{
	static const char *vm_short[LJS_VM__MAX] = { "interp", "C", "GC", "trace", "JIT", "exit", "other" };
	static const int vm_order[] = { LJS_VM_INTERP, LJS_VM_TRACE, LJS_VM_C, LJS_VM_GC, LJS_VM_COMPILER,
					LJS_VM_EXIT };
	double secs = t->interval_ns ? t->interval_ns / 1e9 : 1.0;
	uint64_t up = t->last_refresh_ns > t->start_ns ? (t->last_refresh_ns - t->start_ns) / 1000000000ull : 0;
	uint64_t lj = 0;
	char buf[512];
	size_t off, i;

	snprintf(buf, sizeof(buf), "ljsnap top  %s  %u Hz  up %llu:%02llu:%02llu  [sort: %s] [%s]%s",
		 t->target, t->freq, (unsigned long long)(up / 3600), (unsigned long long)(up / 60 % 60),
		 (unsigned long long)(up % 60), t->sort_total ? "total" : "self",
		 t->lua_only ? "Lua only" : "mixed", t->paused ? " PAUSED" : "");
	line_out(out, screen, buf);
	snprintf(buf, sizeof(buf), "samples/s %.0f  lost/s %.0f  |  since the start: %llu samples, "
		 "%llu lost", t->samples_last / secs, t->lost_last / secs,
		 (unsigned long long)t->samples_prev, (unsigned long long)t->lost_prev);
	line_out(out, screen, buf);
	for (i = 0; i < LJS_VM__MAX; i++)
		lj += t->vm_last[i];
	off = (size_t)snprintf(buf, sizeof(buf), "VM:");
	for (i = 0; i < sizeof(vm_order) / sizeof(vm_order[0]) && off < sizeof(buf); i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, " %s %.1f%%", vm_short[vm_order[i]],
					pct(t->vm_last[vm_order[i]], lj));
	if (off < sizeof(buf))
		snprintf(buf + off, sizeof(buf) - off, "  (no Lua %.1f%%)",
			 pct(t->vm_last[TOP_VM_NONE], t->samples_last));
	line_out(out, screen, buf);
}

/* The processes: at most max of them (0: all). */
static void print_procs(const struct top *t, FILE *out, int screen, size_t max)
{
	size_t *idx = calloc(t->nprocs ? t->nprocs : 1, sizeof(*idx));
	size_t n, i;
	char buf[512];

	if (!idx)
		return;
	n = procs_sorted(t, idx);
	line_out(out, screen, "    PID COMM             SAMPLES/s  SHARE  LUAJIT");
	for (i = 0; i < n && (!max || i < max); i++) {
		const struct top_proc *p = &t->procs[idx[i]];

		snprintf(buf, sizeof(buf), "%7u %-16.16s %9.0f %5.1f%%  %s%s", p->pid, p->comm,
			 p->last / (t->interval_ns ? t->interval_ns / 1e9 : 1.0),
			 pct(p->last, t->samples_last), p->exited ? "(exited) " : "",
			 p->build[0] ? p->build : "no LuaJIT");
		line_out(out, screen, buf);
	}
	if (i < n) {
		snprintf(buf, sizeof(buf), "    ... %zu more processes", n - i);
		line_out(out, screen, buf);
	}
	free(idx);
}

/* A function's name in the width the screen leaves it: a long chunk name
 * loses its start ("spin .../lua/dump_chain.lua:15"), the function stays. */
static const char *fit(const char *s, char *buf, size_t size)
{
	size_t w = TOP_NAME_COLS < size ? TOP_NAME_COLS : size - 1, len = strlen(s), f;
	const char *sp = strchr(s, ' ');

	if (len <= w)
		return s;
	f = sp ? (size_t)(sp - s) + 1 : 0;
	if (f + 3 + 8 > w)
		f = 0;	/* no room for both: the end tells most */
	snprintf(buf, size, "%.*s...%s", (int)f, s, s + len - (w - f - 3));
	return buf;
}

/* Print the view; see top.h. */
void top_view__print(const struct top *t, FILE *out, int screen)
{
	const struct top_mode *md = &t->mode[t->lua_only];
	size_t nproc_lines = t->nprocs < TOP_SCREEN_PROCS ? t->nprocs : TOP_SCREEN_PROCS + 1;
	size_t rows = screen ? TOP_LINES - 4 - 1 - (1 + nproc_lines) - 1 : TOP_PLAIN_ROWS, i;
	char buf[1024], name[TOP_COLS];

	if (screen)
		fprintf(out, "\033[H");
	print_head(t, out, screen);
	line_out(out, screen, "  SELF%  TOTAL% | SELF%  TOTAL%  KIND FUNCTION   (last interval | since start)");
	for (i = 0; i < rows; i++) {
		const struct top_row *r = i < md->nrows ? &md->rows[i] : NULL;
		size_t len;

		if (!r || (!r->total && !r->total_all)) {
			if (screen)
				line_out(out, screen, "");
			continue;
		}
		snprintf(buf, sizeof(buf), "%6.1f %6.1f  | %5.1f %6.1f  %-4s %s",
			 pct(r->self, t->samples_last), pct(r->total, t->samples_last),
			 pct(r->self_all, t->samples_prev), pct(r->total_all, t->samples_prev),
			 kind_tag(agg__frame_kind(t->agg, r->id)),
			 screen ? fit(agg__frame_name(t->agg, r->id, &len), name, sizeof(name)) :
				  agg__frame_name(t->agg, r->id, &len));
		line_out(out, screen, buf);
	}
	print_procs(t, out, screen, screen ? TOP_SCREEN_PROCS : 0);
	if (screen) {
		fprintf(out, "%s\033[K\033[J", "keys: s self  t total  l Lua only/mixed  p pause  q quit");
	}
	fflush(out);
}
