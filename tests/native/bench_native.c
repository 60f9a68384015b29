/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_native.c -- the native half of the pipeline (unwind/pipeline.h)
 * alone over every sample of a capture file: how fast and how well.
 *
 *   bench_native FILE [-v N] [--incomplete] [--no-lj]
 *
 * Every sample goes through ljs_pipe__sample with LJS_PIPE_NATIVE_ONLY and
 * LJS_PIPE_NO_KERNEL: DWARF CFI unwinding with the read-only file bytes as
 * extra memory, LuaJIT's rule for JIT code (unless --no-lj: the process is
 * then described without LuaJIT), and symbolization of every frame.  Prints
 * samples/second, native frames per sample, the unwinder's end reasons and
 * address spaces, and the files that were missing or of another build.
 * -v N prints the first N stacks (with --incomplete: the first N that did
 * not reach the outermost frame).  Samples whose process has no
 * description, or no mappings, are counted apart.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/capture/snapfile.h"
#include "unwind/memsrc.h"
#include "unwind/pipeline.h"

#define BENCH_MAX_PROCS	4096

struct bench_proc {
	uint32_t pid;
	struct ljs_proc lp;
};

struct bench {
	struct ljs_pipe *pipe;
	struct ljs_pipe_out out;
	struct bench_proc procs[BENCH_MAX_PROCS];
	size_t nprocs;
	int verbose, no_lj, show_bad;
	uint64_t samples, frames, no_proc;
	double t;
};

