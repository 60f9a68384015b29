/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * aggregate.c -- the profile model: interned frame names and stacks, and
 * what the outputs print beside them (see aggregate.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/output/aggregate.h"
#include "symtab/vec.h"

#define AGG_IDS_MAX	(UINT32_MAX - 1)	/* frames, stacks, pooled ids */

struct agg_fr {
	uint64_t hash;
	uint64_t off;			/* name bytes at str + off */
	uint32_t len;
	uint32_t base;			/* id of the name without its suffix */
	uint8_t kind;			/* enum ljs_fkind */
};

struct agg_st {
	uint64_t hash;
	uint64_t off;			/* ids at ids + off */
	uint32_t n;
	uint64_t count;
};

struct agg {
	unsigned flags;
	char *str;			/* frame names, back to back */
	size_t nstr, strcap;
	struct agg_fr *fr;
	size_t nfr, frcap;
	uint32_t *fhash;		/* open addressing: frame id + 1, 0 = empty */
	size_t fhcap;
	uint32_t *ids;			/* stacks' ids, back to back */
	size_t nids, idcap;
	struct agg_st *st;
	size_t nst, stcap;
	uint32_t *shash;		/* open addressing: stack index + 1 */
	size_t shcap;
	uint64_t total;
	struct ljs_walk_stats walk;
	struct agg_stack scratch;	/* agg__add_stack's ids */
	/* samples per JIT trace: open addressing by name */
	struct agg_trace *tr;
	size_t ntr, trcap;		/* trcap: power of two */
	uint64_t tsrc[LJS_TRACE_SRC_MAX];
	struct agg_trace *tsorted;	/* agg__traces' copy */
	/* where the samples came from */
	char *file, *selection;
	struct agg_proc *procs;
	size_t nprocs, proccap;
	char **notes;
	size_t nnotes, notecap;
};

/* -- Small helpers ------------------------------------------------------------ */

/* Hash bytes, eight at a time (seeded; mixed again by hash__mix). */
static uint64_t hash__bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h ^ n;
}

#define ONES	0x0101010101010101ull
#define HIGHS	0x8080808080808080ull

/* Does any byte of w need replacing (below 0x20, ';' or 0x7f)?  SWAR:
 * (x - 1s) & ~x & 0x80s is non-zero iff some byte of x is zero. */
static int word__unsafe(uint64_t w)
{
	uint64_t semi = w ^ (ONES * ';'), del = w ^ (ONES * 0x7f);

	return (((w - ONES * 0x20) & ~w & HIGHS) | ((semi - ONES) & ~semi & HIGHS) |
		((del - ONES) & ~del & HIGHS)) != 0;
}

/* Final mix so that low bits depend on every input bit. */
static uint64_t hash__mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

/* Make a name folded-safe into out (size AGG_NAME_MAX): ';' -> ',',
 * control bytes -> '?', trailing blanks dropped, "" -> "[?]".  Returns the
 * length. */
static size_t name__sanitize(const char *in, size_t len, char *out)
{
	size_t i, n = len < AGG_NAME_MAX - 1 ? len : AGG_NAME_MAX - 1;
	unsigned bad = 0;

	/* Scan eight bytes at a time first: nearly every name is clean. */
	for (i = 0; i + 8 <= n && !bad; i += 8) {
		uint64_t w;

		memcpy(&w, in + i, 8);
		bad = (unsigned)word__unsafe(w);
	}
	for (; i < n; i++) {
		unsigned char c = (unsigned char)in[i];

		bad |= (c < 0x20) | (c == ';') | (c == 0x7f);
	}
	if (!bad) {
		if (out != in)
			memmove(out, in, n);
	} else {
		for (i = 0; i < n; i++) {
			unsigned char c = (unsigned char)in[i];

			out[i] = c == ';' ? ',' : (c < 0x20 || c == 0x7f) ? '?' : (char)c;
		}
	}
	while (n > 0 && out[n - 1] == ' ')
		n--;
	if (n == 0) {
		memcpy(out, "[?]", 3);
		n = 3;
	}
	out[n] = '\0';
	return n;
}

