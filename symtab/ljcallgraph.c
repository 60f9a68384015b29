/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljcallgraph.c -- names of LuaJIT's static C functions from the calls
 * between functions (see ljcallgraph.h).  Candidate sets are bitsets over
 * the source graph's functions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/ljcallgraph.h"

#include "symtab/ljcg_upstream_2022.h"
#include "symtab/ljcg_luajit2_20230119.h"

#define LJCG_MAX_PASSES	64	/* the constraints settle in 5-20 passes */
#ifndef LJCG_DERIVE_MAX
#define LJCG_DERIVE_MAX	64	/* candidates of a range that constrains its neighbours */
#endif
#define LJCG_UNKNOWN	(-1)	/* a named range the source graph lacks */
#define LJCG_UNNAMED	(-2)
#define LJCG_REF	0x8000	/* in a callee index: the address taken, not called */
#define LJCG_CALLER	0x4000	/* in ljcg_*_calls: a caller's index, its callees follow */

static const struct ljcg_data {
	const char *version;	/* ljnames__ircall's list name */
	const char *names;	/* "name\0" per function, sorted; "!": LJ_NOINLINE */
	size_t nnames;
	const uint16_t *calls;	/* per caller, ascending: LJCG_CALLER | it, its callees */
	size_t ncalls;
} ljcg_data[] = {
	{ "LuaJIT 2.1 (2022-03)", ljcg_upstream_2022_names, LJCG_UPSTREAM_2022_NAMES,
	  ljcg_upstream_2022_calls, sizeof(ljcg_upstream_2022_calls) / sizeof(uint16_t) },
	{ "OpenResty luajit2 2.1-20230119", ljcg_luajit2_20230119_names,
	  LJCG_LUAJIT2_20230119_NAMES, ljcg_luajit2_20230119_calls,
	  sizeof(ljcg_luajit2_20230119_calls) / sizeof(uint16_t) },
};

/* The source graph, unpacked. */
struct ljcg_src {
	const char **name;	/* without the "!" */
	uint8_t *noinline;
	size_t n, w;		/* functions; 64-bit words per bitset */
	uint32_t *off;		/* callees of i: adj[off[i] .. off[i + 1]) */
	uint16_t *adj;
	uint64_t *reach;	/* n bitsets: what i reaches through inlinable functions */
	uint64_t *rev;		/* n bitsets: who reaches i */
	uint64_t *reach_a;	/* n bitsets: reach, and the addresses those take */
	uint64_t *rev_a;	/* n bitsets: who reach_a's i */
	uint64_t *recur;	/* one bitset: the functions that reach themselves */
};

/* The binary's ranges, as a graph. */
struct ljcg_bin {
	size_t n;
	uint32_t *in_off, *in;	/* callers of i: in[in_off[i] .. in_off[i + 1]) */
	uint32_t *out_off, *out;	/* callees of i */
	uint8_t *in_kind, *out_kind;	/* per in[] and out[] entry: LJCG_EDGE_* */
	int32_t *src;		/* a named range's source function, LJCG_UNKNOWN or LJCG_UNNAMED */
	uint64_t *cand;		/* n bitsets (unnamed ranges): candidates */
	uint64_t *up;		/* n bitsets: the candidates and what they reach */
	uint64_t *pre;		/* n bitsets: what reaches the candidates */
	uint64_t *up_a, *pre_a;	/* the same by reach_a */
	uint8_t *wide;		/* too many candidates to constrain others */
};

#define BIT(set, i)	((set)[(i) / 64] >> ((i) % 64) & 1)
#define SETBIT(set, i)	((set)[(i) / 64] |= (uint64_t)1 << ((i) % 64))

/* Free the source graph. */
static void ljcg_src__exit(struct ljcg_src *s)
{
	free(s->name);
	free(s->noinline);
	free(s->off);
	free(s->adj);
	free(s->reach);
	free(s->rev);
	free(s->reach_a);
	free(s->rev_a);
	free(s->recur);
}

/* Free the binary's graph. */
static void ljcg_bin__exit(struct ljcg_bin *b)
{
	free(b->in_off);
	free(b->in);
	free(b->out_off);
	free(b->out);
	free(b->in_kind);
	free(b->out_kind);
	free(b->src);
	free(b->cand);
	free(b->up);
	free(b->pre);
	free(b->up_a);
	free(b->pre_a);
	free(b->wide);
}

