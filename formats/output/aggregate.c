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

#include "formats/output/aggregate_int.h"
#include "symtab/vec.h"

/* agg__add_stack's memory of the stacks it was given (struct agg_memo). */
#define AGG_MEMO_MAX	(1u << 20)		/* stacks */
#define AGG_MEMO_BYTES	((size_t)4 << 20)	/* bytes of signatures */

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
	if (!a)
		return;
	free(a->str);
	free(a->fr);
	free(a->fhash);
	free(a->node);
	free(a->nhash);
	free(a->st);
	agg_stack__exit(&a->scratch);
	intmap__exit(&a->smemo);
	free(a->memo);
	free(a->msig);
	free(a->sig);
	free(a->fsrc);
	free(a->sgroup);
	free(a->grp);
	free(a->gnext);
	free(a->lab);
	free(a->lhash);
	agg__meta_exit(a);
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

/* The node hash: open addressing, linear probing, at most 3/4 full.  Its
 * capacity grows by half, not doubling, and a hash maps to a slot by a
 * multiply (any capacity): on millions of nodes it is the largest part of
 * the tree after the nodes themselves. */
#define NODES_HASH_MIN	4096

/* Hash of node (parent, id). */
static uint64_t node__hash(uint32_t parent, uint32_t id)
{
	return hash__mix(((uint64_t)parent << 32 | id) * 0x9e3779b97f4a7c15ull);
}

/* The first slot of hash h in a table of cap slots. */
static size_t node__slot(uint64_t h, size_t cap)
{
	return (size_t)(((unsigned __int128)h * cap) >> 64);
}

/* Rebuild the node hash at a new capacity. */
static int nodes__rehash(struct agg *a, size_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));
	size_t i, s;

	if (!h)
		return -ENOMEM;
	for (i = 0; i < a->nnode; i++) {
		s = node__slot(node__hash(a->node[i].parent, a->node[i].id), cap);
		while (h[s])
			s = s + 1 < cap ? s + 1 : 0;
		h[s] = (uint32_t)(i + 1);
	}
	free(a->nhash);
	a->nhash = h;
	a->nhcap = cap;
	return 0;
}

/* The node of frame id called from node parent (AGG_NONE: a root frame),
 * made if new: its index, or -ENOMEM. */
static long node__intern(struct agg *a, uint32_t parent, uint32_t id)
{
	struct agg_node *nd;
	size_t slot;

	if ((a->nnode + 1) * 4 > a->nhcap * 3 &&
	    nodes__rehash(a, a->nhcap ? a->nhcap + a->nhcap / 2 : NODES_HASH_MIN))
		return -ENOMEM;
	for (slot = node__slot(node__hash(parent, id), a->nhcap); a->nhash[slot];
	     slot = slot + 1 < a->nhcap ? slot + 1 : 0) {
		nd = &a->node[a->nhash[slot] - 1];
		if (nd->parent == parent && nd->id == id)
			return (long)a->nhash[slot] - 1;
	}
	if (a->nnode >= AGG_IDS_MAX || VEC_GROW(a->node, &a->nodecap, a->nnode + 1))
		return -ENOMEM;
	nd = &a->node[a->nnode];
	nd->parent = parent;
	nd->id = id;
	nd->stack = AGG_NONE;
	a->nhash[slot] = (uint32_t)(++a->nnode);
	return (long)a->nnode - 1;
}

/* Count samples of stack idx. */
static void stack__count(struct agg *a, uint32_t idx, uint64_t count)
{
	a->st[idx].count += count;
	a->total += count;
}

/* Intern a stack of ids with count samples: its index, or -EINVAL / -ENOMEM. */
static long stack__intern(struct agg *a, const struct agg_stack *sb, uint64_t count)
{
	uint32_t at = AGG_NONE;
	struct agg_st *s;
	size_t i;
	long k;

	if (!a || !sb || sb->n == 0 || sb->n > AGG_IDS_MAX)
		return -EINVAL;
	for (i = 0; i < sb->n; i++)
		if (sb->ids[i] >= a->nfr)
			return -EINVAL;
	for (i = 0; i < sb->n; i++) {
		k = node__intern(a, at, sb->ids[i]);
		if (k < 0)
			return k;
		at = (uint32_t)k;
	}
	if (a->node[at].stack == AGG_NONE) {
		if (a->nst >= AGG_IDS_MAX || VEC_GROW(a->st, &a->stcap, a->nst + 1))
			return -ENOMEM;
		s = &a->st[a->nst];
		s->node = at;
		s->n = (uint32_t)sb->n;
		s->count = 0;
		a->node[at].stack = (uint32_t)a->nst++;
	}
	stack__count(a, a->node[at].stack, count);
	return (long)a->node[at].stack;
}