/* -- Lifecycle ------------------------------------------------------------------ */

/* Allocate an aggregate. */
struct agg *agg__new(unsigned flags)
{
	struct agg *a = calloc(1, sizeof(*a));

	if (a)
		a->flags = flags;
	return a;
}

/* Free an aggregate. */
void agg__delete(struct agg *a)
{
	size_t i;

	if (!a)
		return;
	free(a->str);
	free(a->fr);
	free(a->fhash);
	free(a->ids);
	free(a->st);
	free(a->shash);
	agg_stack__exit(&a->scratch);
	for (i = 0; i < a->trcap; i++) {
		free((char *)a->tr[i].name);
		free((char *)a->tr[i].label);
	}
	free(a->tr);
	free(a->tsorted);
	free(a->file);
	free(a->selection);
	for (i = 0; i < a->nprocs; i++) {
		free((char *)a->procs[i].comm);
		free((char *)a->procs[i].build);
	}
	free(a->procs);
	for (i = 0; i < a->nnotes; i++)
		free(a->notes[i]);
	free(a->notes);
	free(a);
}

/* -- Frames ---------------------------------------------------------------------- */

/* Rebuild the frame hash at a new capacity (a power of two). */
static int frames__rehash(struct agg *a, size_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));
	size_t i, s;

	if (!h)
		return -ENOMEM;
	for (i = 0; i < a->nfr; i++) {
		s = a->fr[i].hash & (cap - 1);
		while (h[s])
			s = (s + 1) & (cap - 1);
		h[s] = (uint32_t)(i + 1);
	}
	free(a->fhash);
	a->fhash = h;
	a->fhcap = cap;
	return 0;
}

/* Length of a name without a trailing "_[j]", "_[i]" or "_[k]", or len. */
static size_t name__base_len(const char *s, size_t len)
{
	if (len > 4 && s[len - 4] == '_' && s[len - 3] == '[' && s[len - 1] == ']' &&
	    (s[len - 2] == 'j' || s[len - 2] == 'i' || s[len - 2] == 'k'))
		return len - 4;
	return len;
}

/* The kind of a name without its suffix: a Lua function in a trace or
 * inlined is the same function interpreted; an inlined C function the same
 * as the function itself. */
static enum ljs_fkind kind__base(enum ljs_fkind kind)
{
	if (kind == LJS_FK_LUA_TRACE || kind == LJS_FK_LUA_INLINED)
		return LJS_FK_LUA;
	return kind == LJS_FK_NATIVE_INLINED ? LJS_FK_NATIVE : kind;
}

/* Intern an already sanitized name; its id or -ENOMEM. */
static long frame__intern(struct agg *a, const char *s, size_t len, enum ljs_fkind kind)
{
	uint64_t h = hash__mix(hash__bytes(14695981039346656037ull ^ kind, s, len));
	struct agg_fr *f;
	size_t slot, blen;
	long id, base;

	if (a->fhcap) {
		for (slot = h & (a->fhcap - 1); a->fhash[slot]; slot = (slot + 1) & (a->fhcap - 1)) {
			f = &a->fr[a->fhash[slot] - 1];
			if (f->hash == h && f->len == len && f->kind == kind &&
			    !memcmp(a->str + f->off, s, len))
				return (long)a->fhash[slot] - 1;
		}
	}
	/* The suffix-less name first, so its id is known. */
	blen = name__base_len(s, len);
	base = blen < len ? frame__intern(a, s, blen, kind__base(kind)) : -1;
	if (blen < len && base < 0)
		return base;
	if (a->nfr >= AGG_IDS_MAX || VEC_GROW(a->fr, &a->frcap, a->nfr + 1) ||
	    VEC_GROW(a->str, &a->strcap, a->nstr + len + 1))
		return -ENOMEM;
	if ((a->nfr + 1) * 2 > a->fhcap && frames__rehash(a, a->fhcap ? a->fhcap * 2 : 1024))
		return -ENOMEM;
	id = (long)a->nfr++;
	f = &a->fr[id];
	f->hash = h;
	f->off = a->nstr;
	f->len = (uint32_t)len;
	f->kind = (uint8_t)kind;
	f->base = base >= 0 ? (uint32_t)base : (uint32_t)id;
	memcpy(a->str + a->nstr, s, len);
	a->str[a->nstr + len] = '\0';
	a->nstr += len + 1;
	for (slot = h & (a->fhcap - 1); a->fhash[slot]; slot = (slot + 1) & (a->fhcap - 1))
		;
	a->fhash[slot] = (uint32_t)id + 1;
	return id;
}

