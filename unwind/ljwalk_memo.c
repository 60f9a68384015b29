/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljwalk_memo.c -- walks remembered across samples (ljw_opts.memo).
 *
 * A walk is a function of what it reads: the sample fields and options
 * listed in its key (memo__key), the registers it reads (ljw__reg), and the
 * bytes of every memory read, each logged with its answer (the bytes, or
 * the failure) and where it was answered (enum memo_src).  A later sample
 * with the same key is not walked when its registers hold the same values
 * and every logged read gives the same answer now, read through this
 * sample's own memory source (its windows, then the capture's memory at its
 * time): the walk would then take the same steps and give the same frames,
 * so those of the remembered walk are returned.  The registers are kept
 * out of the key because which of them a walk reads depends on its VM
 * state: in trace code rdx, rbx and rbp hold anything, and the walk does
 * not read them.  Most samples repeat an earlier one's walk: of 4 s
 * captures of bench/report.sh's workload, 98.0% of the walks with -joff
 * (the same bytecode at the same depth) and 99.4% with -jon (the same
 * machine code of the same trace) were remembered.  Of what the walker
 * keeps across walks, the variable lists are checked against the bytes
 * they were decoded from (ljwalk_name.c), the definition names are in the
 * key (below), and the rest is the trace code's.
 *
 * The trace code's answers kept across walks (ljwalk_tcall.c
 * trace__unseen_lua) are a function of the trace, whose header is read and
 * logged in every walk that uses them.  Walks in the trace exit handler or
 * the compiler are not remembered.  The names of earlier walks (ljwalk_def.c
 * known__apply) are in the key as a count of their changes.  Walks that
 * ran out of memory or out of log are not remembered.  The recorder does
 * not use this: its reads decide what the capture keeps
 * (formats/capture/harvest.h).
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
/* Where walks seldom repeat (memory that changes, registers that do),
 * looking up and logging cost more than they save: after a window of
 * MEMO_WINDOW walks with fewer than one hit in MEMO_SPARSE_RATE, only one
 * walk in MEMO_SPARSE_EVERY is looked up and logged in the next window. */
#define MEMO_WINDOW		1024
#define MEMO_SPARSE_RATE	64
#define MEMO_SPARSE_EVERY	16

/* Where a logged read was answered, and so where its replay asks. */
enum memo_src {
	MEMO_FIRST,		/* the chain's first source (the sample's windows) */
	MEMO_REST,		/* the rest of the chain */
	MEMO_MEM,		/* the trace memory, apart from the chain */
	MEMO_OWN,		/* the sample's windows alone (ljw__read_own) */
	MEMO_SEC,		/* the bytes of section addr (ljw__memo_section) */
};

struct memo_read {
	uint64_t addr;
	uint32_t len;
	int32_t err;		/* the read's answer: 0 (bytes at off) or its error */
	size_t off;
	enum memo_src src;
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
	uint64_t regs_used;	/* the registers the walk read, and their values */
	uint64_t regs[LJW_REG_N];
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
	struct memsrc src_mem;	/* reads through `inner_mem` (MEMO_MEM), logged */
	const struct memsrc *inner_mem;
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
		enum memo_src src;
	} seen[MEMO_SEEN];
	uint32_t gen;
	uint8_t *tmp;		/* a replayed read's bytes */
	size_t captmp;
	uint64_t hits, misses;
	uint64_t walks, window_hits;	/* walks asked about; hits at the window's start */
	int sparse;		/* this window looks up one walk in MEMO_SPARSE_EVERY */
	int skip;		/* this walk is neither looked up nor logged */
};

/* The key of a walk: everything but the memory and registers it reads
 * (those are logged: the instruction pointer is in the key). */