/* The reverse of n bitsets fwd into rev. */
static void ljcg_src__invert(const struct ljcg_src *s, const uint64_t *fwd, uint64_t *rev)
{
	size_t i, k;

	for (i = 0; i < s->n; i++) {
		const uint64_t *r = fwd + i * s->w;

		for (k = 0; k < s->w; k++)
			for (uint64_t m = r[k]; m; m &= m - 1)
				SETBIT(rev + (k * 64 + (size_t)__builtin_ctzll(m)) * s->w, i);
	}
}

/* reach[i]: every function i calls, and what those call in turn, except
 * through an LJ_NOINLINE function (its calls stay in its own copy).
 * reach_a[i]: reach[i], and every function whose address i or those
 * inlinable callees take (LJCG_REF), not looking further through it: a
 * function is not inlined where only its address is taken. */
static int ljcg_src__reach(struct ljcg_src *s)
{
	uint32_t *stack = malloc((s->n + 1) * sizeof(*stack));
	size_t i, j;

	if (!stack)
		return -ENOMEM;
	for (i = 0; i < s->n; i++) {
		uint64_t *r = s->reach + i * s->w, *ra = s->reach_a + i * s->w;
		size_t sp = 0;

		stack[sp++] = (uint32_t)i;
		while (sp) {
			uint32_t x = stack[--sp];

			if (x != i && s->noinline[x])
				continue;
			for (j = s->off[x]; j < s->off[x + 1]; j++) {
				uint16_t y = s->adj[j] & ~LJCG_REF;

				if (s->adj[j] & LJCG_REF) {
					SETBIT(ra, y);
					continue;
				}
				if (BIT(r, y))
					continue;
				SETBIT(r, y);
				stack[sp++] = y;	/* each y once, i maybe twice: sp <= n */
			}
		}
		for (j = 0; j < s->w; j++)
			ra[j] |= r[j];
	}
	free(stack);
	ljcg_src__invert(s, s->reach, s->rev);
	ljcg_src__invert(s, s->reach_a, s->rev_a);
	for (i = 0; i < s->n; i++)
		if (BIT(s->reach + i * s->w, i))
			SETBIT(s->recur, i);
	return 0;
}

/* Unpack a source graph. */
static int ljcg_src__init(struct ljcg_src *s, const struct ljcg_data *d)
{
	const char *p = d->names;
	size_t i, nadj = 0;
	int32_t cur = -1;

	memset(s, 0, sizeof(*s));
	s->n = d->nnames;
	s->w = (s->n + 63) / 64;
	s->name = malloc(s->n * sizeof(*s->name));
	s->noinline = calloc(s->n, 1);
	s->off = calloc(s->n + 1, sizeof(*s->off));
	s->adj = malloc((d->ncalls + 1) * sizeof(*s->adj));
	s->reach = calloc(s->n * s->w, sizeof(uint64_t));
	s->rev = calloc(s->n * s->w, sizeof(uint64_t));
	s->reach_a = calloc(s->n * s->w, sizeof(uint64_t));
	s->rev_a = calloc(s->n * s->w, sizeof(uint64_t));
	s->recur = calloc(s->w, sizeof(uint64_t));
	if (!s->name || !s->noinline || !s->off || !s->adj || !s->reach || !s->rev ||
	    !s->reach_a || !s->rev_a || !s->recur)
		return -ENOMEM;
	for (i = 0; i < s->n; i++) {
		s->noinline[i] = *p == '!';
		s->name[i] = p + s->noinline[i];
		p += strlen(p) + 1;
	}
	for (i = 0; i < d->ncalls; i++) {	/* callers ascending, each with its callees */
		uint16_t v = d->calls[i];

		if (v & LJCG_CALLER) {
			v &= ~LJCG_CALLER;
			if (v >= s->n || (cur >= 0 && v <= cur))
				return -EINVAL;
			cur = v;
			continue;
		}
		if (cur < 0 || (v & ~LJCG_REF) >= s->n)
			return -EINVAL;
		s->off[cur + 1]++;
		s->adj[nadj++] = v;
	}
	for (i = 0; i < s->n; i++)
		s->off[i + 1] += s->off[i];
	return ljcg_src__reach(s);
}