/* Intern a frame name; its id or -ENOMEM. */
long agg__frame(struct agg *a, const char *name, size_t len, enum ljs_fkind kind)
{
	char buf[AGG_NAME_MAX];

	if (!a || !name || (unsigned)kind >= LJS_FK__MAX)
		return -EINVAL;
	len = name__sanitize(name, len, buf);
	return frame__intern(a, buf, len, kind);
}

/* -- Stacks ------------------------------------------------------------------------ */

/* Forget the frames of a stack being built. */
void agg_stack__reset(struct agg_stack *sb)
{
	sb->n = 0;
}

/* Free a stack being built. */
void agg_stack__exit(struct agg_stack *sb)
{
	free(sb->ids);
	sb->ids = NULL;
	sb->n = sb->cap = 0;
}

/* Push one frame (interned) onto a stack being built. */
int agg__push(struct agg *a, struct agg_stack *sb, const char *name, size_t len,
	      enum ljs_fkind kind)
{
	long id = agg__frame(a, name, len, kind);

	if (id < 0)
		return (int)id;
	if (VEC_GROW(sb->ids, &sb->cap, sb->n + 1))
		return -ENOMEM;
	sb->ids[sb->n++] = (uint32_t)id;
	return 0;
}

/* Append an interned frame id to a stack being built. */
int agg_stack__push_id(struct agg_stack *sb, uint32_t id)
{
	if (VEC_GROW(sb->ids, &sb->cap, sb->n + 1))
		return -ENOMEM;
	sb->ids[sb->n++] = id;
	return 0;
}

/* Rebuild the stack hash at a new capacity. */
static int stacks__rehash(struct agg *a, size_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));
	size_t i, s;

	if (!h)
		return -ENOMEM;
	for (i = 0; i < a->nst; i++) {
		s = a->st[i].hash & (cap - 1);
		while (h[s])
			s = (s + 1) & (cap - 1);
		h[s] = (uint32_t)(i + 1);
	}
	free(a->shash);
	a->shash = h;
	a->shcap = cap;
	return 0;
}

/* Add count samples of a stack. */
int agg__add(struct agg *a, const struct agg_stack *sb, uint64_t count)
{
	uint64_t h;
	struct agg_st *s;
	size_t slot, i;

	if (!a || !sb || sb->n == 0 || sb->n > AGG_IDS_MAX)
		return -EINVAL;
	for (i = 0; i < sb->n; i++)
		if (sb->ids[i] >= a->nfr)
			return -EINVAL;
	h = hash__mix(hash__bytes(14695981039346656037ull, sb->ids, sb->n * sizeof(*sb->ids)));
	if (a->shcap) {
		for (slot = h & (a->shcap - 1); a->shash[slot]; slot = (slot + 1) & (a->shcap - 1)) {
			s = &a->st[a->shash[slot] - 1];
			if (s->hash == h && s->n == sb->n &&
			    !memcmp(a->ids + s->off, sb->ids, sb->n * sizeof(*sb->ids))) {
				s->count += count;
				a->total += count;
				return 0;
			}
		}
	}
	if (a->nst >= AGG_IDS_MAX || VEC_GROW(a->st, &a->stcap, a->nst + 1) ||
	    VEC_GROW(a->ids, &a->idcap, a->nids + sb->n))
		return -ENOMEM;
	if ((a->nst + 1) * 2 > a->shcap && stacks__rehash(a, a->shcap ? a->shcap * 2 : 1024))
		return -ENOMEM;
	s = &a->st[a->nst];
	s->hash = h;
	s->off = a->nids;
	s->n = (uint32_t)sb->n;
	s->count = count;
	memcpy(a->ids + a->nids, sb->ids, sb->n * sizeof(*sb->ids));
	a->nids += sb->n;
	for (slot = h & (a->shcap - 1); a->shash[slot]; slot = (slot + 1) & (a->shcap - 1))
		;
	a->shash[slot] = (uint32_t)(++a->nst);
	a->total += count;
	return 0;
}