/* Add count samples of a stack of ids. */
int agg__add(struct agg *a, const struct agg_stack *sb, uint64_t count)
{
	long idx = stack__intern(a, sb, count);

	return idx < 0 ? (int)idx : 0;
}

/* ljs_src_ref__set's put: copy a string into the name arena. */
static int fsrc__put(void *ctx, const char *s, uint64_t *off)
{
	struct agg *a = ctx;
	size_t len;

	if (!s) {
		*off = LJS_NOSTR;
		return 0;
	}
	len = strlen(s);
	if (VEC_GROW(a->str, &a->strcap, a->nstr + len + 1))
		return -ENOMEM;
	memcpy(a->str + a->nstr, s, len + 1);
	*off = a->nstr;
	a->nstr += len + 1;
	return 0;
}

/* Keep the source of frame id (the first one given wins). */
static int fsrc__keep(struct agg *a, uint32_t id, const struct ljs_frame_src *src)
{
	if (id < a->nfsrc && a->fsrc[id].has)
		return 0;
	if (VEC_GROW(a->fsrc, &a->fsrccap, (size_t)id + 1))
		return -ENOMEM;
	if (id >= a->nfsrc) {
		memset(a->fsrc + a->nfsrc, 0, ((size_t)id + 1 - a->nfsrc) * sizeof(*a->fsrc));
		a->nfsrc = (size_t)id + 1;
	}
	if (ljs_src_ref__set(&a->fsrc[id].src, src, fsrc__put, a))
		return -ENOMEM;
	a->fsrc[id].has = 1;
	return 0;
}

static int label__eq(const struct agg_labels *x, const struct agg_labels *y)
{
	return x->pid == y->pid && x->tid == y->tid && x->vm == y->vm;
}

static size_t label__slot(const struct agg_labels *l, size_t cap)
{
	uint64_t h = ((uint64_t)l->pid << 32 | l->tid) * 0x9e3779b97f4a7c15ull;

	return (size_t)((h ^ (uint64_t)(uint32_t)l->vm * 0xff51afd7ed558ccdull) >> 32) & (cap - 1);
}

/* Double the label hash (or make it) and place every label again. */
static int label__rehash(struct agg *a)
{
	size_t cap = a->lhcap ? a->lhcap * 2 : 64, i, k;
	uint32_t *h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (i = 0; i < a->nlab; i++) {
		for (k = label__slot(&a->lab[i], cap); h[k]; k = (k + 1) & (cap - 1))
			;
		h[k] = (uint32_t)i + 1;
	}
	free(a->lhash);
	a->lhash = h;
	a->lhcap = cap;
	return 0;
}

/* The index of labels l, added when new: 0 or -ENOMEM. */
static int label__find(struct agg *a, const struct agg_labels *l, uint32_t *out)
{
	size_t k;

	if (a->llast && label__eq(&a->lab[a->llast - 1], l)) {
		*out = a->llast - 1;
		return 0;
	}
	if ((a->nlab + 1) * 2 > a->lhcap && label__rehash(a))
		return -ENOMEM;
	for (k = label__slot(l, a->lhcap); a->lhash[k]; k = (k + 1) & (a->lhcap - 1))
		if (label__eq(&a->lab[a->lhash[k] - 1], l))
			goto found;
	if (a->nlab >= AGG_IDS_MAX || VEC_GROW(a->lab, &a->labcap, a->nlab + 1))
		return -ENOMEM;
	a->lab[a->nlab++] = *l;
	a->lhash[k] = (uint32_t)a->nlab;
found:
	a->llast = a->lhash[k];
	*out = a->llast - 1;
	return 0;
}