/* The source function called name, or -1 (names are sorted, as strcmp). */
static int32_t ljcg_src__find(const struct ljcg_src *s, const char *name)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->name[mid], name);

		if (!c)
			return (int32_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* CSR lists of edges by one end (end 0: from, 1: to), the other end kept,
 * and each edge's kind beside it (LJCG_EDGE_JUMP without kind). */
static int ljcg_bin__csr(size_t n, const uint32_t *edges, const uint8_t *kind, size_t nedges,
			 int end, uint32_t **off_out, uint32_t **v_out, uint8_t **flags_out)
{
	uint32_t *off = calloc(n + 2, sizeof(*off)), *v = malloc((nedges + 1) * sizeof(*v));
	uint8_t *fl = malloc(nedges + 1);
	size_t i;

	*off_out = off;
	*v_out = v;
	*flags_out = fl;
	if (!off || !v || !fl)
		return -ENOMEM;
	for (i = 0; i < nedges; i++)
		off[edges[2 * i + end] + 2]++;
	for (i = 0; i < n; i++)
		off[i + 2] += off[i + 1];
	for (i = 0; i < nedges; i++) {
		uint32_t at = off[edges[2 * i + end] + 1]++;

		v[at] = edges[2 * i + !end];
		fl[at] = kind ? kind[i] : LJCG_EDGE_JUMP;
	}
	return 0;	/* off[i] .. off[i + 1] now delimit i's list */
}

/* up (what our candidates reach, and themselves) and pre (who reaches
 * them) of range u, from its candidates; none (wide) for
 * more than LJCG_DERIVE_MAX candidates: their union would constrain little,
 * and leaving a constraint out only leaves more candidates. */
static void ljcg__derive(const struct ljcg_src *s, struct ljcg_bin *b, size_t u)
{
	const uint64_t *c = b->cand + u * s->w;
	uint64_t *up = b->up + u * s->w, *pre = b->pre + u * s->w;
	uint64_t *up_a = b->up_a + u * s->w, *pre_a = b->pre_a + u * s->w;
	size_t k, count = 0;

	for (k = 0; k < s->w; k++)
		count += (size_t)__builtin_popcountll(c[k]);
	b->wide[u] = count > LJCG_DERIVE_MAX;
	if (b->wide[u])
		return;
	memcpy(up, c, s->w * sizeof(uint64_t));
	memcpy(up_a, c, s->w * sizeof(uint64_t));
	memset(pre, 0, s->w * sizeof(uint64_t));
	memset(pre_a, 0, s->w * sizeof(uint64_t));
	for (k = 0; k < s->w; k++) {
		uint64_t m = c[k];

		while (m) {
			size_t i = k * 64 + (size_t)__builtin_ctzll(m), j;

			m &= m - 1;
			for (j = 0; j < s->w; j++) {
				up[j] |= s->reach[i * s->w + j];
				pre[j] |= s->rev[i * s->w + j];
				up_a[j] |= s->reach_a[i * s->w + j];
				pre_a[j] |= s->rev_a[i * s->w + j];
			}
		}
	}
}

/* t &= m | {bit}. */
static void ljcg__and(uint64_t *t, const uint64_t *m, int32_t bit, size_t w)
{
	uint64_t keep = bit >= 0 ? t[bit / 64] & (uint64_t)1 << (bit % 64) : 0;
	size_t k;

	for (k = 0; k < w; k++)
		t[k] &= m[k];
	if (bit >= 0)
		t[bit / 64] |= keep;
}

/* t &= pre | (cand & mask), mask NULL for every function. */
static void ljcg__and_pre(uint64_t *t, const uint64_t *pre, const uint64_t *cand,
			  const uint64_t *mask, size_t w)
{
	size_t k;

	for (k = 0; k < w; k++)
		t[k] &= pre[k] | (cand[k] & (mask ? mask[k] : ~(uint64_t)0));
}

/* One range's constraints into t (a copy of its candidates).  Range u may
 * be a piece of a caller (a .part it calls, a .cold it jumps to), so a
 * caller stays a candidate; a piece of a callee holds the callee's own
 * code, which calls the callee only if it is recursive, so a callee that
 * u reaches only by call instructions stays one only then.  An edge made
 * only of address references (LJCG_EDGE_ADDR) is checked by reach_a and
 * keeps its other end a candidate.  A range that calls its own first
 * address is a function that reaches itself (a piece of P that calls
 * itself holds a recursive call of P's). */
static void ljcg__constrain(const struct ljcg_src *s, const struct ljcg_bin *b, size_t u,
			    size_t vm, uint64_t *t)
{
	size_t j;

	for (j = b->in_off[u]; j < b->in_off[u + 1]; j++) {
		uint32_t p = b->in[j];
		int addr = b->in_kind[j] == LJCG_EDGE_ADDR;

		if (p == u || p == vm)
			continue;
		if (b->src[p] >= 0)
			ljcg__and(t, (addr ? s->reach_a : s->reach) + (size_t)b->src[p] * s->w,
				  b->src[p], s->w);
		else if (b->src[p] == LJCG_UNNAMED && !b->wide[p])
			ljcg__and(t, (addr ? b->up_a : b->up) + (size_t)p * s->w, -1, s->w);
	}
	for (j = b->out_off[u]; j < b->out_off[u + 1]; j++) {
		uint32_t v = b->out[j];
		int addr = b->out_kind[j] == LJCG_EDGE_ADDR;
		int jump = (b->out_kind[j] & LJCG_EDGE_JUMP) || addr;

		if (v == u && (b->out_kind[j] & LJCG_EDGE_CALL))
			ljcg__and(t, s->recur, -1, s->w);	/* calls itself */
		if (v == u || v == vm)
			continue;
		if (b->src[v] >= 0)
			ljcg__and(t, (addr ? s->rev_a : s->rev) + (size_t)b->src[v] * s->w,
				  jump || BIT(s->recur, b->src[v]) ? b->src[v] : -1, s->w);
		else if (b->src[v] == LJCG_UNNAMED && !b->wide[v])
			ljcg__and_pre(t, (addr ? b->pre_a : b->pre) + (size_t)v * s->w,
				      b->cand + (size_t)v * s->w, jump ? NULL : s->recur, s->w);
	}
}

/* The binary's graph, its named ranges looked up, every candidate set
 * full. */
static int ljcg_bin__init(struct ljcg_bin *b, const struct ljcg_src *s, const char **names,
			  size_t n, size_t vm, const uint32_t *edges, const uint8_t *kind,
			  size_t nedges)
{
	size_t i, k;
	int err;

	memset(b, 0, sizeof(*b));
	b->n = n;
	for (i = 0; i < 2 * nedges; i++)
		if (edges[i] >= n)
			return -EINVAL;
	if ((err = ljcg_bin__csr(n, edges, kind, nedges, 1, &b->in_off, &b->in,
				 &b->in_kind)) != 0 ||
	    (err = ljcg_bin__csr(n, edges, kind, nedges, 0, &b->out_off, &b->out,
				 &b->out_kind)) != 0)
		return err;
	b->src = malloc(n * sizeof(*b->src));
	b->wide = malloc(n);
	b->cand = malloc(n * s->w * sizeof(uint64_t));
	b->up = malloc(n * s->w * sizeof(uint64_t));
	b->pre = malloc(n * s->w * sizeof(uint64_t));
	b->up_a = malloc(n * s->w * sizeof(uint64_t));
	b->pre_a = malloc(n * s->w * sizeof(uint64_t));
	if (!b->src || !b->wide || !b->cand || !b->up || !b->pre || !b->up_a || !b->pre_a)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint64_t *c = b->cand + i * s->w;

		b->src[i] = names[i] ? ljcg_src__find(s, names[i]) :
			    i == vm ? LJCG_UNKNOWN : LJCG_UNNAMED;
		b->wide[i] = 1;
		for (k = 0; k < s->w; k++)
			c[k] = ~(uint64_t)0;
		if (s->n % 64)
			c[s->w - 1] = ((uint64_t)1 << (s->n % 64)) - 1;
	}
	return 0;
}

