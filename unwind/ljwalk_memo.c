/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljwalk_memo.c -- walks remembered across samples (ljw_opts.memo).
 *
 * A walk is a function of what it reads: the registers and sample fields
 * listed in its key (memo__key), and the bytes of every memory read, each
 * logged with its answer (the bytes, or the failure).  A later sample with
 * the same key is not walked when every logged read gives the same answer
 * now, read through this sample's own memory source (its windows, then the
 * capture's memory at its time): the walk would then take the same steps
 * and give the same frames, so those of the remembered walk are returned.
 * In a program run by the interpreter, most samples repeat an earlier one's
 * registers (the same bytecode at the same depth): 99.4% of the walks of a
 * 4 s capture of bench/report.sh's -joff workload had the key of an
 * earlier walk.  Of what the walker keeps across walks, the variable lists
 * are checked against the bytes they were decoded from (ljwalk_name.c), the
 * definition names are in the key (below), and the rest is the trace
 * code's.
 *
 * Only walks that do not read what the key does not cover are remembered:
 * no trace (jit_base 0, not in a trace, trace exit or the compiler, no
 * return address into trace code), since the trace code reads all
 * registers and keeps answers across walks (ljwalk_tcall.c).  The names of
 * earlier walks (ljwalk_def.c known__apply) are in the key as a count of
 * their changes.  Walks that ran out of memory or out of log are not
 * remembered.  The recorder does not use this: its reads decide what the
 * capture keeps (formats/capture/harvest.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/vec.h"
#include "unwind/ljwalk_int.h"

#define MEMO_SLOTS	512		/* walks remembered, a power of 2 */
#define MEMO_KEY_MAX	(24 + 5 * LJS_SAMPLE_MAX_SECS)
#define MEMO_READS_MAX	2048		/* reads a remembered walk may log */
#define MEMO_BYTES_MAX	(64u << 10)	/* and bytes */
#define MEMO_FRAMES_MAX	256		/* frames of a remembered walk */
#define MEMO_STRS	8		/* string fields of a frame */
#define MEMO_SEEN	4096		/* reads a walk's log tells apart, a power of 2 */
/* Where walks seldom repeat (JIT traces, which are not remembered, or
 * memory that changes), looking up and logging cost more than they save:
 * after a window of MEMO_WINDOW walks with fewer than one hit in
 * MEMO_SPARSE_RATE, only one walk in MEMO_SPARSE_EVERY is looked up and
 * logged in the next window. */
#define MEMO_WINDOW		1024
#define MEMO_SPARSE_RATE	64
#define MEMO_SPARSE_EVERY	16

struct memo_read {
	uint64_t addr;
	uint32_t len;
	int32_t err;		/* the read's answer: 0 (bytes at off) or its error */
	size_t off;
	int first;		/* answered by the chain's first source */
};

/* The reads of one walk and the bytes they gave. */
struct memo_log {
	struct memo_read *reads;
	size_t nreads, capreads;
	uint8_t *bytes;
	size_t nbytes, capbytes;
};

struct memo_ent {
	int used;
	struct lj_layout lay;	/* the layout the walk decoded with (the key has
				 * its address, which an exec'd process keeps) */
	size_t nkey;
	uint64_t key[MEMO_KEY_MAX];
	struct memo_log log;
	struct ljw_stack out;
	struct ljw_frame *frames;
	size_t nframes, capframes;
	char *strs;		/* the frames' strings, copied */
	size_t nstrs, capstrs;
};

struct ljw_memo {
	struct memo_ent ent[MEMO_SLOTS];
	/* this walk */
	struct memsrc src;	/* reads through `inner`, logged */
	const struct memsrc *inner;
	size_t nkey;
	uint64_t key[MEMO_KEY_MAX];
	const struct lj_layout *lay;
	struct memo_log log;
	int full;		/* the log overflowed (or could not grow) */
	/* The reads logged in this walk (walk == gen): a read of the same bytes
	 * again gets the same answer from the same source, so it is logged
	 * once.  Another range, even inside a logged one, is logged: the
	 * chain may answer it from another source. */
	struct memo_seen {
		uint64_t addr;
		uint32_t len, walk;
	} seen[MEMO_SEEN];
	uint32_t gen;
	uint8_t *tmp;		/* a replayed read's bytes */
	size_t captmp;
	uint64_t hits, misses;
	uint64_t walks, window_hits;	/* walks asked about; hits at the window's start */
	int sparse;		/* this window looks up one walk in MEMO_SPARSE_EVERY */
	int skip;		/* this walk is neither looked up nor logged */
};

/* The key of a walk: everything but memory that it reads. */
static size_t memo__key(const struct ljw *w, const struct lj_layout *lay,
			const struct ljs_sample *s, const struct memsrc *ms,
			const struct ljw_opts *o, uint64_t *k)
{
	const struct ljs_regs *r = &s->regs, *v = o->vm_regs;
	size_t n = 0, i, ns = s->nsec < LJS_SAMPLE_MAX_SECS ? s->nsec : LJS_SAMPLE_MAX_SECS;

	k[n++] = (uintptr_t)lay;
	k[n++] = (uint64_t)s->pid << 32 | s->tid;
	k[n++] = s->flags;
	k[n++] = s->g;
	k[n++] = r->ip;
	k[n++] = r->dx;
	k[n++] = r->bx;
	k[n++] = r->bp;
	k[n++] = r->r14;
	k[n++] = v != NULL;
	k[n++] = v ? v->bp : 0;
	k[n++] = v ? v->bx : 0;
	k[n++] = o->vm_lo;
	k[n++] = o->vm_hi;
	k[n++] = o->max_frames;
	k[n++] = o->trace_ip;
	k[n++] = o->trace_regs != NULL;
	k[n++] = o->trace_scan;
	k[n++] = o->stack_lo;
	k[n++] = o->stack_hi;
	k[n++] = (uintptr_t)o->ms_mem;
	k[n++] = w->known_gen;
	k[n++] = (uintptr_t)ms->read;	/* the chain's first source, and a rest */
	k[n++] = ms->next != NULL;
	k[n++] = ns;
	for (i = 0; i < ns; i++) {
		const struct ljs_section *x = &s->sec[i];

		k[n++] = (uint64_t)x->kind << 48 | (uint64_t)x->status << 32 | x->aux;
		k[n++] = x->addr;
		k[n++] = (uint64_t)x->len << 32 | x->want;
		k[n++] = x->data != NULL;
	}
	return n;
}

static size_t memo__slot(const uint64_t *k, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= k[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (size_t)h & (MEMO_SLOTS - 1);
}

/*
 * A read through the chain ms, as memsrc__read, noting whether its first
 * source answered.  That source's answer (the sample's windows, memsrc.c)
 * depends on the windows' addresses and lengths, which the key holds: a
 * replay asks the source that answered the logged read, and only it.
 */
static int chain__read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len,
		       int *first)
{
	int err = -EFAULT;

	*first = 0;
	if (len == 0)
		return 0;
	if (!buf || addr + len < addr)
		return -EFAULT;
	if (ms->read && (err = ms->read(ms, addr, buf, len)) == 0) {
		*first = 1;
		return 0;
	}
	if (ms->next)
		return memsrc__read(ms->next, addr, buf, len);
	return err < 0 ? err : -EFAULT;
}

/* memsrc read callback: the inner chain's answer, logged. */
static int log__read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	struct ljw_memo *m = ms->ctx;
	struct memo_log *lg = &m->log;
	struct memo_seen *sn;
	struct memo_read *x;
	int first, err = chain__read(m->inner, addr, buf, len, &first);
	size_t h;

	if (m->full)
		return err;
	h = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 40 ^ len);
	for (;; h++) {		/* linear probing; the log's cap keeps it below full */
		sn = &m->seen[h & (MEMO_SEEN - 1)];
		if (sn->walk != m->gen)
			break;
		if (sn->addr == addr && sn->len == len)
			return err;
	}
	if (lg->nreads >= MEMO_READS_MAX || len > MEMO_BYTES_MAX ||
	    (err == 0 && lg->nbytes + len > MEMO_BYTES_MAX) ||
	    VEC_GROW(lg->reads, &lg->capreads, lg->nreads + 1) != 0 ||
	    (err == 0 && VEC_GROW(lg->bytes, &lg->capbytes, lg->nbytes + len) != 0)) {
		m->full = 1;
		return err;
	}
	sn->addr = addr;
	sn->len = (uint32_t)len;
	sn->walk = m->gen;
	x = &lg->reads[lg->nreads++];
	x->addr = addr;
	x->len = (uint32_t)len;
	x->err = err;
	x->off = lg->nbytes;
	x->first = first;
	if (err == 0) {
		memcpy(lg->bytes + lg->nbytes, buf, len);
		lg->nbytes += len;
	}
	return err;
}

