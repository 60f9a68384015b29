/*
 * bench_native.c -- unwind and symbolize every sample of a capture file
 * with the native libraries alone, and say how fast and how well.
 *
 *   bench_native FILE [-v N] [--incomplete] [--no-sym] [--no-lj]
 *
 * This is also the reference for wiring the libraries into `ljsnap report`:
 * one objcache + symbolizer + native_unw for the whole file, one procmap per
 * PROCESS record, the read-only file bytes as the unwinder's extra memory,
 * and LuaJIT's rule for JIT code built from the sample's own L window and
 * trace header (cframe, spadjust, mcode range) and the process's VM range.
 * Prints samples/second for unwinding and for symbolization separately, the
 * end reasons, frames per sample, and the objects that were missing or of
 * another build (with how many frames fell in them).  -v N prints the first
 * N stacks (with --incomplete: the first N that did not end complete).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/capture/snapfile.h"
#include "symtab/objfile.h"
#include "symtab/symbolize.h"
#include "unwind/native.h"
#include "unwind/proc.h"

#define BENCH_MAX_PROCS	4096

struct bench_proc {
	uint32_t pid;
	struct ljs_proc lp;
	struct procmap *pm;	/* lp.pm */
	int has_lj;
	struct lj_layout lay;
	uint64_t vm_lo, vm_hi;
};

struct bench {
	struct objcache *oc;
	struct symbolizer *sym;
	struct native_unw *u;
	struct bench_proc procs[BENCH_MAX_PROCS];
	size_t nprocs;
	int verbose, no_sym, no_lj, show_bad;
	uint64_t samples, frames, no_proc, hook_frames;
	double t_unwind, t_sym;
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

/* A PROCESS record: (re)build the process's mappings. */
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
	err = ljs_proc__maps(&lp, b->oc, p->maps, p->nmaps);
	if (err)
		return err;
	ljs_proc__exit(&bp->lp);
	bp->lp = lp;
	bp->pm = lp.pm;
	bp->has_lj = p->has_luajit;
	bp->lay = p->layout;
	bp->vm_lo = p->vm_lo;
	bp->vm_hi = p->vm_hi;
	return 0;
}

/* Print one symbolized stack. */
static void bench__print(struct bench *b, const struct bench_proc *bp, const struct ljs_sample *s,
			 const struct native_stack *st)
{
	size_t i;

	printf("pid %u tid %u: %zu frames, %s\n", s->pid, s->tid, st->nframes,
	       native_end__name(st->end));
	for (i = 0; i < st->nframes; i++) {
		const struct native_frame *f = &st->frames[i];
		const struct sym_info *si = NULL;
		char buf[512] = "?";

		if (symbolizer__pc(b->sym, bp->pm, f->pc, !f->activation, &si) == 0)
			sym_info__format(si, buf, sizeof(buf));
		printf("  %#014llx %-4s %s", (unsigned long long)f->pc, native_how__name(f->how), buf);
		if (si && si->nlines)
			printf(" (%s:%d)", si->lines[0].file ? si->lines[0].file : "?",
			       si->lines[0].line);
		printf("\n");
	}
}

