/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report_mem.c -- harvested memory loaded as report's samples need it (see
 * report_mem.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/report_mem.h"

#define RM_AHEAD_NS	1000000000ull	/* read this much past the need at once */

/* A pid and the offset of its last sample. */
struct rm_last {
	uint64_t off;
	uint32_t pid;
};

struct report_mem {
	struct snapfile_reader *r;
	struct memtable *mt;
	const struct report_mem_plan *pl;
	uint64_t slack;
	int has_pid;
	uint32_t pid;
	int done;			/* no MEMORY record left to read */
	int frozen;			/* a loading plan, or a sample past the plan's end:
					 * drop nothing */
	int have_mem, have_s;
	uint64_t mem_max, s_max;	/* latest first_ns read, latest sample time */
	struct rm_last *last;		/* by offset */
	size_t nlast, next;		/* next: first pid still sampled */
	struct intmap gone;		/* pids whose last sample is behind */
};

/* a + b, saturating. */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Fold a time seen in file order into the latest so far; its lag behind
 * that, or 0. */
static uint64_t latest__note(uint64_t t, int *have, uint64_t *max)
{
	if (*have && t < *max)
		return *max - t;
	*max = t;
	*have = 1;
	return 0;
}

/* The same, keeping the largest lag in *dis. */
static void disorder__note(uint64_t t, int *have, uint64_t *max, uint64_t *dis)
{
	uint64_t lag = latest__note(t, have, max);

	if (lag > *dis)
		*dis = lag;
}

/* A MEMORY record as a memory table entry. */
static struct memtable_entry mem__entry(const struct snapfile_memory *m)
{
	return (struct memtable_entry){
		.pid = m->pid, .len = m->len, .addr = m->addr, .data = m->data,
		.first_ns = m->first_ns, .last_ns = m->last_ns, .gen = m->gen,
	};
}

/* Add a MEMORY record to a table: memtable__add's result. */
static long mem__add(struct memtable *mt, const struct snapfile_memory *m)
{
	struct memtable_entry e = mem__entry(m);

	return memtable__add(mt, &e);
}

void report_mem_plan__init(struct report_mem_plan *pl, struct memtable *load_into)
{
	memset(pl, 0, sizeof(*pl));
	intmap__init(&pl->last);
	pl->load = load_into;
}

void report_mem_plan__exit(struct report_mem_plan *pl)
{
	intmap__exit(&pl->last);
}

/* Note one record of the first pass. */
int report_mem_plan__record(struct report_mem_plan *pl, const struct snapfile_rec *rec)
{
	struct memtable_entry e;

	if (rec->kind == SNAPFILE_REC_MEMORY) {
		e = mem__entry(&rec->mem);
		if (!memtable__valid(&e))
			return -EINVAL;
	}
	if (rec->offset > pl->end)
		pl->end = rec->offset;
	if (rec->kind == SNAPFILE_REC_SAMPLE_HEAD) {
		disorder__note(rec->head.time_ns, &pl->have_s, &pl->s_max, &pl->s_disorder);
		if (intmap__put(&pl->last, rec->head.pid, rec->offset))
			pl->err = -ENOMEM;
	} else if (rec->kind == SNAPFILE_REC_MEMORY) {
		pl->records++;
		disorder__note(rec->mem.first_ns, &pl->have_mem, &pl->mem_max, &pl->mem_disorder);
		if (pl->load && memtable__add(pl->load, &e) == -ENOMEM)
			pl->err = -ENOMEM;
	}
	return 0;
}

/* qsort comparator: by offset. */
static int last__cmp(const void *a, const void *b)
{
	const struct rm_last *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Open a loader. */
struct report_mem *report_mem__open(const char *path, struct memtable *mt, uint64_t slack_ns,
				    const struct report_mem_plan *pl, const uint32_t *pid,
				    int *err)
{
	struct report_mem *rm = calloc(1, sizeof(*rm));
	size_t it = 0;
	uint64_t k, v;

	if (!rm) {
		*err = -ENOMEM;
		return NULL;
	}
	rm->mt = mt;
	rm->pl = pl;
	rm->slack = slack_ns;
	rm->has_pid = pid != NULL;
	rm->pid = pid ? *pid : 0;
	rm->frozen = pl->load != NULL;
	rm->done = !pl->records || pl->load;
	rm->last = calloc(intmap__count(&pl->last) + 1, sizeof(*rm->last));
	if (!rm->last) {
		*err = -ENOMEM;
		goto fail;
	}
	while (intmap__next(&pl->last, &it, &k, &v))
		rm->last[rm->nlast++] = (struct rm_last){ v, (uint32_t)k };
	qsort(rm->last, rm->nlast, sizeof(*rm->last), last__cmp);
	if (!rm->done) {
		rm->r = snapfile_reader__open(path, err);
		if (!rm->r)
			goto fail;
		snapfile_reader__skip_kinds(rm->r, ~(1u << SNAPFILE_REC_MEMORY));
	}
	return rm;
fail:
	report_mem__close(rm);
	return NULL;
}

void report_mem__close(struct report_mem *rm)
{
	if (!rm)
		return;
	snapfile_reader__close(rm->r);
	intmap__exit(&rm->gone);
	free(rm->last);
	free(rm);
}

/* Read MEMORY records until one is first seen after until (or none is
 * left).  0 or -ENOMEM. */
static int mem__load(struct report_mem *rm, uint64_t until)
{
	struct snapfile_rec rec;
	int ret;

	while (!rm->done) {
		ret = snapfile_reader__next(rm->r, &rec);
		if (ret == 0 || (ret > 0 && rec.offset > rm->pl->end)) {
			rm->done = 1;	/* past the end the first pass saw */
			break;
		}
		if (ret < 0 || rec.kind != SNAPFILE_REC_MEMORY)
			continue;	/* the first pass told about it */
		latest__note(rec.mem.first_ns, &rm->have_mem, &rm->mem_max);
		if ((!rm->has_pid || rec.mem.pid == rm->pid) && !intmap__find(&rm->gone, rec.mem.pid) &&
		    mem__add(rm->mt, &rec.mem) == -ENOMEM)
			return -ENOMEM;
		if (rm->mem_max > until)
			break;
	}
	return 0;
}

/* Load and drop before a sample (see report_mem.h). */
int report_mem__before(struct report_mem *rm, uint64_t time_ns, uint64_t offset)
{
	const struct report_mem_plan *pl = rm->pl;
	uint64_t need;
	long r;

	if (offset > pl->end)
		rm->frozen = 1;
	latest__note(time_ns, &rm->have_s, &rm->s_max);
	/* Pids whose last sample came before this one. */
	for (; rm->next < rm->nlast && rm->last[rm->next].off < offset && !rm->frozen; rm->next++) {
		if (intmap__put(&rm->gone, rm->last[rm->next].pid, 1))
			return -ENOMEM;
		memtable__drop_pid(rm->mt, rm->last[rm->next].pid);
	}
	/* Every record first seen up to s_max + slack is in once one first
	 * seen after s_max + slack + disorder was read. */
	need = add_sat(add_sat(rm->s_max, rm->slack), pl->mem_disorder);
	if (rm->done || (rm->have_mem && rm->mem_max > need))
		return 0;
	if (!rm->frozen && rm->s_max >= pl->s_disorder) {
		r = memtable__expire(rm->mt, rm->s_max - pl->s_disorder);
		if (r < 0)
			return (int)r;
	}
	return mem__load(rm, add_sat(need, RM_AHEAD_NS));
}