/* Does every read of e give the same answer through ms now? */
static int memo__replay(struct ljw_memo *m, const struct memo_ent *e, const struct memsrc *ms)
{
	size_t i;
	int first;

	for (i = 0; i < e->log.nreads; i++) {
		const struct memo_read *x = &e->log.reads[i];
		int err;

		if (VEC_GROW(m->tmp, &m->captmp, x->len ? x->len : 1) != 0)
			return 0;
		if (x->len == 0)
			err = 0;
		else if (x->first)
			err = ms->read(ms, x->addr, m->tmp, x->len);
		else if (ms->next)
			err = memsrc__read(ms->next, x->addr, m->tmp, x->len);
		else
			err = chain__read(ms, x->addr, m->tmp, x->len, &first);
		if (err != x->err || (err == 0 && memcmp(m->tmp, e->log.bytes + x->off, x->len)))
			return 0;
	}
	return 1;
}

/* The frame's string fields, in one order. */
static const char **frame__str(struct ljw_frame *f, int i)
{
	switch (i) {
	case 0: return &f->name;
	case 1: return &f->what;
	case 2: return &f->defname;
	case 3: return &f->defwhat;
	case 4: return &f->ffname;
	case 5: return &f->chunkname;
	case 6: return &f->chunk;
	default: return &f->pseudo;
	}
}