/* Seconds between two times. */
static double bench__dt(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* The process slot of pid (new slots are zeroed), or NULL when full. */
static struct bench_proc *bench__proc(struct bench *b, uint32_t pid, int create)
{
	size_t i;

	for (i = 0; i < b->nprocs; i++)
		if (b->procs[i].pid == pid)
			return &b->procs[i];
	if (!create || b->nprocs == BENCH_MAX_PROCS)
		return NULL;
	memset(&b->procs[b->nprocs], 0, sizeof(b->procs[0]));
	b->procs[b->nprocs].pid = pid;
	return &b->procs[b->nprocs++];
}

/* A PROCESS record: (re)describe the process. */
static int bench__process(struct bench *b, const struct snapfile_process *p)
{
	struct bench_proc *bp;
	struct ljs_proc lp = { 0 };
	int err;

	if (p->exited_ns || !p->nmaps)
		return 0;	/* an exit note: keep what we know */
	bp = bench__proc(b, p->pid, 1);
	if (!bp)
		return -ENOSPC;
	err = ljs_pipe__proc(b->pipe, p->maps, p->nmaps, &lp);
	if (err)
		return err;
	lp.has_luajit = p->has_luajit && !b->no_lj;
	lp.layout = p->layout;
	lp.vm_lo = p->vm_lo;
	lp.vm_hi = p->vm_hi;
	ljs_proc__exit(&bp->lp);
	bp->lp = lp;
	return 0;
}

/* A SAMPLE record: through the pipeline, timed. */
static void bench__sample(struct bench *b, const struct ljs_sample *s)
{
	struct bench_proc *bp = bench__proc(b, s->pid, 0);
	uint64_t complete = ljs_pipe__stats(b->pipe)->native_complete;
	struct timespec t0, t1;
	struct memsrc sm;
	size_t i;

	b->samples++;
	if (!bp || !bp->lp.pm) {
		b->no_proc++;
		return;
	}
	memsrc__init_sample(&sm, s, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (ljs_pipe__sample(b->pipe, &bp->lp, s, &sm, "", &b->out) != 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	b->t += bench__dt(&t0, &t1);
	b->frames += b->out.stack.n - 1;	/* the root is no frame */
	if (b->verbose > 0 && (!b->show_bad || ljs_pipe__stats(b->pipe)->native_complete == complete)) {
		b->verbose--;
		printf("pid %u tid %u: %zu frames\n", s->pid, s->tid, b->out.stack.n - 1);
		for (i = b->out.stack.n; i > 1; i--)
			printf("  %s\n", ljs_stack__name(&b->out.stack, i - 1));
	}
}

/* ljs_pipe__missing callback. */
static void bench__missing(void *arg, const char *line)
{
	(void)arg;
	printf("  %s\n", line);
}

/* Read the file and print the numbers. */
int main(int argc, char **argv)
{
	struct bench *b = calloc(1, sizeof(*b));
	const struct native_unw_stats *us;
	const struct ljs_pipe_stats *ps;
	struct snapfile_reader *r = NULL;
	struct snapfile_rec rec;
	const char *path = NULL;
	uint64_t walked;
	int err, i, n, ret = 1;

	if (!b)
		return 1;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-v") == 0 && i + 1 < argc)
			b->verbose = atoi(argv[++i]);
		else if (strcmp(argv[i], "--no-lj") == 0)
			b->no_lj = 1;
		else if (strcmp(argv[i], "--incomplete") == 0)
			b->show_bad = 1;
		else
			path = argv[i];
	}
	if (!path) {
		fprintf(stderr, "usage: bench_native FILE [-v N] [--incomplete] [--no-lj]\n");
		ret = 2;
		goto out;
	}
	r = snapfile_reader__open(path, &err);
	if (!r) {
		fprintf(stderr, "%s: %s\n", path, snapfile__strerror(err));
		goto out;
	}
	b->pipe = ljs_pipe__new(LJS_PIPE_NATIVE_ONLY | LJS_PIPE_NO_KERNEL, NULL);
	if (!b->pipe)
		goto out;
	while ((n = snapfile_reader__next(r, &rec)) != 0) {
		if (n < 0)
			continue;
		if (rec.kind == SNAPFILE_REC_OBJECT)
			ljs_pipe__image(b->pipe, rec.object.path, rec.object.build_id,
					rec.object.build_id_len, rec.object.data, rec.object.len);
		else if (rec.kind == SNAPFILE_REC_PROCESS)
			bench__process(b, &rec.proc);
		else if (rec.kind == SNAPFILE_REC_SAMPLE)
			bench__sample(b, &rec.sample);
	}
	us = ljs_pipe__native_stats(b->pipe);
	ps = ljs_pipe__stats(b->pipe);
	walked = b->samples - b->no_proc;
	printf("%llu samples (%llu without a described process), %.1f native frames/sample, "
	       "%llu unwound to the outermost frame\n", (unsigned long long)b->samples,
	       (unsigned long long)b->no_proc, walked ? (double)b->frames / (double)walked : 0.0,
	       (unsigned long long)ps->native_complete);
	printf("unwind + symbolize: %.3f s, %.0f samples/s, %.2f us/frame\n", b->t,
	       b->t > 0 ? (double)walked / b->t : 0.0,
	       b->t * 1e6 / (double)(b->frames ? b->frames : 1));
	printf("ends:");
	for (i = 0; i < NATIVE_END__MAX; i++)
		if (us->end[i])
			printf(" %s %llu", native_end__name(i), (unsigned long long)us->end[i]);
	printf("\naddress spaces: %llu created, %llu evicted; modules: %llu reported, %llu failed\n",
	       (unsigned long long)us->spaces_created, (unsigned long long)us->spaces_evicted,
	       (unsigned long long)us->modules_reported, (unsigned long long)us->modules_failed);
	printf("files needed for native frames that were missing or of another build:\n");
	ljs_pipe__missing(b->pipe, bench__missing, NULL);
	ret = 0;
out:
	snapfile_reader__close(r);
	for (size_t k = 0; k < b->nprocs; k++)
		ljs_proc__exit(&b->procs[k].lp);
	ljs_stack__exit(&b->out.stack);
	ljs_pipe__delete(b->pipe);
	free(b);
	return ret;
}