/* The calls between named ranges fit the graph: each callee is reachable
 * from its caller.  A source that the IR call table cannot tell from ours
 * (another release with the same list) fails here, before a function it
 * has and ours lacks could be given a name of ours.  0 or -ENOENT. */
static int ljcg__fits(const struct ljcg_src *s, const struct ljcg_bin *b)
{
	size_t u, j;

	for (u = 0; u < b->n; u++) {
		if (b->src[u] < 0)
			continue;
		for (j = b->out_off[u]; j < b->out_off[u + 1]; j++) {
			int32_t v = b->src[b->out[j]];

			if (v < 0 || v == b->src[u])
				continue;
			if (!BIT((b->out_kind[j] == LJCG_EDGE_ADDR ? s->reach_a : s->reach) +
				 (size_t)b->src[u] * s->w, v)) {
				return -ENOENT;
			}
		}
	}
	return 0;
}

/* Apply the constraints until nothing changes: 0, or -ENOENT when a range
 * is left with no candidate. */
static int ljcg__settle(const struct ljcg_src *s, struct ljcg_bin *b, size_t vm)
{
	uint64_t *t = malloc(s->w * sizeof(*t));
	size_t pass, u, k;
	int changed = 1, err = 0;

	if (!t)
		return -ENOMEM;
	for (pass = 0; changed && pass < LJCG_MAX_PASSES && !err; pass++) {
		changed = 0;
		for (u = 0; u < b->n && !err; u++) {
			uint64_t *c = b->cand + u * s->w, any = 0;

			if (b->src[u] != LJCG_UNNAMED)
				continue;
			memcpy(t, c, s->w * sizeof(*t));
			ljcg__constrain(s, b, u, vm, t);
			if (!memcmp(t, c, s->w * sizeof(*t)))
				continue;
			for (k = 0; k < s->w; k++)
				any |= t[k];
			if (!any) {
				err = -ENOENT;	/* the graph does not describe this build */
			}
			memcpy(c, t, s->w * sizeof(*t));
			ljcg__derive(s, b, u);
			changed = 1;
		}
	}
	free(t);
	return err;
}