/* See ljwalk_int.h. */
int ljw__memo_hit(struct ljw *w, const struct lj_layout *lay, const struct ljs_sample *s,
		  const struct memsrc *ms, const struct ljw_opts *o, struct ljw_stack *out)
{
	struct ljw_memo *m = w->memo;
	struct memo_ent *e;
	size_t i;
	int k;

	if (!m && !(m = w->memo = calloc(1, sizeof(*m))))
		return 0;
	if (++m->walks % MEMO_WINDOW == 0) {
		m->sparse = (m->hits - m->window_hits) * MEMO_SPARSE_RATE < MEMO_WINDOW;
		m->window_hits = m->hits;
	}
	m->skip = m->sparse && m->walks % MEMO_SPARSE_EVERY;
	if (m->skip)
		return 0;
	m->nkey = memo__key(w, lay, s, ms, o, m->key);
	m->lay = lay;
	e = &m->ent[memo__slot(m->key, m->nkey)];
	if (!e->used || e->nkey != m->nkey || memcmp(e->key, m->key, m->nkey * sizeof(m->key[0])) ||
	    memcmp(&e->lay, lay, sizeof(*lay)) || !memo__replay(m, e, ms) ||
	    VEC_GROW(w->frames, &w->capframes, e->nframes ? e->nframes : 1) != 0) {
		m->misses++;
		return 0;
	}
	memcpy(w->frames, e->frames, e->nframes * sizeof(*w->frames));
	w->nframes = e->nframes;
	for (i = 0; i < e->nframes; i++)	/* offsets into e->strs -> pointers */
		for (k = 0; k < MEMO_STRS; k++) {
			const char **p = frame__str(&w->frames[i], k);

			if (*p)
				*p = e->strs + ((uintptr_t)*p - 1);
		}
	*out = e->out;
	out->frames = w->frames;
	out->nframes = w->nframes;
	m->hits++;
	return 1;
}

