/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report_read.c -- sample records read ahead by a thread (see report_read.h).
 *
 * A ring of RR_SLOTS slots between the thread (it fills the slot at
 * `head`) and the caller (it takes the slot at `tail`); a slot holds one
 * outcome of snapfile_reader__next: a sample with its section bytes copied
 * (the reader's own buffer is reused by its next call), an error message,
 * or the end.  The slot the caller holds is given back at its next call:
 * the thread fills at most RR_SLOTS - 1 slots ahead of the caller.
 *
 * A side that finds the ring full (the thread) or empty (the caller) sleeps
 * until the other has moved RR_WAKE slots, or the thread has reached the
 * end: woken at every slot, the two took turns at each sample, and each turn
 * cost two futex calls and two context switches, about as much as the
 * sample's own work.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/report_read.h"
#include "symtab/vec.h"

#define RR_SLOTS	128
#define RR_WAKE		(RR_SLOTS / 2)	/* slots moved before a sleeper is woken */

enum rr_what { RR_SAMPLE, RR_ERROR, RR_END, RR_NOMEM };

struct rr_slot {
	enum rr_what what;
	struct ljs_sample s;
	uint64_t offset;
	uint8_t *data;			/* the sections' bytes */
	size_t cap;
	char *msg;			/* RR_ERROR */
};

struct report_reader {
	struct snapfile_reader *r;
	struct snapfile_header h;
	int threaded;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t filled, freed;
	struct rr_slot slot[RR_SLOTS];
	uint64_t head, tail;		/* slots filled / taken so far; the caller
					 * holds slot tail - 1 */
	int stop;			/* close: the thread ends at its next wait */
	int thread_waits;		/* the thread sleeps on freed (ring full) */
	int caller_waits;		/* the caller sleeps on filled (ring empty) */
	struct snapfile_rec rec;	/* the last record read without a thread */
};

/* Fill sl from one outcome of the reader: ret as snapfile_reader__next. */
static void slot__fill(struct report_reader *rr, struct rr_slot *sl, int ret,
		       const struct snapfile_rec *rec)
{
	const struct ljs_sample *s = &rec->sample;
	size_t i, n, need = 0, off = 0;

	free(sl->msg);
	sl->msg = NULL;
	if (ret == 0) {
		sl->what = RR_END;
		return;
	}
	if (ret < 0) {
		sl->msg = strdup(snapfile_reader__error(rr->r));
		sl->what = sl->msg ? RR_ERROR : RR_NOMEM;
		return;
	}
	n = s->nsec < LJS_SAMPLE_MAX_SECS ? s->nsec : LJS_SAMPLE_MAX_SECS;
	for (i = 0; i < n; i++)
		need += s->sec[i].data ? s->sec[i].len : 0;
	if (VEC_GROW(sl->data, &sl->cap, need ? need : 1) != 0) {
		sl->what = RR_NOMEM;
		return;
	}
	sl->s = *s;
	for (i = 0; i < n; i++) {
		if (!s->sec[i].data)
			continue;
		memcpy(sl->data + off, s->sec[i].data, s->sec[i].len);
		sl->s.sec[i].data = sl->data + off;
		off += s->sec[i].len;
	}
	sl->offset = rec->offset;
	sl->what = RR_SAMPLE;
}

/* The next outcome worth a slot: a sample, an error or the end. */
static int rr__read(struct report_reader *rr, struct snapfile_rec *rec)
{
	int ret;

	while ((ret = snapfile_reader__next(rr->r, rec)) > 0 && rec->kind != SNAPFILE_REC_SAMPLE)
		;
	return ret;
}

/* The reading thread: fill slots until the end, an allocation failure or
 * close. */
static void *rr__main(void *arg)
{
	struct report_reader *rr = arg;
	struct snapfile_rec rec;
	struct rr_slot *sl;
	int ret;

	for (;;) {
		ret = rr__read(rr, &rec);
		pthread_mutex_lock(&rr->mu);
		while (!rr->stop && rr->head - rr->tail >= RR_SLOTS - 1) {
			rr->thread_waits = 1;	/* one slot stays the caller's */
			pthread_cond_wait(&rr->freed, &rr->mu);
		}
		rr->thread_waits = 0;
		if (rr->stop) {
			pthread_mutex_unlock(&rr->mu);
			return NULL;
		}
		sl = &rr->slot[rr->head % RR_SLOTS];
		pthread_mutex_unlock(&rr->mu);
		slot__fill(rr, sl, ret, &rec);
		pthread_mutex_lock(&rr->mu);
		rr->head++;
		if (rr->caller_waits && (rr->head - rr->tail >= RR_WAKE || sl->what == RR_END ||
					 sl->what == RR_NOMEM))
			pthread_cond_signal(&rr->filled);
		pthread_mutex_unlock(&rr->mu);
		if (sl->what == RR_END || sl->what == RR_NOMEM)
			return NULL;
	}
}

/* Open (see report_read.h). */
struct report_reader *report_reader__open(const char *path, unsigned threads, int *err)
{
	struct report_reader *rr = calloc(1, sizeof(*rr));

	if (!rr) {
		*err = -ENOMEM;
		return NULL;
	}
	rr->r = snapfile_reader__open(path, err);
	if (!rr->r) {
		free(rr);
		return NULL;
	}
	rr->h = *snapfile_reader__header(rr->r);
	/* Everything but samples was read (and checked) by the first pass. */
	snapfile_reader__skip_kinds(rr->r, ~(1u << SNAPFILE_REC_SAMPLE));
	pthread_mutex_init(&rr->mu, NULL);
	pthread_cond_init(&rr->filled, NULL);
	pthread_cond_init(&rr->freed, NULL);
	/* Without a thread (or when it cannot start) the caller reads. */
	rr->threaded = threads > 1 && pthread_create(&rr->th, NULL, rr__main, rr) == 0;
	return rr;
}

/* Next record (see report_read.h). */
int report_reader__next(struct report_reader *rr, const struct ljs_sample **s, uint64_t *offset,
			const char **msg)
{
	struct rr_slot *sl;
	int ret;

	if (!rr->threaded) {	/* the reader's own record, no copy */
		ret = rr__read(rr, &rr->rec);
		if (ret > 0) {
			*s = &rr->rec.sample;
			*offset = rr->rec.offset;
		} else if (ret < 0) {
			*msg = snapfile_reader__error(rr->r);
		}
		return ret < 0 ? -1 : ret > 0;
	}
	pthread_mutex_lock(&rr->mu);
	while (rr->head == rr->tail) {
		rr->caller_waits = 1;
		pthread_cond_wait(&rr->filled, &rr->mu);
	}
	rr->caller_waits = 0;
	sl = &rr->slot[rr->tail % RR_SLOTS];
	rr->tail++;	/* and the slot taken last time is free again */
	if (rr->thread_waits && rr->head - rr->tail < RR_SLOTS - RR_WAKE)
		pthread_cond_signal(&rr->freed);
	pthread_mutex_unlock(&rr->mu);
	switch (sl->what) {
	case RR_SAMPLE:
		*s = &sl->s;
		*offset = sl->offset;
		return 1;
	case RR_ERROR:
		*msg = sl->msg;
		return -1;
	case RR_NOMEM:
		return -ENOMEM;
	default:
		return 0;
	}
}

/* The header. */
const struct snapfile_header *report_reader__header(const struct report_reader *rr)
{
	return &rr->h;
}

/* Stack references left unresolved (see report_read.h). */
uint64_t report_reader__refs_lost(const struct report_reader *rr)
{
	return snapfile_reader__stats(rr->r)->refs_lost;
}

/* Close (see report_read.h). */
void report_reader__close(struct report_reader *rr)
{
	size_t i;

	if (!rr)
		return;
	if (rr->threaded) {
		pthread_mutex_lock(&rr->mu);
		rr->stop = 1;
		pthread_cond_signal(&rr->freed);
		pthread_mutex_unlock(&rr->mu);
		pthread_join(rr->th, NULL);
	}
	pthread_cond_destroy(&rr->freed);
	pthread_cond_destroy(&rr->filled);
	pthread_mutex_destroy(&rr->mu);
	for (i = 0; i < RR_SLOTS; i++) {
		free(rr->slot[i].data);
		free(rr->slot[i].msg);
	}
	snapfile_reader__close(rr->r);
	free(rr);
}
