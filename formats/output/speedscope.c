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

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define SS_SCHEMA	"https://www.speedscope.app/file-format-schema.json"
#define SS_NOFRAME	UINT32_MAX

/* The samples of one stack in one profile (the sort key is rank, tid, stack). */
struct ss_ent {
	uint64_t rank;		/* the process's place in agg__procs */
	uint32_t pid, tid;	/* tid 0 unless one profile per thread */
	uint32_t stack;		/* index for agg__stack */
	uint64_t count;
};

/* -- JSON strings ----------------------------------------------------------------- */


/* -- What goes into which profile ------------------------------------------------------ */

/* qsort comparator: by rank, then tid, then stack. */
static int ss_ent__cmp(const void *x, const void *y)
{
	const struct ss_ent *a = x, *b = y;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

/* The entries of every profile, sorted, equal keys merged: *n of them
 * (NULL with *n = 0 when there are none).  A profile model without labels
 * gives one profile of every stack (pid and rank 0, *labelled = 0).
 * 0 or -ENOMEM. */
static int ss__entries(const struct agg *a, int per_thread, struct ss_ent **ents, size_t *n,
		       int *labelled)
{
	const struct agg_group *g = NULL;
	const struct agg_proc *procs;
	struct intmap rank = { 0 };
	struct ss_ent *e = NULL;
	size_t ng = 0, np, i, k = 0;
	uint64_t r;
	int err = 0;

	*ents = NULL;
	*n = 0;
	*labelled = 1;
	if (!agg__total(a))
		return 0;
	g = agg__groups(a, &ng);
	*labelled = g != NULL;
	if (!ng)
		ng = agg__nstacks(a);
	e = calloc(ng ? ng : 1, sizeof(*e));
	if (!e) {
		err = -ENOMEM;
		goto out;
	}
	procs = agg__procs(a, &np);
	for (i = 0; i < np && !err; i++)
		if (!intmap__find(&rank, procs[i].pid))
			err = intmap__put(&rank, procs[i].pid, i);
	if (err)
		goto out;
	for (i = 0; i < ng; i++) {
		if (!g) {
			e[i].stack = (uint32_t)i;
			e[i].count = agg__stack_count(a, i);
			continue;
		}
		/* A pid the processes do not list goes after them, by pid. */
		e[i].rank = intmap__get(&rank, g[i].pid, &r) ? r : np;
		e[i].pid = g[i].pid;
		e[i].tid = per_thread ? g[i].tid : 0;
		e[i].stack = g[i].stack;
		e[i].count = g[i].count;
	}
	for (i = 0; g && i < ng; i++)
		if (e[i].rank == np)
			e[i].rank = np + e[i].pid;
	qsort(e, ng, sizeof(*e), ss_ent__cmp);
	for (i = 0; i < ng; i++) {
		if (k && !ss_ent__cmp(&e[k - 1], &e[i]))
			e[k - 1].count += e[i].count;
		else
			e[k++] = e[i];
	}
	*ents = e;
	*n = k;
	e = NULL;
out:
	intmap__exit(&rank);
	free(e);
	return err;
}

/* Number the frames the entries use, in id order: map[id] = its index in
 * shared.frames, or SS_NOFRAME.  0 or -ENOMEM. */
static int ss__frames(const struct agg *a, const struct ss_ent *e, size_t n,
		      struct agg_stack *sb, uint32_t **mapp)
{
	size_t nf = agg__nframes(a), i, j;
	uint32_t *map = malloc((nf ? nf : 1) * sizeof(*map)), next = 0;
	uint64_t count;

	if (!map)
		return -ENOMEM;
	for (i = 0; i < nf; i++)
		map[i] = SS_NOFRAME;
	for (i = 0; i < n; i++) {
		if (agg__stack(a, e[i].stack, sb, &count)) {
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

/* The name of the profile of e: "comm (pid N)" or "comm (pid N, tid M)"; the
 * comm from the processes, else the stack's root frame.  0 or -ENOMEM. */
static int ss__write_name(const struct agg *a, const struct ss_ent *e, int per_thread,
			  int labelled, struct agg_stack *sb, FILE *out)
{
	const struct agg_proc *procs;
	const char *comm = NULL;
	size_t np;
	uint64_t count;

	procs = agg__procs(a, &np);
	if (labelled && e->rank < np)
		comm = procs[e->rank].comm;
	if (!comm) {
		if (agg__stack(a, e->stack, sb, &count))
			return -ENOMEM;
		comm = agg__frame_name(a, sb->ids[0], NULL);
	}
	fputs("\"name\":\"", out);
	json__chars(out, comm, strlen(comm), 0);
	if (!labelled)
		fputs("\",", out);
	else if (per_thread)
		fprintf(out, " (pid %" PRIu32 ", tid %" PRIu32 ")\",", e->pid, e->tid);
	else
		fprintf(out, " (pid %" PRIu32 ")\",", e->pid);
	return 0;
}

/* One sampled profile: entries e[0 .. n-1].
 *
 * The unit is "none" and a weight is a number of samples: the weights are
 * then exactly the counts the folded and text outputs print, and mean the
 * same whether the sampling frequency is known or not.  "nanoseconds" (count
 * * 1e9 / Hz) would be an estimate of CPU time, not a measure, and not an
 * integer at most frequencies (499 Hz).  0 or -ENOMEM. */
static int ss__write_profile(const struct agg *a, const struct ss_ent *e, size_t n,
			     const uint32_t *map, int per_thread, int labelled,
			     struct agg_stack *sb, FILE *out)
{
	uint64_t sum = 0, count;
	size_t i, j;

	for (i = 0; i < n; i++)
		sum += e[i].count;
	fputs("{\"type\":\"sampled\",", out);
	if (ss__write_name(a, e, per_thread, labelled, sb, out))
		return -ENOMEM;
	fprintf(out, "\"unit\":\"none\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n\"samples\":[",
		sum);
	for (i = 0; i < n; i++) {
		if (agg__stack(a, e[i].stack, sb, &count))
			return -ENOMEM;
		fputs(i ? ",\n[" : "\n[", out);
		for (j = 0; j < sb->n; j++)
			fprintf(out, j ? ",%" PRIu32 : "%" PRIu32, map[sb->ids[j]]);
		fputc(']', out);
	}
	fputs("],\n\"weights\":[", out);
	for (i = 0; i < n; i++)
		fprintf(out, i ? ",%" PRIu64 : "%" PRIu64, e[i].count);
	fputs("]}", out);
	return 0;
}

/* Write the speedscope file. */
int speedscope__write(const struct agg *a, const struct output_opts *o, FILE *out)
{
	const char *file = agg__source_file(a), *base;
	int per_thread = o && o->per_thread, labelled, err;
	struct agg_stack sb = { NULL, 0, 0 };
	struct ss_ent *e = NULL;
	uint32_t *map = NULL;
	size_t n = 0, i, start;

	err = ss__entries(a, per_thread, &e, &n, &labelled);
	if (!err)
		err = ss__frames(a, e, n, &sb, &map);
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
	for (start = 0; start < n && !err; start = i) {
		for (i = start + 1; i < n && e[i].rank == e[start].rank && e[i].tid == e[start].tid;
		     i++)
			;
		fputs(start ? ",\n" : "\n", out);
		err = ss__write_profile(a, e + start, i - start, map, per_thread, labelled, &sb,
					out);
	}
	if (err)
		goto out;
	fputs("]}\n", out);
	if (fflush(out) || ferror(out))
		err = -EIO;
out:
	agg_stack__exit(&sb);
	free(map);
	free(e);
	return err;
}