static size_t memo__key(const struct ljw *w, const struct lj_layout *lay,
			const struct ljs_sample *s, const struct memsrc *ms,
			const struct memsrc *ms_mem, const struct ljw_opts *o, uint64_t *k)
{
	const struct ljs_regs *r = &s->regs, *v = o->vm_regs;
	size_t n = 0, i, ns = s->nsec < LJS_SAMPLE_MAX_SECS ? s->nsec : LJS_SAMPLE_MAX_SECS;

	k[n++] = (uintptr_t)lay;
	k[n++] = (uint64_t)s->pid << 32 | s->tid;
	k[n++] = s->flags;
	k[n++] = s->g;
	k[n++] = r->ip;
	k[n++] = v != NULL;
	k[n++] = o->vm_lo;
	k[n++] = o->vm_hi;
	k[n++] = o->max_frames;
	k[n++] = o->trace_ip;
	k[n++] = o->trace_regs != NULL;
	k[n++] = o->trace_scan;
	k[n++] = o->stack_lo;
	k[n++] = o->stack_hi;
	k[n++] = (uintptr_t)o->ms_mem;
	k[n++] = ms_mem == ms;
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

/* Log a read of the walk and its answer (buf when err is 0). */
static void memo__log(struct ljw_memo *m, enum memo_src src, uint64_t addr, const void *buf,
		      size_t len, int err)
{
	struct memo_log *lg = &m->log;
	struct memo_seen *sn;
	struct memo_read *x;
	size_t h;

	if (m->full)
		return;
	h = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 40 ^ len ^ (size_t)src << 20);
	for (;; h++) {		/* linear probing; the log's cap keeps it below full */
		sn = &m->seen[h & (MEMO_SEEN - 1)];
		if (sn->walk != m->gen)
			break;
		if (sn->addr == addr && sn->len == len && sn->src == src)
			return;
	}
	if (lg->nreads >= MEMO_READS_MAX || len > MEMO_BYTES_MAX ||
	    (err == 0 && lg->nbytes + len > MEMO_BYTES_MAX) ||
	    VEC_GROW(lg->reads, &lg->capreads, lg->nreads + 1) != 0 ||
	    (err == 0 && VEC_GROW(lg->bytes, &lg->capbytes, lg->nbytes + len) != 0)) {
		m->full = 1;
		return;
	}
	sn->addr = addr;
	sn->len = (uint32_t)len;
	sn->src = src;
	sn->walk = m->gen;
	x = &lg->reads[lg->nreads++];
	x->addr = addr;
	x->len = (uint32_t)len;
	x->err = err;
	x->off = lg->nbytes;
	x->src = src;
	if (err == 0) {
		memcpy(lg->bytes + lg->nbytes, buf, len);
		lg->nbytes += len;
	}
}

/* memsrc read callback: the inner chain's answer, logged. */
static int log__read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	struct ljw_memo *m = ms->ctx;
	int first, err = chain__read(m->inner, addr, buf, len, &first);

	memo__log(m, first ? MEMO_FIRST : MEMO_REST, addr, buf, len, err);
	return err;
}

/* memsrc read callback: the trace memory's answer, logged. */
static int logmem__read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	struct ljw_memo *m = ms->ctx;
	int err = memsrc__read(m->inner_mem, addr, buf, len);

	memo__log(m, MEMO_MEM, addr, buf, len, err);
	return err;
}

/* Are the len bytes at a and b the same?  Most logged reads are one field
 * of 16, 8, 4, 2 or 1 bytes: compared in registers, without a call. */
static int bytes__same(const uint8_t *a, const uint8_t *b, size_t len)
{
	uint64_t x, y;
	uint32_t u, v;

	switch (len) {
	case 8:
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		return x == y;
	case 4:
		memcpy(&u, a, 4);
		memcpy(&v, b, 4);
		return u == v;
	case 16:
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		if (x != y)
			return 0;
		memcpy(&x, a + 8, 8);
		memcpy(&y, b + 8, 8);
		return x == y;
	case 2:
		return a[0] == b[0] && a[1] == b[1];
	case 1:
		return *a == *b;
	default:
		return !memcmp(a, b, len);
	}
}

/* Does every read of e give the same answer now, through ms and ms_mem or
 * from the sample s? */
static int memo__replay(struct ljw_memo *m, const struct memo_ent *e, const struct ljs_sample *s,
			const struct memsrc *ms, const struct memsrc *ms_mem)
{
	struct memsrc own;
	size_t i;
	int first;

	/* A logged read is at most MEMO_BYTES_MAX bytes (memo__log). */
	if (VEC_GROW(m->tmp, &m->captmp, MEMO_BYTES_MAX) != 0)
		return 0;
	memsrc__init_sample(&own, s, NULL);
	for (i = 0; i < e->log.nreads; i++) {
		const struct memo_read *x = &e->log.reads[i];
		const struct ljs_section *sec;
		int err;

		if (x->src == MEMO_SEC) {	/* the key holds its kind, address, length */
			sec = x->addr < s->nsec && x->addr < LJS_SAMPLE_MAX_SECS ? &s->sec[x->addr] : NULL;
			if (!sec || !sec->data || sec->len != x->len ||
			    memcmp(sec->data, e->log.bytes + x->off, x->len))
				return 0;
			continue;
		}
		if (x->len == 0)
			err = 0;
		else if (x->src == MEMO_FIRST)
			err = ms->read(ms, x->addr, m->tmp, x->len);
		else if (x->src == MEMO_MEM)
			err = memsrc__read(ms_mem, x->addr, m->tmp, x->len);
		else if (x->src == MEMO_OWN)
			err = memsrc__read(&own, x->addr, m->tmp, x->len);
		else if (ms->next)
			err = memsrc__read(ms->next, x->addr, m->tmp, x->len);
		else
			err = chain__read(ms, x->addr, m->tmp, x->len, &first);
		if (err != x->err || (err == 0 && !bytes__same(m->tmp, e->log.bytes + x->off, x->len)))
			return 0;
	}
	return 1;
}