/* A SAMPLE record: unwind (timed), then symbolize every frame (timed). */
static void bench__sample(struct bench *b, const struct ljs_sample *s)
{
	struct bench_proc *bp = bench__proc(b, s->pid, 0);
	struct native_lj_rule rule;
	struct native_opts o = { 0 };
	struct native_stack st;
	struct memsrc files;
	struct timespec t0, t1, t2;
	const struct sym_info *si;
	size_t i;

	b->samples++;
	if (!bp || !bp->pm) {
		b->no_proc++;
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memsrc__init_procmap(&files, bp->pm, NULL);
	o.mem = &files;
	if (!b->no_lj && bp->has_lj &&
	    native_lj_rule__from_sample(&rule, &bp->lay, s, bp->vm_lo, bp->vm_hi)) {
		o.step_unknown = native__step_lj;
		o.step_arg = &rule;
		o.hook_lo = rule.vm_lo;
		o.hook_hi = rule.vm_hi;
	}
	if (native__unwind_sample(b->u, &bp->lp.nmaps, s, &o, &st) != 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	b->frames += st.nframes;
	b->hook_frames += st.nhook;
	for (i = 0; !b->no_sym && i < st.nframes; i++)
		symbolizer__pc(b->sym, bp->pm, st.frames[i].pc, !st.frames[i].activation, &si);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	b->t_unwind += bench__dt(&t0, &t1);
	b->t_sym += bench__dt(&t1, &t2);
	if (b->verbose > 0 && (!b->show_bad || !st.complete)) {
		b->verbose--;
		bench__print(b, bp, s, &st);
	}
}

/* Print one object that was missing or of another build. */
static int bench__report_obj(struct objfile *obj, void *arg)
{
	char hex[2 * BUILDID_MAX + 1];

	(void)arg;
	if (obj->hits && (obj->status != OBJFILE_OK || !obj->verified))
		printf("  %-18s %s build id %s: %llu frame lookups%s\n",
		       objfile_status__name(obj->status), obj->path,
		       obj->build_id_len ? buildid__hex(obj->build_id, obj->build_id_len, hex,
							sizeof(hex)) : "(none recorded)",
		       (unsigned long long)obj->hits, obj->debug ? ", debug file found" : "");
	return 0;
}

/* Read the file and print the numbers. */
int main(int argc, char **argv)
{
	struct bench *b = calloc(1, sizeof(*b));
	struct snapfile_reader *r;
	struct snapfile_rec rec;
	const struct native_unw_stats *us;
	const char *path = NULL;
	int err, i, n;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-v") == 0 && i + 1 < argc)
			b->verbose = atoi(argv[++i]);
		else if (strcmp(argv[i], "--no-sym") == 0)
			b->no_sym = 1;
		else if (strcmp(argv[i], "--no-lj") == 0)
			b->no_lj = 1;
		else if (strcmp(argv[i], "--incomplete") == 0)
			b->show_bad = 1;
		else
			path = argv[i];
	}
	if (!path) {
		fprintf(stderr, "usage: bench_native FILE [-v N] [--incomplete] [--no-sym] [--no-lj]\n");
		return 2;
	}
	r = snapfile_reader__open(path, &err);
	if (!r) {
		fprintf(stderr, "%s: %s\n", path, snapfile__strerror(err));
		return 1;
	}
	b->oc = objcache__new(NULL);
	b->sym = symbolizer__new(NULL);
	b->u = native_unw__new(NULL);
	while ((n = snapfile_reader__next(r, &rec)) != 0) {
		if (n < 0)
			continue;
		if (rec.kind == SNAPFILE_REC_PROCESS)
			bench__process(b, &rec.proc);
		else if (rec.kind == SNAPFILE_REC_SAMPLE)
			bench__sample(b, &rec.sample);
	}
	us = native_unw__stats(b->u);
	printf("%llu samples (%llu without a process record), %.1f native frames/sample, "
	       "%llu by the LuaJIT rule\n", (unsigned long long)b->samples,
	       (unsigned long long)b->no_proc,
	       b->samples ? (double)b->frames / (double)(b->samples - b->no_proc) : 0.0,
	       (unsigned long long)b->hook_frames);
	printf("unwind: %.3f s, %.0f samples/s, %.2f us/frame; symbolize: %.3f s, %.0f samples/s\n",
	       b->t_unwind, (double)(b->samples - b->no_proc) / b->t_unwind,
	       b->t_unwind * 1e6 / (double)(b->frames ? b->frames : 1), b->t_sym,
	       b->no_sym ? 0.0 : (double)(b->samples - b->no_proc) / b->t_sym);
	printf("ends:");
	for (i = 0; i < NATIVE_END__MAX; i++)
		if (us->end[i])
			printf(" %s %llu", native_end__name(i), (unsigned long long)us->end[i]);
	printf("\naddress spaces: %llu created, %llu evicted; modules: %llu reported, %llu failed\n",
	       (unsigned long long)us->spaces_created, (unsigned long long)us->spaces_evicted,
	       (unsigned long long)us->modules_reported, (unsigned long long)us->modules_failed);
	printf("objects with frames that were not found, of another build, or unverified:\n");
	objcache__foreach(b->oc, bench__report_obj, NULL);
	snapfile_reader__close(r);
	for (size_t k = 0; k < b->nprocs; k++)
		ljs_proc__exit(&b->procs[k].lp);
	native_unw__delete(b->u);
	symbolizer__delete(b->sym);
	objcache__delete(b->oc);
	free(b);
	return 0;
}