/* See ljwalk_int.h. */
const struct memsrc *ljw__memo_begin(struct ljw *w, const struct memsrc *ms)
{
	struct ljw_memo *m = w->memo;

	if (!m || m->skip)
		return ms;
	m->src.read = log__read;
	m->src.ctx = m;
	m->src.next = NULL;
	m->inner = ms;
	m->log.nreads = m->log.nbytes = 0;
	m->full = 0;
	if (++m->gen == 0) {	/* wrapped: forget every stamp */
		memset(m->seen, 0, sizeof(m->seen));
		m->gen = 1;
	}
	return &m->src;
}

/* See ljwalk_int.h. */
void ljw__memo_stop(struct ljw *w)
{
	struct ljw_memo *m = w->memo;

	if (!m || !m->inner)
		return;
	m->full = 1;
	if (w->d.ms == &m->src)	/* the rest of the walk reads without the log */
		w->d.ms = m->inner;
}

/* Append s and its NUL to e->strs; its offset + 1 (0: NULL), or -1. */
static long ent__str(struct memo_ent *e, const char *s)
{
	size_t n, at;

	if (!s)
		return 0;
	n = strlen(s) + 1;
	at = e->nstrs;
	if (VEC_GROW(e->strs, &e->capstrs, at + n) != 0)
		return -1;
	memcpy(e->strs + at, s, n);
	e->nstrs += n;
	return (long)at + 1;
}

/* See ljwalk_int.h. */
void ljw__memo_end(struct ljw *w, int ok, const struct ljw_stack *out)
{
	struct ljw_memo *m = w->memo;
	struct memo_ent *e;
	size_t i;
	long at;
	int k;

	if (!m || m->inner == NULL)
		return;
	m->inner = NULL;
	if (!ok || m->full || out->nframes > MEMO_FRAMES_MAX || out->trace.chunkname ||
	    out->trace.chunk || !m->lay)
		return;
	e = &m->ent[memo__slot(m->key, m->nkey)];
	e->used = 0;
	if (VEC_GROW(e->log.reads, &e->log.capreads, m->log.nreads ? m->log.nreads : 1) != 0 ||
	    VEC_GROW(e->log.bytes, &e->log.capbytes, m->log.nbytes ? m->log.nbytes : 1) != 0 ||
	    VEC_GROW(e->frames, &e->capframes, out->nframes ? out->nframes : 1) != 0)
		return;
	e->nstrs = 0;
	memcpy(e->frames, out->frames, out->nframes * sizeof(*e->frames));
	for (i = 0; i < out->nframes; i++)	/* pointers -> offsets + 1 into e->strs */
		for (k = 0; k < MEMO_STRS; k++) {
			const char **p = frame__str(&e->frames[i], k);

			if ((at = ent__str(e, *p)) < 0)
				return;
			*p = (const char *)(uintptr_t)at;
		}
	memcpy(e->log.reads, m->log.reads, m->log.nreads * sizeof(*e->log.reads));
	memcpy(e->log.bytes, m->log.bytes, m->log.nbytes);
	e->log.nreads = m->log.nreads;
	e->log.nbytes = m->log.nbytes;
	e->nframes = out->nframes;
	e->out = *out;
	e->out.frames = NULL;
	e->nkey = m->nkey;
	memcpy(e->key, m->key, m->nkey * sizeof(m->key[0]));
	memcpy(&e->lay, m->lay, sizeof(e->lay));	/* padding too: compared with memcmp */
	e->used = 1;
}

/* See ljwalk.h. */
uint64_t ljw__memo_hits(const struct ljw *w)
{
	return w && w->memo ? w->memo->hits : 0;
}

/* See ljwalk_int.h. */
void ljw__memo_exit(struct ljw *w)
{
	struct ljw_memo *m = w->memo;
	size_t i;

	if (!m)
		return;
	for (i = 0; i < MEMO_SLOTS; i++) {
		free(m->ent[i].log.reads);
		free(m->ent[i].log.bytes);
		free(m->ent[i].frames);
		free(m->ent[i].strs);
	}
	free(m->log.reads);
	free(m->log.bytes);
	free(m->tmp);
	free(m);
	w->memo = NULL;
}