/* Register r (LJW_REG_*) of sample s under opts o; 0 when there is none. */
static uint64_t reg__value(const struct ljs_sample *s, const struct ljw_opts *o, unsigned r)
{
	const struct ljs_regs *g = r >= LJW_REG_TRACE ? o->trace_regs : &s->regs;

	if (r == LJW_REG_VM_BP || r == LJW_REG_VM_BX) {
		g = o->vm_regs;
		r = r == LJW_REG_VM_BP ? LJW_REG_BP : LJW_REG_BX;
	}
	if (!g || r >= LJW_REG_VM_BP)
		return 0;
	switch (r & 15) {
	case 0: return g->ax;
	case 1: return g->cx;
	case 2: return g->dx;
	case 3: return g->bx;
	case 4: return g->sp;
	case 5: return g->bp;
	case 6: return g->si;
	case 7: return g->di;
	case 8: return g->r8;
	case 9: return g->r9;
	case 10: return g->r10;
	case 11: return g->r11;
	case 12: return g->r12;
	case 13: return g->r13;
	case 14: return g->r14;
	default: return g->r15;
	}
}

/* See ljwalk_int.h. */
uint64_t ljw__reg(struct ljw *w, unsigned r)
{
	if (r >= LJW_REG_N)
		return 0;
	w->regs_used |= 1ull << r;
	return reg__value(w->s, w->o, r);
}

/* See ljwalk_int.h. */
int ljw__read_own(struct ljw *w, uint64_t addr, void *buf, size_t len)
{
	struct memsrc own;
	int err;

	memsrc__init_sample(&own, w->s, NULL);
	err = memsrc__read(&own, addr, buf, len);
	if (w->memo && w->memo->inner)
		memo__log(w->memo, MEMO_OWN, addr, buf, len, err);
	return err;
}

/* See ljwalk_int.h. */
void ljw__memo_section(struct ljw *w, uint32_t i)
{
	const struct ljs_section *sec = i < w->s->nsec ? &w->s->sec[i] : NULL;

	if (w->memo && w->memo->inner && sec && sec->data)
		memo__log(w->memo, MEMO_SEC, i, sec->data, sec->len, 0);
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

/* Do the registers e's walk read hold the same values in s now? */
static int regs__same(const struct memo_ent *e, const struct ljs_sample *s,
		      const struct ljw_opts *o)
{
	uint64_t u = e->regs_used;
	unsigned r;

	for (r = 0; u; r++, u >>= 1)
		if ((u & 1) && reg__value(s, o, r) != e->regs[r])
			return 0;
	return 1;
}

/* See ljwalk_int.h. */
int ljw__memo_hit(struct ljw *w, const struct lj_layout *lay, const struct ljs_sample *s,
		  const struct memsrc *ms, const struct memsrc *ms_mem,
		  const struct ljw_opts *o, struct ljw_stack *out)
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
	m->nkey = memo__key(w, lay, s, ms, ms_mem, o, m->key);
	m->lay = lay;
	e = &m->ent[memo__slot(m->key, m->nkey)];
	if (!e->used || e->nkey != m->nkey || memcmp(e->key, m->key, m->nkey * sizeof(m->key[0])) ||
	    memcmp(&e->lay, lay, sizeof(*lay)) || !regs__same(e, s, o) ||
	    !memo__replay(m, e, s, ms, ms_mem) ||
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
	if (out->trace.chunkname)
		out->trace.chunkname = e->strs + ((uintptr_t)out->trace.chunkname - 1);
	if (out->trace.chunk)
		out->trace.chunk = e->strs + ((uintptr_t)out->trace.chunk - 1);
	out->frames = w->frames;
	out->nframes = w->nframes;
	m->hits++;
	return 1;
}

/* See ljwalk_int.h. */
const struct memsrc *ljw__memo_begin(struct ljw *w, const struct memsrc *ms,
				     const struct memsrc *ms_mem)
{
	struct ljw_memo *m = w->memo;

	if (!m || m->skip)
		return ms;
	m->src.read = log__read;
	m->src.ctx = m;
	m->src.next = NULL;
	m->inner = ms;
	m->src_mem.read = logmem__read;
	m->src_mem.ctx = m;
	m->src_mem.next = NULL;
	m->inner_mem = ms_mem;
	/* the chain itself: its reads are the chain's (MEMO_FIRST, MEMO_REST) */
	w->ms_mem = ms_mem == ms ? &m->src : &m->src_mem;
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
	if (w->ms_mem == &m->src)
		w->ms_mem = m->inner;
	else if (w->ms_mem == &m->src_mem)
		w->ms_mem = m->inner_mem;
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
	if (!ok || m->full || out->nframes > MEMO_FRAMES_MAX || !m->lay)
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
	if ((at = ent__str(e, out->trace.chunkname)) < 0)
		return;
	e->out.trace.chunkname = (const char *)(uintptr_t)at;
	if ((at = ent__str(e, out->trace.chunk)) < 0)
		return;
	e->out.trace.chunk = (const char *)(uintptr_t)at;
	e->regs_used = w->regs_used;
	for (k = 0; k < LJW_REG_N; k++)
		e->regs[k] = w->regs_used >> k & 1 ? reg__value(w->s, w->o, (unsigned)k) : 0;
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