/* The one candidate of range u, or -1. */
static int32_t ljcg__single(const struct ljcg_src *s, const struct ljcg_bin *b, size_t u)
{
	const uint64_t *c = b->cand + u * s->w;
	int32_t one = -1;
	size_t k;

	if (b->src[u] != LJCG_UNNAMED)
		return -1;
	for (k = 0; k < s->w; k++) {
		if (!c[k])
			continue;
		if (one >= 0 || (c[k] & (c[k] - 1)))
			return -1;
		one = (int32_t)(k * 64 + (size_t)__builtin_ctzll(c[k]));
	}
	return one;
}

/* The graph of version, or NULL. */
static const struct ljcg_data *ljcg__data(const char *version)
{
	size_t i;

	for (i = 0; version && i < sizeof(ljcg_data) / sizeof(ljcg_data[0]); i++)
		if (!strcmp(version, ljcg_data[i].version))
			return &ljcg_data[i];
	return NULL;
}

int ljnames__callgraph_known(const char *version)
{
	return ljcg__data(version) != NULL;
}

/* Name the ranges; see ljcallgraph.h. */
int ljnames__callgraph(const char *version, const char **names, size_t n, size_t vm,
		       const uint32_t *edges, const uint8_t *kind, size_t nedges, size_t *named)
{
	const struct ljcg_data *d = ljcg__data(version);
	struct ljcg_src s = { 0 };
	struct ljcg_bin b = { 0 };
	uint32_t *users = NULL;	/* per source function: ranges named or pinned to it */
	size_t i;
	int err = -ENOENT;

	*named = 0;
	if (!d || !n)
		goto out;
	if ((err = ljcg_src__init(&s, d)) != 0 ||
	    (err = ljcg_bin__init(&b, &s, names, n, vm, edges, kind, nedges)) != 0 ||
	    (err = ljcg__fits(&s, &b)) != 0 ||
	    (err = ljcg__settle(&s, &b, vm)) != 0)
		goto out;
	err = -ENOMEM;
	if (!(users = calloc(s.n, sizeof(*users))))
		goto out;
	for (i = 0; i < n; i++) {
		int32_t one = b.src[i] >= 0 ? b.src[i] : ljcg__single(&s, &b, i);

		if (one >= 0)
			users[one]++;
	}
	for (i = 0; i < n; i++) {
		int32_t one = ljcg__single(&s, &b, i);

		if (one < 0 || users[one] != 1)
			continue;	/* another range has it: a split-off piece? */
		names[i] = s.name[one];
		(*named)++;
	}
	err = 0;
out:
	free(users);
	ljcg_bin__exit(&b);
	ljcg_src__exit(&s);
	return err;
}