/* Add count samples of a named stack. */
int agg__add_stack(struct agg *a, const struct ljs_stack *st, uint64_t count)
{
	size_t i;
	int err;

	if (!a || !st)
		return -EINVAL;
	agg_stack__reset(&a->scratch);
	for (i = 0; i < st->n; i++) {
		err = agg__push(a, &a->scratch, st->text + st->f[i].off, st->f[i].len,
				st->f[i].kind);
		if (err)
			return err;
	}
	return agg__add(a, &a->scratch, count);
}

/* djb2 of a NUL-terminated name. */
static size_t trace__hash(const char *c)
{
	size_t h = 5381;

	for (; *c; c++)
		h = h * 33 + (unsigned char)*c;
	return h;
}

/* Double the trace table. */
static int traces__grow(struct agg *a)
{
	size_t ncap = a->trcap ? a->trcap * 2 : 64, k, i;
	struct agg_trace *nv = calloc(ncap, sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	for (k = 0; k < a->trcap; k++) {
		if (!a->tr[k].name)
			continue;
		for (i = trace__hash(a->tr[k].name) & (ncap - 1); nv[i].name; i = (i + 1) & (ncap - 1))
			;
		nv[i] = a->tr[k];
	}
	free(a->tr);
	a->tr = nv;
	a->trcap = ncap;
	return 0;
}

/* Count one sample in its trace (traces are few: names hashed as strings). */
int agg__trace(struct agg *a, const struct ljs_trace_hit *hit)
{
	char name[512], label[768];
	size_t i;

	a->tsrc[hit->src < LJS_TRACE_SRC_MAX ? hit->src : 0]++;
	snprintf(name, sizeof(name), "TRACE_%d::%s:%d (root %d)", hit->traceno,
		 hit->chunk ? hit->chunk : "?", hit->startline, hit->root);
	if ((a->ntr + 1) * 2 > a->trcap && traces__grow(a))
		return -ENOMEM;
	for (i = trace__hash(name) & (a->trcap - 1); a->tr[i].name; i = (i + 1) & (a->trcap - 1))
		if (!strcmp(a->tr[i].name, name)) {
			a->tr[i].n++;
			return 0;
		}
	snprintf(label, sizeof(label), "%s; starts in %s%s <%s:%d>", name,
		 hit->start_fn ? "function " : "", hit->start_fn ? hit->start_fn : "function",
		 hit->chunk ? hit->chunk : "?", hit->linedefined);
	a->tr[i].name = strdup(name);
	a->tr[i].label = strdup(label);
	if (!a->tr[i].name || !a->tr[i].label)
		return -ENOMEM;
	a->tr[i].n = 1;
	a->ntr++;
	return 0;
}

/* The walk statistics. */
void agg__set_walk(struct agg *a, const struct ljs_walk_stats *ws)
{
	a->walk = *ws;
}

/* Where the samples came from. */
int agg__set_source(struct agg *a, const char *file, const char *selection)
{
	free(a->file);
	free(a->selection);
	a->file = file ? strdup(file) : NULL;
	a->selection = selection ? strdup(selection) : NULL;
	return (file && !a->file) || (selection && !a->selection) ? -ENOMEM : 0;
}

/* A process that had samples. */
int agg__add_proc(struct agg *a, const struct agg_proc *p)
{
	struct agg_proc *d;

	if (VEC_GROW(a->procs, &a->proccap, a->nprocs + 1))
		return -ENOMEM;
	d = &a->procs[a->nprocs];
	*d = *p;
	d->comm = p->comm ? strdup(p->comm) : NULL;
	d->build = p->build ? strdup(p->build) : NULL;
	if ((p->comm && !d->comm) || (p->build && !d->build)) {
		free((char *)d->comm);
		free((char *)d->build);
		return -ENOMEM;
	}
	a->nprocs++;
	return 0;
}

/* A note. */
int agg__add_note(struct agg *a, const char *note)
{
	char *c;

	if (VEC_GROW(a->notes, &a->notecap, a->nnotes + 1) ||
	    !(c = strdup(note)))
		return -ENOMEM;
	a->notes[a->nnotes++] = c;
	return 0;
}

/* -- Reading ------------------------------------------------------------------------- */

/* Flags given to agg__new. */
unsigned agg__flags(const struct agg *a)
{
	return a->flags;
}

/* Samples added. */
uint64_t agg__total(const struct agg *a)
{
	return a->total;
}

/* Walk statistics. */
const struct ljs_walk_stats *agg__walk(const struct agg *a)
{
	return &a->walk;
}

/* Number of distinct frame names. */
size_t agg__nframes(const struct agg *a)
{
	return a->nfr;
}

/* Name of frame id (NUL-terminated), or NULL. */
const char *agg__frame_name(const struct agg *a, uint32_t id, size_t *len)
{
	if (id >= a->nfr)
		return NULL;
	if (len)
		*len = a->fr[id].len;
	return a->str + a->fr[id].off;
}

/* Kind of frame id. */
enum ljs_fkind agg__frame_kind(const struct agg *a, uint32_t id)
{
	return id < a->nfr ? (enum ljs_fkind)a->fr[id].kind : LJS_FK_UNKNOWN;
}

/* Id of frame id's name without its suffix. */
uint32_t agg__frame_base(const struct agg *a, uint32_t id)
{
	return id < a->nfr ? a->fr[id].base : id;
}

/* Number of distinct stacks. */
size_t agg__nstacks(const struct agg *a)
{
	return a->nst;
}

/* Stack i. */
int agg__stack(const struct agg *a, size_t i, const uint32_t **ids, size_t *n, uint64_t *count)
{
	if (i >= a->nst)
		return -EINVAL;
	*ids = a->ids + a->st[i].off;
	*n = a->st[i].n;
	*count = a->st[i].count;
	return 0;
}

/* Samples per way of attributing them to a trace. */
const uint64_t *agg__trace_src(const struct agg *a)
{
	return a->tsrc;
}

/* qsort: by count descending, then name. */
static int trace__cmp(const void *x, const void *y)
{
	const struct agg_trace *p = x, *q = y;

	if (p->n != q->n)
		return p->n > q->n ? -1 : 1;
	return strcmp(p->name, q->name);
}

/* The traces with samples, sorted. */
const struct agg_trace *agg__traces(const struct agg *a, size_t *n)
{
	struct agg *m = (struct agg *)a;	/* the sorted copy is a cache */
	size_t i, k = 0;

	*n = 0;
	free(m->tsorted);
	m->tsorted = a->ntr ? malloc(a->ntr * sizeof(*m->tsorted)) : NULL;
	if (!m->tsorted)
		return NULL;
	for (i = 0; i < a->trcap; i++)
		if (a->tr[i].name)
			m->tsorted[k++] = a->tr[i];
	qsort(m->tsorted, k, sizeof(*m->tsorted), trace__cmp);
	*n = k;
	return m->tsorted;
}

const char *agg__source_file(const struct agg *a)
{
	return a->file;
}

const char *agg__source_selection(const struct agg *a)
{
	return a->selection;
}

const struct agg_proc *agg__procs(const struct agg *a, size_t *n)
{
	*n = a->nprocs;
	return a->procs;
}

const char *const *agg__notes(const struct agg *a, size_t *n)
{
	*n = a->nnotes;
	return (const char *const *)a->notes;
}