/* Count samples of stack idx under labels l. */
static int group__add(struct agg *a, uint32_t idx, const struct agg_labels *l, uint64_t count)
{
	struct agg_group *g;
	uint32_t k, lab;

	if (label__find(a, l, &lab) || VEC_GROW(a->sgroup, &a->sgroupcap, (size_t)idx + 1))
		return -ENOMEM;
	if (idx >= a->nsgroup) {
		memset(a->sgroup + a->nsgroup, 0, ((size_t)idx + 1 - a->nsgroup) * sizeof(*a->sgroup));
		a->nsgroup = (size_t)idx + 1;
	}
	for (k = a->sgroup[idx]; k; k = a->gnext[k - 1]) {
		g = &a->grp[k - 1];
		if (g->label == lab) {
			g->count += count;
			return 0;
		}
	}
	if (a->ngrp >= AGG_IDS_MAX || VEC_GROW(a->grp, &a->grpcap, a->ngrp + 1) ||
	    VEC_GROW(a->gnext, &a->gnextcap, a->ngrp + 1))
		return -ENOMEM;
	g = &a->grp[a->ngrp];
	g->stack = idx;
	g->label = lab;
	g->count = count;
	a->gnext[a->ngrp++] = a->sgroup[idx];
	a->sgroup[idx] = (uint32_t)a->ngrp;
	return 0;
}

/* The signature of a stack without sources into a->sig (each frame's length,
 * kind and name, in order): its length, or 0 when the stack has sources or
 * no room was had. */
static size_t memo__sig(struct agg *a, const struct ljs_stack *st)
{
	size_t i, n = 0, need = 0;
	unsigned char *p;

	for (i = 0; i < st->n; i++) {
		if (st->f[i].has_src || st->f[i].len > 0xffff)
			return 0;
		need += 3 + st->f[i].len;
	}
	if (need == 0 || VEC_GROW(a->sig, &a->sigcap, need))
		return 0;
	p = a->sig;
	for (i = 0; i < st->n; i++) {
		p[n] = (unsigned char)st->f[i].len;
		p[n + 1] = (unsigned char)(st->f[i].len >> 8);
		p[n + 2] = (unsigned char)st->f[i].kind;
		memcpy(p + n + 3, st->text + st->f[i].off, st->f[i].len);
		n += 3 + st->f[i].len;
	}
	return n;
}

/* The stack a->sig (len bytes, hash h) made before: its index, or -1.  The
 * same frames in the same order intern to the same ids (an interned name
 * keeps its id), so the stack is the same. */
static long memo__find(struct agg *a, uint64_t h, size_t len)
{
	const struct agg_memo *m;
	uint64_t mi;

	if (!intmap__get(&a->smemo, h, &mi))
		return -1;
	m = &a->memo[mi];
	if (m->len != len || memcmp(a->msig + m->off, a->sig, len))
		return -1;
	return (long)m->stack;
}

/* Remember that a->sig (len bytes, hash h) made stack idx, within bounds;
 * a hash already taken keeps its first stack. */
static void memo__put(struct agg *a, uint64_t h, size_t len, long idx)
{
	uint64_t *v;

	if (a->nmemo >= AGG_MEMO_MAX || a->nmsig + len > AGG_MEMO_BYTES ||
	    VEC_GROW(a->memo, &a->memocap, a->nmemo + 1) ||
	    VEC_GROW(a->msig, &a->msigcap, a->nmsig + len) ||
	    intmap__slot(&a->smemo, h, &v) != 0)
		return;
	*v = a->nmemo;
	a->memo[a->nmemo].off = a->nmsig;
	a->memo[a->nmemo].len = (uint32_t)len;
	a->memo[a->nmemo].stack = (uint32_t)idx;
	a->nmemo++;
	memcpy(a->msig + a->nmsig, a->sig, len);
	a->nmsig += len;
}

