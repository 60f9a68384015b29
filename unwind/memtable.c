/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memtable.c -- the time-aware memory table (see memtable.h).
 *
 * Entries live in one array in insertion order; each holds its bytes in a
 * buffer of its own, so that memtable_expire.c can free the bytes of
 * entries no later read can use.  Each pid has an index of
 * entry numbers: a prefix sorted by (addr, end, first_ns, gen), cut into
 * runs of one range each (the versions of that range in time order), plus
 * a short unsorted tail of recent additions that lookups scan linearly
 * until it is merged in.  Runs carry a running maximum of their ends, so a
 * lookup walks back from the address only while an earlier run can still
 * reach it, and picks the version of a run by binary search on time: a
 * range read once per sample for a long recording has thousands of
 * versions, a lookup still touches O(log n) of them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/vec.h"
#include "unwind/memtable_int.h"

/* -- Allocation ------------------------------------------------------------ */

/* Allocate a table. */
struct memtable *memtable__new(void)
{
	return calloc(1, sizeof(struct memtable));
}

/* Free a table, its entries and everything it owns. */
void memtable__delete(struct memtable *t)
{
	size_t i, it = 0;
	uint64_t v;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		free((void *)t->ents[i].e.data);
	while (intmap__next(&t->pids, &it, NULL, &v)) {
		struct mt_pid *p = (struct mt_pid *)(uintptr_t)v;

		free(p->idx);
		free(p->first);
		free(p->runs);
		free(p);
	}
	intmap__exit(&t->pids);
	free(t->ents);
	free(t->tmp);
	free(t->memo);
	free(t);
}

/* -- Pids ------------------------------------------------------------------ */

/* The per-pid index of pid, or NULL. */
static struct mt_pid *pid__find(const struct memtable *t, uint32_t pid)
{
	uint64_t v;

	return intmap__get(&t->pids, pid, &v) ? (struct mt_pid *)(uintptr_t)v : NULL;
}

/* The per-pid index of pid, created if missing; NULL when out of memory. */
static struct mt_pid *pid__get(struct memtable *t, uint32_t pid)
{
	struct mt_pid *p;
	uint64_t *v;
	int found = intmap__slot(&t->pids, pid, &v);

	if (found < 0)
		return NULL;
	if (found)
		return (struct mt_pid *)(uintptr_t)*v;
	p = calloc(1, sizeof(*p));
	if (!p) {
		intmap__del(&t->pids, pid);
		return NULL;
	}
	p->pid = pid;
	*v = (uintptr_t)p;
	return p;
}

/* -- Adding ---------------------------------------------------------------- */

/* Check an entry's fields. */
static int ent__valid(const struct memtable_entry *e, const uint8_t *data)
{
	return e && data && e->len > 0 && e->len <= MEMTABLE_MAX_LEN &&
	       e->addr + e->len > e->addr && e->first_ns <= e->last_ns;
}

/* Append entry e (data already placed) to the table and its pid's index. */
static long mt__append(struct memtable *t, const struct memtable_entry *e, const uint8_t *data)
{
	struct mt_pid *p;
	struct mt_ent *ne;
	int err;

	if (t->n >= MT_MAX_ENTS)
		return -E2BIG;
	if ((err = VEC_GROW(t->ents, &t->cap, t->n + 1)) != 0)
		return err;
	p = pid__get(t, e->pid);
	if (!p)
		return -ENOMEM;
	if ((err = VEC_GROW(p->idx, &p->cap, p->n + 1)) != 0)
		return err;
	ne = &t->ents[t->n];
	ne->e = *e;
	ne->e.data = data;
	ne->end = e->addr + e->len;
	p->idx[p->n++] = (uint32_t)t->n;
	p->quiet = 0;
	t->bytes += e->len;
	return (long)t->n++;
}

/* Would __add accept e? */
int memtable__valid(const struct memtable_entry *e)
{
	return ent__valid(e, e ? e->data : NULL);
}

/* Add an entry, copying its bytes. */
long memtable__add(struct memtable *t, const struct memtable_entry *e)
{
	uint8_t *data;
	long ret;

	if (!t || !e || !ent__valid(e, e->data))
		return -EINVAL;
	data = malloc(e->len);
	if (!data)
		return -ENOMEM;
	memcpy(data, e->data, e->len);
	ret = mt__append(t, e, data);
	if (ret < 0)
		free(data);
	return ret;
}

