/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * speedscope.c -- write the profile as a speedscope file (see speedscope.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "formats/output/json.h"
#include "formats/output/speedscope.h"
#include "symtab/intmap.h"
#include "symtab/vec.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define SS_SCHEMA	"https://www.speedscope.app/file-format-schema.json"
#define SS_NOFRAME	UINT32_MAX

/* The profiles' entries: one per labelled group (or per stack, in a
 * profile model without labels), 4 bytes each, grouped by profile and sorted
 * inside it by (tid, stack); neighbours with equal keys are one sample when
 * written (ss__run).  The 1 GB capture of docs/architecture.md has about 2 M
 * groups: entries of 32 bytes, which qsort's merge sort copied once more,
 * were 130 MB on top of what the folded output needs. */
struct ss_ents {
	const struct agg *a;
	const struct agg_group *g;	/* NULL: entries are stack indexes */
	const struct agg_labels *lab;	/* the groups' labels */
	int per_thread;
	uint32_t *idx;			/* group (or stack) indexes */
	size_t n;
	struct ss_prof *prof;
	size_t nprof, profcap;
};

/* One profile: the entries idx[from .. to-1], of the process at rank (its
 * place in agg__procs; from agg__procs' count on, a pid they do not list). */
struct ss_prof {
	size_t from, to;
	uint32_t rank, pid;
};

/* One written sample: a stack in one thread (tid 0 unless per thread), with
 * the samples of every entry of that key. */
struct ss_run {
	uint32_t stack, tid;
	uint64_t count;
};

/* -- What goes into which profile ------------------------------------------------------ */

static uint32_t ss__tid(const struct ss_ents *e, uint32_t i)
{
	return e->g && e->per_thread ? e->lab[e->g[i].label].tid : 0;
}

static uint32_t ss__stack(const struct ss_ents *e, uint32_t i)
{
	return e->g ? e->g[i].stack : i;
}

/* qsort_r comparator inside one profile: by tid, then stack, then index
 * (the order is total: the output does not depend on qsort). */
static int ss__cmp(const void *x, const void *y, void *ctx)
{
	const struct ss_ents *e = ctx;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	uint32_t ti = ss__tid(e, i), tj = ss__tid(e, j), si, sj;

	if (ti != tj)
		return ti < tj ? -1 : 1;
	si = ss__stack(e, i);
	sj = ss__stack(e, j);
	if (si != sj)
		return si < sj ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The sample that starts at idx[*pos] of one profile ending at idx[end]:
 * the entries with its key summed; *pos moves past them. */
static struct ss_run ss__run(const struct ss_ents *e, size_t *pos, size_t end)
{
	uint32_t i = e->idx[*pos];
	struct ss_run r = { ss__stack(e, i), ss__tid(e, i), 0 };

	for (; *pos < end; ++*pos) {
		i = e->idx[*pos];
		if (ss__stack(e, i) != r.stack || ss__tid(e, i) != r.tid)
			break;
		r.count += e->g ? e->g[i].count : agg__stack_count(e->a, i);
	}
	return r;
}

static void ss_ents__exit(struct ss_ents *e)
{
	free(e->idx);
	free(e->prof);
}

static int u32__cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* Sort each bucket (bucket b is idx[end[b-1] .. end[b]]) and cut it into
 * profiles: one per bucket, or with per_thread one per tid in it.  Bucket b
 * is the process procs[b] for b < np, else the unlisted pid extra[b - np].
 * 0 or -ENOMEM. */
static int ss__profiles(struct ss_ents *e, const size_t *end, size_t nb,
			const struct agg_proc *procs, size_t np, const uint32_t *extra)
{
	size_t b, from = 0, i;
	struct ss_prof *p;

	for (b = 0; b < nb; from = end[b++]) {
		if (from == end[b])
			continue;
		qsort_r(e->idx + from, end[b] - from, sizeof(*e->idx), ss__cmp, e);
		for (i = from; i < end[b]; i++) {
			if (i > from && ss__tid(e, e->idx[i]) == ss__tid(e, e->idx[i - 1]))
				continue;
			if (VEC_GROW(e->prof, &e->profcap, e->nprof + 1))
				return -ENOMEM;
			p = &e->prof[e->nprof++];
			p->from = i;
			p->rank = (uint32_t)b;
			p->pid = !e->g ? 0 : b < np ? procs[b].pid : extra[b - np];
			if (e->nprof > 1)
				p[-1].to = i;
		}
		e->prof[e->nprof - 1].to = end[b];
	}
	return 0;
}

/* The entries of every profile.  Profiles go in the order of the processes
 * (agg__procs), then pids the processes do not list by pid; with per_thread,
 * one profile per (pid, tid) in tid order.  The groups are placed by a
 * counting sort on the process's place, then each process's slice is sorted.
 * A profile model without labels gives one profile of every stack (pid 0,
 * *labelled = 0).  0 or -ENOMEM. */
static int ss_ents__init(struct ss_ents *e, const struct agg *a, int per_thread, int *labelled)
{
	const struct agg_proc *procs;
	struct intmap rank = { 0 };
	size_t ng = 0, nl, np, nb, i, b;
	uint32_t *slot = NULL, *extra = NULL;	/* per group its bucket; unlisted pids */
	size_t *cnt = NULL, nextra = 0, extracap = 0;
	uint64_t r;
	int err = 0;

	memset(e, 0, sizeof(*e));
	e->a = a;
	e->per_thread = per_thread;
	*labelled = 1;
	if (!agg__total(a))
		return 0;
	e->g = agg__groups(a, &ng);
	e->lab = agg__labels(a, &nl);
	*labelled = e->g != NULL;
	if (!e->g)
		ng = agg__nstacks(a);
	e->idx = malloc((ng ? ng : 1) * sizeof(*e->idx));
	slot = malloc((ng ? ng : 1) * sizeof(*slot));
	if (!e->idx || !slot) {
		err = -ENOMEM;
		goto out;
	}
	procs = agg__procs(a, &np);
	for (i = 0; e->g && i < np && !err; i++)
		if (!intmap__find(&rank, procs[i].pid))
			err = intmap__put(&rank, procs[i].pid, i);
	/* Unlisted pids get buckets after the listed ones, in pid order. */
	for (i = 0; e->g && i < ng && !err; i++)
		if (!intmap__find(&rank, e->lab[e->g[i].label].pid)) {
			if (VEC_GROW(extra, &extracap, nextra + 1)) {
				err = -ENOMEM;
				break;
			}
			extra[nextra++] = e->lab[e->g[i].label].pid;
			err = intmap__put(&rank, extra[nextra - 1], UINT64_MAX);
		}
	if (err)
		goto out;
	qsort(extra, nextra, sizeof(*extra), u32__cmp);
	for (i = 0; i < nextra && !err; i++)
		err = intmap__put(&rank, extra[i], np + i);
	nb = e->g ? np + nextra : 1;
	cnt = calloc(nb + 1, sizeof(*cnt));
	if (err || !cnt) {
		err = err ? err : -ENOMEM;
		goto out;
	}
	for (i = 0; i < ng; i++) {
		slot[i] = e->g && intmap__get(&rank, e->lab[e->g[i].label].pid, &r) ? (uint32_t)r : 0;
		cnt[slot[i] + 1]++;
	}
	for (b = 0; b < nb; b++)
		cnt[b + 1] += cnt[b];
	for (i = 0; i < ng; i++)
		e->idx[cnt[slot[i]]++] = (uint32_t)i;
	/* cnt[b] is now the end of bucket b: bucket b is cnt[b-1] .. cnt[b]. */
	free(slot);
	slot = NULL;
	e->n = ng;
	err = ss__profiles(e, cnt, nb, procs, np, extra);
out:
	intmap__exit(&rank);
	free(slot);
	free(extra);
	free(cnt);
	return err;
}

/* Number the frames the entries use, in id order: map[id] = its index in
 * shared.frames, or SS_NOFRAME.  0 or -ENOMEM. */
static int ss__frames(const struct ss_ents *e, struct agg_stack *sb, uint32_t **mapp)
{
	size_t nf = agg__nframes(e->a), i, j;
	uint32_t *map = malloc((nf ? nf : 1) * sizeof(*map)), next = 0;
	uint64_t count;

	if (!map)
		return -ENOMEM;
	for (i = 0; i < nf; i++)
		map[i] = SS_NOFRAME;
	for (i = 0; i < e->n; i++) {
		if (agg__stack(e->a, ss__stack(e, e->idx[i]), sb, &count)) {
			free(map);
			return -ENOMEM;
		}
		for (j = 0; j < sb->n; j++)
			map[sb->ids[j]] = 0;
	}
	for (i = 0; i < nf; i++)
		if (map[i] != SS_NOFRAME)
			map[i] = next++;
	*mapp = map;
	return 0;
}

/* -- Writing ----------------------------------------------------------------------- */

/* The frames of shared.frames: name as folded prints it, file and line
 * where the frame's source gives them (speedscope shows them beside it). */
static void ss__write_frames(const struct agg *a, const uint32_t *map, FILE *out)
{
	size_t nf = agg__nframes(a), i, len;
	struct ljs_frame_src src;
	int first = 1;

	fputs("\"shared\":{\"frames\":[", out);
	for (i = 0; i < nf; i++) {
		const char *name;

		if (map[i] == SS_NOFRAME)
			continue;
		name = agg__frame_name(a, (uint32_t)i, &len);
		fputs(first ? "\n{\"name\":\"" : ",\n{\"name\":\"", out);
		first = 0;
		json__chars(out, name, len, 0);
		fputc('"', out);
		if (agg__frame_src(a, (uint32_t)i, &src)) {
			if (src.file && src.file[0]) {
				fputs(",\"file\":", out);
				json__str(out, src.file, strlen(src.file), 0);
			}
			if (src.line > 0)
				fprintf(out, ",\"line\":%d", src.line);
		}
		fputc('}', out);
	}
	fputs("]},\n", out);
}

/* The name of profile p: "comm (pid N)" or "comm (pid N, tid M)"; the
 * comm from the processes, else the stack's root frame.  0 or -ENOMEM. */
static int ss__write_name(const struct ss_ents *e, const struct ss_prof *p, int labelled,
			  struct agg_stack *sb, FILE *out)
{
	const struct agg_proc *procs;
	const char *comm = NULL;
	uint32_t first = e->idx[p->from];
	size_t np;
	uint64_t count;

	procs = agg__procs(e->a, &np);
	if (labelled && p->rank < np)
		comm = procs[p->rank].comm;
	if (!comm) {
		if (agg__stack(e->a, ss__stack(e, first), sb, &count))
			return -ENOMEM;
		comm = agg__frame_name(e->a, sb->ids[0], NULL);
	}
	fputs("\"name\":\"", out);
	json__chars(out, comm, strlen(comm), 0);
	if (!labelled)
		fputs("\",", out);
	else if (e->per_thread)
		fprintf(out, " (pid %" PRIu32 ", tid %" PRIu32 ")\",", p->pid, ss__tid(e, first));
	else
		fprintf(out, " (pid %" PRIu32 ")\",", p->pid);
	return 0;
}

/* One sampled profile.
 *
 * The unit is "none" and a weight is a number of samples: the weights are
 * then exactly the counts the folded and text outputs print, and mean the
 * same whether the sampling frequency is known or not.  "nanoseconds" (count
 * * 1e9 / Hz) would be an estimate of CPU time, not a measure, and not an
 * integer at most frequencies (499 Hz).  0 or -ENOMEM. */
static int ss__write_profile(const struct ss_ents *e, const struct ss_prof *p,
			     const uint32_t *map, int labelled, struct agg_stack *sb, FILE *out)
{
	uint64_t sum = 0, count;
	struct ss_run r;
	size_t i, j;
	int first;

	for (i = p->from; i < p->to;)
		sum += ss__run(e, &i, p->to).count;
	fputs("{\"type\":\"sampled\",", out);
	if (ss__write_name(e, p, labelled, sb, out))
		return -ENOMEM;
	fprintf(out, "\"unit\":\"none\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n\"samples\":[",
		sum);
	for (i = p->from, first = 1; i < p->to; first = 0) {
		r = ss__run(e, &i, p->to);
		if (agg__stack(e->a, r.stack, sb, &count))
			return -ENOMEM;
		fputs(first ? "\n[" : ",\n[", out);
		for (j = 0; j < sb->n; j++)
			fprintf(out, j ? ",%" PRIu32 : "%" PRIu32, map[sb->ids[j]]);
		fputc(']', out);
	}
	fputs("],\n\"weights\":[", out);
	for (i = p->from, first = 1; i < p->to; first = 0)
		fprintf(out, first ? "%" PRIu64 : ",%" PRIu64, ss__run(e, &i, p->to).count);
	fputs("]}", out);
	return 0;
}

/* Write the speedscope file. */
int speedscope__write(const struct agg *a, const struct output_opts *o, FILE *out)
{
	const char *file = agg__source_file(a), *base;
	int per_thread = o && o->per_thread, labelled, err;
	struct agg_stack sb = { NULL, 0, 0 };
	struct ss_ents e;
	uint32_t *map = NULL;
	size_t i;

	err = ss_ents__init(&e, a, per_thread, &labelled);
	if (!err)
		err = ss__frames(&e, &sb, &map);
	if (err)
		goto out;
	/* speedscope titles the view with "name" and falls back to the first
	 * profile's name only when it is empty: never leave it empty. */
	base = file ? strrchr(file, '/') : NULL;
	base = base ? base + 1 : file;
	if (!base || !base[0])
		base = "ljsnap";
	fputs("{\"$schema\":\"" SS_SCHEMA "\",\n\"exporter\":\"ljsnap " PACKAGE_VERSION "\",\n"
	      "\"name\":", out);
	json__str(out, base, strlen(base), 0);
	fputs(",\n\"activeProfileIndex\":0,\n", out);
	ss__write_frames(a, map, out);
	fputs("\"profiles\":[", out);
	for (i = 0; i < e.nprof && !err; i++) {
		fputs(i ? ",\n" : "\n", out);
		err = ss__write_profile(&e, &e.prof[i], map, labelled, &sb, out);
	}
	if (err)
		goto out;
	fputs("]}\n", out);
	if (fflush(out) || ferror(out))
		err = -EIO;
out:
	agg_stack__exit(&sb);
	free(map);
	ss_ents__exit(&e);
	return err;
}