int agg__add_stack(struct agg *a, const struct ljs_stack *st, const struct agg_labels *l,
		   uint64_t count)
{
	struct ljs_frame_src src;
	size_t i, slen;
	uint64_t h = 0;
	long idx = -1;
	int err;

	if (!a || !st)
		return -EINVAL;
	slen = memo__sig(a, st);
	if (slen) {
		h = hash__mix(hash__bytes(14695981039346656037ull, a->sig, slen));
		idx = memo__find(a, h, slen);
	}
	if (idx >= 0) {
		stack__count(a, (uint32_t)idx, count);
	} else {
		agg_stack__reset(&a->scratch);
		for (i = 0; i < st->n; i++) {
			err = agg__push(a, &a->scratch, st->text + st->f[i].off, st->f[i].len,
					st->f[i].kind);
			if (!err && ljs_stack__src(st, i, &src))
				err = fsrc__keep(a, a->scratch.ids[a->scratch.n - 1], &src);
			if (err)
				return err;
		}
		idx = stack__intern(a, &a->scratch, count);
		if (idx < 0)
			return (int)idx;
		if (slen)
			memo__put(a, h, slen, idx);
	}
	return l ? group__add(a, (uint32_t)idx, l, count) : 0;
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

/* Stack i, into sb. */
int agg__stack(const struct agg *a, size_t i, struct agg_stack *sb, uint64_t *count)
{
	uint32_t k;
	size_t j;

	if (i >= a->nst)
		return -EINVAL;
	if (VEC_GROW(sb->ids, &sb->cap, a->st[i].n))
		return -ENOMEM;
	sb->n = a->st[i].n;
	for (j = sb->n, k = a->st[i].node; j > 0; k = a->node[k].parent)
		sb->ids[--j] = a->node[k].id;
	*count = a->st[i].count;
	return 0;
}

/* Stack i's count. */
uint64_t agg__stack_count(const struct agg *a, size_t i)
{
	return i < a->nst ? a->st[i].count : 0;
}

/* Nodes of the stack tree. */
size_t agg__nnodes(const struct agg *a)
{
	return a->nnode;
}

/* Node k of the stack tree. */
int agg__node(const struct agg *a, uint32_t k, struct agg_tnode *out)
{
	if (k >= a->nnode)
		return -EINVAL;
	out->parent = a->node[k].parent;
	out->id = a->node[k].id;
	out->stack = a->node[k].stack;
	out->count = out->stack != AGG_NONE ? a->st[out->stack].count : 0;
	return 0;
}

/* The slot of node i's parent in agg__kids' start: a root's is agg__nnodes. */
static uint32_t node__up(const struct agg *a, size_t i)
{
	return a->node[i].parent == AGG_NONE ? (uint32_t)a->nnode : a->node[i].parent;
}

/* Every node's children, in one array (counted, then placed). */
int agg__kids(const struct agg *a, uint32_t **start, uint32_t **kids)
{
	size_t n = a->nnode, i;
	uint32_t *st = calloc(n + 2, sizeof(*st)), *k = malloc((n ? n : 1) * sizeof(*k));

	*start = NULL;
	*kids = NULL;
	if (!st || !k) {
		free(st);
		free(k);
		return -ENOMEM;
	}
	/* st[p + 1] counts p's children, then the running sums make st[p]
	 * p's first slot; placing moves st[p] to p's end, which is st[p + 1]
	 * before placing: shifting back gives the starts again. */
	for (i = 0; i < n; i++)
		st[node__up(a, i) + 1]++;
	for (i = 1; i < n + 2; i++)
		st[i] += st[i - 1];
	for (i = 0; i < n; i++)
		k[st[node__up(a, i)]++] = (uint32_t)i;
	for (i = n + 1; i > 0; i--)
		st[i] = st[i - 1];
	st[0] = 0;
	*start = st;
	*kids = k;
	return 0;
}

/* Where frame id comes from. */
int agg__frame_src(const struct agg *a, uint32_t id, struct ljs_frame_src *out)
{
	memset(out, 0, sizeof(*out));
	if (id >= a->nfsrc || !a->fsrc[id].has)
		return 0;
	ljs_src_ref__get(&a->fsrc[id].src, a->str, out);
	return 1;
}

/* The labelled groups, in the order first seen. */
const struct agg_group *agg__groups(const struct agg *a, size_t *n)
{
	*n = a->ngrp;
	return a->ngrp ? a->grp : NULL;
}

const struct agg_labels *agg__labels(const struct agg *a, size_t *n)
{
	*n = a->nlab;
	return a->nlab ? a->lab : NULL;
}