/* Add an entry, taking ownership of data. */
long memtable__add_owned(struct memtable *t, const struct memtable_entry *e, uint8_t *data)
{
	if (!t || !e || !ent__valid(e, data))
		return -EINVAL;
	return mt__append(t, e, data);
}

/* Number of entries. */
size_t memtable__count(const struct memtable *t)
{
	return t ? t->n : 0;
}

/* Bytes of entry data. */
uint64_t memtable__bytes(const struct memtable *t)
{
	return t ? t->bytes : 0;
}

/* Entry i in insertion order. */
const struct memtable_entry *memtable__entry(const struct memtable *t, size_t i)
{
	return t && i < t->n ? &t->ents[i].e : NULL;
}

/* -- Index ----------------------------------------------------------------- */

/* qsort_r comparator: entry numbers by (addr, end, first_ns, gen, number). */
static int idx__cmp(const void *a, const void *b, void *ctx)
{
	const struct mt_ent *ents = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct mt_ent *ex = &ents[x], *ey = &ents[y];

	if (ex->e.addr != ey->e.addr)
		return ex->e.addr < ey->e.addr ? -1 : 1;
	if (ex->end != ey->end)
		return ex->end < ey->end ? -1 : 1;
	if (ex->e.first_ns != ey->e.first_ns)
		return ex->e.first_ns < ey->e.first_ns ? -1 : 1;
	if (ex->e.gen != ey->e.gen)
		return ex->e.gen < ey->e.gen ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Cut the sorted index of p into runs (memtable_int.h). */
int mt_pid__runs(struct memtable *t, struct mt_pid *p)
{
	size_t i, nr = 0;
	uint64_t maxend = 0, *nf = p->cap ? realloc(p->first, p->cap * sizeof(*nf)) : p->first;

	if (p->cap && !nf)
		return -ENOMEM;
	p->first = nf;
	for (i = 0; i < p->n; i++) {
		const struct mt_ent *me = &t->ents[p->idx[i]];
		struct mt_run *r = nr ? &p->runs[nr - 1] : NULL;

		p->first[i] = me->e.first_ns;
		if (r && r->addr == me->e.addr && r->end == me->end) {
			const struct mt_ent *prev = &t->ents[p->idx[i - 1]];

			/* Sorted by first_ns: disjoint windows leave a gap to the next. */
			if (prev->e.last_ns >= me->e.first_ns)
				r->overlap = 1;
			r->n++;
			continue;
		}
		if (VEC_GROW(p->runs, &p->runcap, nr + 1) != 0)
			return -ENOMEM;
		r = &p->runs[nr++];
		r->addr = me->e.addr;
		r->end = me->end;
		r->start = (uint32_t)i;
		r->n = 1;
		r->overlap = 0;
	}
	/* Running maximum of ends, in run order. */
	for (i = 0; i < nr; i++) {
		if (p->runs[i].end > maxend)
			maxend = p->runs[i].end;
		p->runs[i].maxend = maxend;
	}
	p->nruns = nr;
	p->runs_gen++;
	return 0;
}

/* Merge the unsorted tail of p into its sorted prefix and recut the runs
 * (memtable_int.h).  On -ENOMEM entries stay in, or fall back to, the
 * tail, which lookups scan linearly: slower, never wrong. */
int mt_pid__merge(struct memtable *t, struct mt_pid *p)
{
	size_t i = 0, j, k = 0, m = p->nsorted;

	if (p->nsorted == p->n)
		return 0;
	if (VEC_GROW(t->tmp, &t->tmpcap, p->n) != 0)
		return -ENOMEM;
	qsort_r(p->idx + m, p->n - m, sizeof(*p->idx), idx__cmp, t->ents);
	for (j = m; i < m || j < p->n;) {
		if (j >= p->n || (i < m && idx__cmp(&p->idx[i], &p->idx[j], t->ents) <= 0))
			t->tmp[k++] = p->idx[i++];
		else
			t->tmp[k++] = p->idx[j++];
	}
	memcpy(p->idx, t->tmp, p->n * sizeof(*p->idx));
	p->nsorted = p->n;
	if (mt_pid__runs(t, p)) {
		p->nsorted = 0;		/* every entry becomes tail again */
		p->nruns = 0;
		p->runs_gen++;
		return -ENOMEM;
	}
	return 0;
}

/* -- Lookup ---------------------------------------------------------------- */

/* Rank of an entry at time t (larger is better, 0 = may not answer) and
 * its two tie-break keys (larger is better). */
static int ent__rank(const struct memtable_entry *e, uint64_t t, uint64_t slack, uint64_t *k1,
		     uint64_t *k2)
{
	if (e->first_ns <= t && t <= e->last_ns) {
		*k1 = e->gen;
		*k2 = e->first_ns;
		return 3;
	}
	if (e->first_ns <= t) {
		*k1 = e->first_ns;
		*k2 = e->gen;
		return 2;
	}
	if (e->first_ns - t <= slack) {
		*k1 = UINT64_MAX - e->first_ns;	/* earliest first */
		*k2 = e->gen;
		return 1;
	}
	return 0;
}

/* A ranked entry. */
struct best {
	const struct mt_ent *me;
	int rank;
	uint64_t k1, k2;
};

/* Is (rank, k1, k2) strictly better than b? */
static int best__beats(const struct best *b, int rank, uint64_t k1, uint64_t k2)
{
	if (!b->me || rank != b->rank)
		return !b->me || rank > b->rank;
	if (k1 != b->k1)
		return k1 > b->k1;
	return k2 > b->k2;
}

/* Keep me in b if it ranks better at time t. */
static void best__offer(struct best *b, const struct mt_ent *me, uint64_t t, uint64_t slack)
{
	uint64_t k1, k2;
	int rank = ent__rank(&me->e, t, slack, &k1, &k2);

	if (rank && best__beats(b, rank, k1, k2))
		*b = (struct best){ me, rank, k1, k2 };
}

/* Lookup state: the range, the time, the answer so far, the best of all. */
struct look {
	uint64_t addr, end, time_ns, slack;
	struct best all, cov;
	int pass, conflict;
	size_t nranges;			/* pass 0: sorted runs overlapping the read, */
	uint32_t run[MT_MEMO_K];	/* the first of them, in order */
	int tail_hit;			/* an entry of the unsorted tail overlaps the read */
};

/* The times around t at which the version a run answers, and its rank,
 * stay what they are at t: [*lo, *hi].  One run's versions have disjoint
 * windows (run__best), so with lo versions first seen at or before t:
 * inside the last one's window it answers at rank 3, after it at rank 2
 * until the next one is first seen; before the first one, rank 1 within
 * the slack, and no answer earlier. */
static void run__span(const struct memtable *t, const struct mt_pid *p, const struct mt_run *r,
		      size_t lo, uint64_t time_ns, uint64_t slack, uint64_t *slo, uint64_t *shi)
{
	const uint32_t *v = p->idx + r->start;
	const struct memtable_entry *e;
	uint64_t next;

	if (lo == 0) {
		e = &t->ents[v[0]].e;	/* time_ns < e->first_ns */
		if (e->first_ns - time_ns <= slack) {
			*slo = e->first_ns > slack ? e->first_ns - slack : 0;
			*shi = e->first_ns - 1;
		} else {
			*slo = 0;
			*shi = e->first_ns - slack - 1;
		}
		return;
	}
	e = &t->ents[v[lo - 1]].e;	/* e->first_ns <= time_ns */
	next = lo < r->n ? p->first[r->start + lo] : UINT64_MAX;
	if (time_ns <= e->last_ns) {
		*slo = e->first_ns;
		*shi = e->last_ns;
	} else {
		*slo = e->last_ns + 1;
		*shi = next - 1;
	}
}

/* The version of a run that answers at time t (see memtable.h), or none;
 * with span, also the times that answer the same at the same rank
 * (run__span; for a run whose windows overlap, t alone). */
static struct best run__best(const struct memtable *t, const struct mt_pid *p,
			     const struct mt_run *r, uint64_t time_ns, uint64_t slack,
			     uint32_t *hint, uint64_t span[2])
{
	const uint32_t *v = p->idx + r->start;
	const uint64_t *first = p->first + r->start;
	struct best b = { 0 };
	size_t lo = 0, hi = r->n, i;

	if (r->overlap) {
		for (i = 0; i < r->n; i++)
			best__offer(&b, &t->ents[v[i]], time_ns, slack);
		if (span)
			span[0] = span[1] = time_ns;
		return b;
	}
	/* Disjoint windows: the last version first seen at or before t is the
	 * only one that can contain t and the latest of rank 2; without one,
	 * the first version is the earliest of rank 1.  Samples come in time
	 * order, mostly: where the last search for this run ended (*hint: lo)
	 * is checked first. */
	if (hint && *hint <= r->n && (*hint == 0 || first[*hint - 1] <= time_ns) &&
	    (*hint == r->n || first[*hint] > time_ns))
		lo = *hint;
	else while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (first[mid] <= time_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (hint)
		*hint = (uint32_t)lo;
	best__offer(&b, &t->ents[v[lo ? lo - 1 : 0]], time_ns, slack);
	if (span)
		run__span(t, p, r, lo, time_ns, slack, &span[0], &span[1]);
	return b;
}

/* Consider the answer b of one range (a run, or a tail entry).  Pass 0
 * finds the overall best and the best covering answer; pass 1 checks every
 * other answer ranked above the covering one for different bytes. */
static void look__range(struct look *lk, const struct best *b)
{
	const struct mt_ent *me = b->me, *cov = lk->cov.me;
	uint64_t lo, hi;

	if (!me)
		return;
	if (lk->pass == 0) {
		if (best__beats(&lk->all, b->rank, b->k1, b->k2))
			lk->all = *b;
		if (me->e.addr <= lk->addr && me->end >= lk->end &&
		    best__beats(&lk->cov, b->rank, b->k1, b->k2))
			lk->cov = *b;
		return;
	}
	if (lk->conflict || me == cov || !best__beats(&lk->cov, b->rank, b->k1, b->k2))
		return;
	lo = me->e.addr > lk->addr ? me->e.addr : lk->addr;
	hi = me->end < lk->end ? me->end : lk->end;
	if (lo < hi && memcmp(me->e.data + (lo - me->e.addr), cov->e.data + (lo - cov->e.addr),
			      hi - lo))
		lk->conflict = 1;
}

/* Offer the tail versions of range [addr, end) to b. */
static void tail__offer(const struct memtable *t, const struct mt_pid *p, uint64_t addr,
			uint64_t end, struct best *b, uint64_t time_ns, uint64_t slack)
{
	size_t i;

	for (i = p->nsorted; i < p->n; i++) {
		const struct mt_ent *me = &t->ents[p->idx[i]];

		if (me->e.addr == addr && me->end == end)
			best__offer(b, me, time_ns, slack);
	}
}

/* Is there a sorted run for range [addr, end)? */
static int run__exists(const struct mt_pid *p, uint64_t addr, uint64_t end)
{
	size_t lo = 0, hi = p->nruns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct mt_run *r = &p->runs[mid];

		if (r->addr < addr || (r->addr == addr && r->end < end))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nruns && p->runs[lo].addr == addr && p->runs[lo].end == end;
}

/* Run one pass of a lookup over the ranges of p that overlap the read:
 * each range's answer over its sorted versions and its tail versions. */
static void look__pass(const struct memtable *t, const struct mt_pid *p, struct look *lk)
{
	size_t lo = 0, hi = p->nruns, i;
	int tail = p->nsorted < p->n;

	/* First run that starts at or after the end of the read. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->runs[mid].addr < lk->end)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Runs before lo start below the end; go back while one can reach addr. */
	for (i = lo; i > 0 && p->runs[i - 1].maxend > lk->addr; i--) {
		const struct mt_run *r = &p->runs[i - 1];
		struct best b;

		if (r->end <= lk->addr)
			continue;
		if (lk->nranges < MT_MEMO_K)
			lk->run[lk->nranges] = (uint32_t)(i - 1);
		lk->nranges++;
		b = run__best(t, p, r, lk->time_ns, lk->slack, NULL, NULL);
		if (tail)
			tail__offer(t, p, r->addr, r->end, &b, lk->time_ns, lk->slack);
		look__range(lk, &b);
	}
	/* Ranges seen only in the tail: once each, through their best version. */
	for (i = p->nsorted; i < p->n; i++) {
		const struct mt_ent *me = &t->ents[p->idx[i]];
		struct best b = { 0 };

		if (me->e.addr >= lk->end || me->end <= lk->addr)
			continue;
		lk->tail_hit = 1;
		if (run__exists(p, me->e.addr, me->end))
			continue;
		tail__offer(t, p, me->e.addr, me->end, &b, lk->time_ns, lk->slack);
		if (b.me == me)
			look__range(lk, &b);
	}
}

/* The memo slot of a read. */
static struct mt_memo *memo__slot(struct memtable *t, uint32_t pid, uint64_t addr, uint64_t len)
{
	uint64_t h = (addr ^ (addr >> 13) ^ (len << 7) ^ ((uint64_t)pid << 3)) * 0x9e3779b97f4a7c15ull;

	if (!t->memo && !(t->memo = calloc(MT_MEMO, sizeof(*t->memo))))
		return NULL;
	return &t->memo[h >> 52 & (MT_MEMO - 1)];
}

/* Remember the runs a lookup considered (see struct mt_memo). */
static void memo__fill(struct memtable *t, struct mt_pid *p, const struct look *lk,
		       struct mt_memo *m, uint32_t pid)
{
	if (!m || lk->tail_hit || lk->nranges > MT_MEMO_K)
		return;
	memcpy(m->run, lk->run, lk->nranges * sizeof(m->run[0]));
	memset(m->pos, 0, sizeof(m->pos));
	m->have_out = 0;
	m->n = (uint32_t)lk->nranges;
	m->addr = lk->addr;
	m->len = lk->end - lk->addr;
	m->pid = pid;
	m->p = p;
	m->runs_gen = p->runs_gen;
	m->nents = t->n;
	m->filled = 1;
}

/* Is a memo still what a lookup of its read would consider: the same runs,
 * and no entry added since it was last checked overlapping the read?  (It
 * is then checked up to now.) */
static int memo__current(const struct memtable *t, struct mt_memo *m)
{
	uint64_t end = m->addr + m->len;
	size_t i;

	if (m->runs_gen != m->p->runs_gen || m->nents > t->n || t->n - m->nents > MT_MEMO_NEW)
		return 0;
	for (i = m->nents; i < t->n; i++) {
		const struct mt_ent *me = &t->ents[i];

		if (me->e.pid == m->pid && me->e.addr < end && me->end > m->addr)
			return 0;
	}
	m->nents = t->n;
	return 1;
}

/* A lookup through a current memo: each remembered run's answer at the
 * lookup's time, then the two passes of look__pass over those (unless they
 * are the answers of the last outcome).  The last outcome also holds at
 * every time at which each run answers the same at the same rank (the
 * memo's span): such a lookup takes it without asking the runs. */
static const struct memtable_entry *memo__lookup(const struct memtable *t, struct mt_memo *m,
						 struct look *lk)
{
	const struct mt_pid *p = m->p;
	struct best b[MT_MEMO_K];
	const struct mt_ent *cov;
	uint64_t span[2], lo = 0, hi = UINT64_MAX;
	uint32_t i, a;
	int same = m->have_out;

	if (same && m->span_lo <= lk->time_ns && lk->time_ns <= m->span_hi &&
	    m->span_slack == lk->slack)
		goto out;
	for (i = 0; i < m->n; i++) {
		b[i] = run__best(t, p, &p->runs[m->run[i]], lk->time_ns, lk->slack, &m->pos[i],
				 span);
		lo = span[0] > lo ? span[0] : lo;
		hi = span[1] < hi ? span[1] : hi;
		a = b[i].me ? (uint32_t)(b[i].me - t->ents) : UINT32_MAX;
		same &= a == m->ans[i] && (uint8_t)b[i].rank == m->rank[i];
		m->ans[i] = a;
		m->rank[i] = (uint8_t)b[i].rank;
	}
	if (!same) {
		memset(&lk->all, 0, sizeof(lk->all));
		memset(&lk->cov, 0, sizeof(lk->cov));
		for (i = 0; i < m->n; i++)
			look__range(lk, &b[i]);
		/* Answers of other ranges ranked above ours must agree on the bytes. */
		if (lk->cov.me && lk->all.me != lk->cov.me) {
			lk->pass = 1;
			for (i = 0; i < m->n; i++)
				look__range(lk, &b[i]);
		}
		cov = lk->cov.me && !lk->conflict ? lk->cov.me : NULL;
		m->out = cov ? (uint32_t)(cov - t->ents) : UINT32_MAX;
		m->have_out = 1;
	}
	m->span_lo = lo;
	m->span_hi = hi;
	m->span_slack = lk->slack;
out:
	return m->out == UINT32_MAX ? NULL : &t->ents[m->out].e;
}

/* The entry that answers a read (see memtable.h). */
const struct memtable_entry *memtable__lookup(struct memtable *t, uint32_t pid, uint64_t addr,
					      uint64_t len, uint64_t time_ns)
{
	struct look lk;
	struct mt_pid *p;
	struct mt_memo *m;

	if (!t || len == 0 || addr + len < addr)
		return NULL;
	m = memo__slot(t, pid, addr, len);
	if (m && m->filled && m->addr == addr && m->len == len && m->pid == pid &&
	    memo__current(t, m)) {
		lk.addr = addr;
		lk.end = addr + len;
		lk.time_ns = time_ns;
		lk.slack = t->slack_ns;
		lk.pass = lk.conflict = 0;
		return memo__lookup(t, m, &lk);
	}
	p = pid__find(t, pid);
	if (!p || p->n == 0)
		return NULL;
	if (p->n > p->nsorted &&
	    (p->n - p->nsorted > MT_PENDING_MAX || ++p->quiet > MT_QUIET_READS))
		mt_pid__merge(t, p);	/* on failure the tail is scanned linearly */
	memset(&lk, 0, sizeof(lk));
	lk.addr = addr;
	lk.end = addr + len;
	lk.time_ns = time_ns;
	lk.slack = t->slack_ns;
	look__pass(t, p, &lk);
	memo__fill(t, p, &lk, m, pid);
	if (!lk.cov.me)
		return NULL;
	/* Answers of other ranges ranked above ours must agree on the bytes. */
	if (lk.all.me != lk.cov.me) {
		lk.pass = 1;
		look__pass(t, p, &lk);
		if (lk.conflict)
			return NULL;
	}
	return &lk.cov.me->e;
}

/* Set the slack for reads before every window (see memtable.h). */
void memtable__set_slack(struct memtable *t, uint64_t slack_ns)
{
	if (t)
		t->slack_ns = slack_ns;
}

/* Copy of a lookup. */
int memtable__read(struct memtable *t, uint32_t pid, uint64_t addr, void *buf, size_t len,
		   uint64_t time_ns)
{
	const struct memtable_entry *e;

	if (len == 0)
		return 0;
	if (!buf)
		return -EFAULT;
	e = memtable__lookup(t, pid, addr, len, time_ns);
	if (!e)
		return -EFAULT;
	memcpy(buf, e->data + (addr - e->addr), len);
	return 0;
}

/* -- Memory source ----------------------------------------------------------- */

/* memsrc read callback: the table at the bound pid and time.  A walk reads
 * the same fields again and again (a recursion reads one function object
 * per level): answers are remembered, the table being fixed during a walk. */
static int src__read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	struct memtable_src *src = ms->ctx;
	const struct memtable_entry *e;
	size_t slot = (size_t)((addr ^ (addr >> 7) ^ len) % MEMTABLE_SRC_CACHE);

	if (!src || !src->t || !buf)
		return -EFAULT;
	if (len == 0)
		return 0;
	if (src->cache[slot].len == len && src->cache[slot].addr == addr) {
		e = src->cache[slot].e;
	} else {
		e = memtable__lookup(src->t, src->pid, addr, len, src->time_ns);
		src->cache[slot].addr = addr;
		src->cache[slot].len = len;
		src->cache[slot].e = e;
	}
	if (!e) {
		src->misses++;
		return -EFAULT;
	}
	memsrc__copy(buf, e->data + (addr - e->addr), len);
	src->hits++;
	return 0;
}

/* Bind a memory source to the table, one pid and one sample time. */
void memtable__memsrc(struct memtable_src *src, struct memtable *t, uint32_t pid,
		      uint64_t time_ns, const struct memsrc *next)
{
	memset(src, 0, sizeof(*src));
	src->ms.read = src__read;
	src->ms.ctx = src;
	src->ms.next = next;
	src->t = t;
	src->pid = pid;
	src->time_ns = time_ns;
}
