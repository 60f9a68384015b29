/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_memtable.c -- the time-aware memory table.
 *
 * Ground truth: hand-built scenarios with the expected bytes spelled out
 * (two generations at one address, reads inside, between and after their
 * windows, partial coverage, conflicting overlaps, many pids), and a
 * brute-force oracle that applies the rules of memtable.h literally to
 * every entry, compared with the indexed table on random tables while
 * entries are added between lookups.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unwind/memtable.h"
#include "unwind/memtable_int.h"
#include "tests/unit/check.h"

int failures, checks;

/* Add an entry of len bytes all equal to fill. */
static long add_fill(struct memtable *t, uint32_t pid, uint64_t addr, uint32_t len, int fill,
		     uint64_t first, uint64_t last, uint64_t gen)
{
	uint8_t buf[4096];
	struct memtable_entry e = { pid, len, addr, buf, first, last, gen };

	memset(buf, fill, len);
	return memtable__add(t, &e);
}

/* Read len bytes; returns the fill byte if all are equal, -1 on failure,
 * -2 on mixed bytes. */
static int read_fill(struct memtable *t, uint32_t pid, uint64_t addr, size_t len, uint64_t time)
{
	uint8_t buf[4096];
	size_t i;

	memset(buf, 0xee, sizeof(buf));
	if (memtable__read(t, pid, addr, buf, len, time))
		return -1;
	for (i = 1; i < len; i++)
		if (buf[i] != buf[0])
			return -2;
	return buf[0];
}

/* Two generations of one range (a proto freed, another allocated there). */
static void test_generations(void)
{
	struct memtable *t = memtable__new();

	CHECK(add_fill(t, 1, 0x1000, 64, 'A', 100, 200, 1) == 0);
	CHECK(add_fill(t, 1, 0x1000, 64, 'B', 300, 400, 2) == 1);
	CHECK(read_fill(t, 1, 0x1000, 64, 100) == 'A');	/* window edges */
	CHECK(read_fill(t, 1, 0x1000, 64, 150) == 'A');
	CHECK(read_fill(t, 1, 0x1000, 64, 200) == 'A');
	CHECK(read_fill(t, 1, 0x1000, 64, 250) == 'A');	/* between: latest before */
	CHECK(read_fill(t, 1, 0x1000, 64, 300) == 'B');
	CHECK(read_fill(t, 1, 0x1010, 8, 350) == 'B');	/* inside the range */
	CHECK(read_fill(t, 1, 0x1000, 64, 10000) == 'B');	/* after every window */
	CHECK(read_fill(t, 1, 0x1000, 64, 99) == -1);	/* before every window */
	CHECK(read_fill(t, 1, 0x1000, 64, 0) == -1);
	/* The slack lets a slightly later first sighting answer. */
	memtable__set_slack(t, 50);
	CHECK(read_fill(t, 1, 0x1000, 64, 50) == 'A');
	CHECK(read_fill(t, 1, 0x1000, 64, 49) == -1);
	memtable__set_slack(t, 0);
	CHECK(read_fill(t, 1, 0x1000, 64, 50) == -1);
	/* Wrong pid, wrong address. */
	CHECK(read_fill(t, 2, 0x1000, 64, 150) == -1);
	CHECK(read_fill(t, 1, 0x2000, 8, 150) == -1);
	CHECK(memtable__count(t) == 2 && memtable__bytes(t) == 128);
	memtable__delete(t);
}

/* Point windows, as the recorder writes them: content A, B, then A again. */
static void test_point_windows(void)
{
	struct memtable *t = memtable__new();

	/* Added out of time order on purpose. */
	CHECK(add_fill(t, 7, 0x5000, 16, 'B', 20, 20, 2) >= 0);
	CHECK(add_fill(t, 7, 0x5000, 16, 'A', 10, 10, 1) >= 0);
	CHECK(add_fill(t, 7, 0x5000, 16, 'a', 30, 30, 3) >= 0);
	CHECK(read_fill(t, 7, 0x5000, 16, 10) == 'A');
	CHECK(read_fill(t, 7, 0x5000, 16, 19) == 'A');
	CHECK(read_fill(t, 7, 0x5000, 16, 20) == 'B');
	CHECK(read_fill(t, 7, 0x5000, 16, 29) == 'B');
	CHECK(read_fill(t, 7, 0x5000, 16, 30) == 'a');
	CHECK(read_fill(t, 7, 0x5000, 16, 1u << 30) == 'a');
	/* Same first_ns: the highest gen wins. */
	CHECK(add_fill(t, 7, 0x6000, 8, 'x', 50, 50, 4) >= 0);
	CHECK(add_fill(t, 7, 0x6000, 8, 'y', 50, 50, 9) >= 0);
	CHECK(add_fill(t, 7, 0x6000, 8, 'z', 50, 50, 6) >= 0);
	CHECK(read_fill(t, 7, 0x6000, 8, 50) == 'y');
	CHECK(read_fill(t, 7, 0x6000, 8, 60) == 'y');
	memtable__delete(t);
}

/* A window containing t beats a later first sighting before t. */
static void test_containing_wins(void)
{
	struct memtable *t = memtable__new();

	CHECK(add_fill(t, 1, 0x100, 8, 'L', 100, 500, 1) >= 0);
	CHECK(add_fill(t, 1, 0x100, 8, 'S', 300, 300, 2) >= 0);
	CHECK(read_fill(t, 1, 0x100, 8, 400) == 'L');
	CHECK(read_fill(t, 1, 0x100, 8, 300) == 'S');	/* both contain: highest gen */
	CHECK(read_fill(t, 1, 0x100, 8, 600) == 'S');	/* neither: latest first_ns */
	memtable__delete(t);
}

/* A read is answered by one entry covering all of it, or not at all. */
static void test_coverage(void)
{
	struct memtable *t = memtable__new();
	uint8_t buf[64];
	int i;

	CHECK(add_fill(t, 1, 0x1000, 16, 'P', 10, 10, 1) >= 0);
	CHECK(add_fill(t, 1, 0x1010, 16, 'Q', 10, 10, 1) >= 0);
	CHECK(read_fill(t, 1, 0x1000, 16, 10) == 'P');
	CHECK(read_fill(t, 1, 0x1004, 4, 10) == 'P');
	CHECK(read_fill(t, 1, 0x100f, 1, 10) == 'P');
	CHECK(read_fill(t, 1, 0x1010, 1, 10) == 'Q');
	CHECK(read_fill(t, 1, 0x1008, 16, 10) == -1);	/* spans two entries */
	CHECK(read_fill(t, 1, 0x0ff8, 16, 10) == -1);	/* starts before */
	CHECK(read_fill(t, 1, 0x1018, 16, 10) == -1);	/* runs past the end */
	CHECK(read_fill(t, 1, 0x1000, 33, 10) == -1);
	/* A failed read leaves the buffer alone. */
	memset(buf, 0x5a, sizeof(buf));
	CHECK(memtable__read(t, 1, 0x1008, buf, 16, 10) == -EFAULT);
	for (i = 0; i < 64; i++)
		if (buf[i] != 0x5a)
			break;
	CHECK(i == 64);
	CHECK(memtable__read(t, 1, 0x1008, buf, 0, 10) == 0);
	CHECK(memtable__lookup(t, 1, UINT64_MAX - 4, 16, 10) == NULL);	/* wraps */
	memtable__delete(t);
}

/* Overlapping ranges: a newer, different content elsewhere in the read
 * makes an older covering entry unusable; agreeing bytes do not. */
static void test_conflicts(void)
{
	struct memtable *t = memtable__new();
	uint8_t buf[64];

	/* Old object X read whole at t=10, new object Y's header at t=30. */
	CHECK(add_fill(t, 1, 0x8000, 64, 'X', 10, 10, 1) >= 0);
	CHECK(add_fill(t, 1, 0x8000, 16, 'Y', 30, 30, 1) >= 0);
	CHECK(read_fill(t, 1, 0x8000, 64, 20) == 'X');	/* Y not there yet */
	CHECK(read_fill(t, 1, 0x8000, 64, 35) == -1);	/* X is stale by then */
	CHECK(read_fill(t, 1, 0x8000, 16, 35) == 'Y');
	CHECK(read_fill(t, 1, 0x8020, 8, 35) == 'X');	/* Y says nothing there */
	CHECK(read_fill(t, 1, 0x8008, 16, 35) == -1);	/* half inside Y */
	/* Y's whole read at t=40 answers again. */
	CHECK(add_fill(t, 1, 0x8000, 64, 'Y', 40, 40, 2) >= 0);
	CHECK(read_fill(t, 1, 0x8000, 64, 45) == 'Y');
	CHECK(read_fill(t, 1, 0x8000, 64, 35) == -1);
	CHECK(read_fill(t, 1, 0x8000, 16, 45) == 'Y');
	memtable__delete(t);

	/* A newer header with the same bytes: the whole read still answers. */
	t = memtable__new();
	memset(buf, 'S', sizeof(buf));
	buf[40] = 'T';
	{
		struct memtable_entry whole = { 1, 64, 0x9000, buf, 10, 10, 1 };
		struct memtable_entry head = { 1, 16, 0x9000, buf, 30, 30, 1 };

		CHECK(memtable__add(t, &whole) >= 0);
		CHECK(memtable__add(t, &head) >= 0);
	}
	CHECK(memtable__read(t, 1, 0x9000, buf, 64, 35) == 0 && buf[40] == 'T' && buf[0] == 'S');
	memtable__delete(t);
}

/* Many pids with the same addresses never see each other's bytes. */
static void test_many_pids(void)
{
	struct memtable *t = memtable__new();
	uint32_t pid;
	int ok = 1;

	for (pid = 1; pid <= 3000; pid++) {
		if (add_fill(t, pid * 7, 0x40000000, 32, (int)(pid & 0xff), pid, pid, 1) < 0 ||
		    add_fill(t, pid * 7, 0x40000000, 32, (int)((pid + 1) & 0xff), pid + 5000,
			     pid + 5000, 2) < 0)
			ok = 0;
	}
	CHECK(ok);
	for (pid = 1; pid <= 3000; pid++) {
		if (read_fill(t, pid * 7, 0x40000000, 32, pid + 1) != (int)(pid & 0xff) ||
		    read_fill(t, pid * 7, 0x40000000, 32, pid + 6000) != (int)((pid + 1) & 0xff) ||
		    read_fill(t, pid * 7, 0x40000000, 32, pid - 1) != -1 ||
		    read_fill(t, pid * 7 + 1, 0x40000000, 32, pid + 1) != -1)
			ok = 0;
	}
	CHECK(ok);
	CHECK(memtable__count(t) == 6000);
	memtable__delete(t);
}

/* Bad entries are refused; add_owned takes the buffer. */
static void test_add_errors(void)
{
	struct memtable *t = memtable__new();
	uint8_t b[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, *own;
	struct memtable_entry e = { 1, 8, 0x10, b, 5, 6, 1 };

	CHECK(memtable__add(t, &e) == 0);
	e.len = 0;
	CHECK(memtable__add(t, &e) == -EINVAL);
	e.len = 8;
	e.addr = UINT64_MAX - 3;
	CHECK(memtable__add(t, &e) == -EINVAL);
	e.addr = 0x10;
	e.first_ns = 7;
	CHECK(memtable__add(t, &e) == -EINVAL);
	e.first_ns = 5;
	e.data = NULL;
	CHECK(memtable__add(t, &e) == -EINVAL);
	CHECK(memtable__add(NULL, &e) == -EINVAL);
	own = malloc(8);
	memcpy(own, "owned!!!", 8);
	e.addr = 0x20;
	CHECK(memtable__add_owned(t, &e, own) == 1);
	CHECK(read_fill(t, 1, 0x10, 8, 5) == -2);
	{
		uint8_t out[8];

		CHECK(memtable__read(t, 1, 0x20, out, 8, 6) == 0 && !memcmp(out, "owned!!!", 8));
		CHECK(memtable__read(t, 1, 0x10, out, 8, 6) == 0 && !memcmp(out, b, 8));
	}
	CHECK(memtable__entry(t, 1) && memtable__entry(t, 1)->addr == 0x20);
	CHECK(memtable__entry(t, 2) == NULL);
	/* Big entries (own buffer) work like small ones. */
	{
		uint8_t *big = calloc(1, 200000);
		struct memtable_entry be = { 1, 200000, 0x100000, big, 1, 1, 1 };
		uint8_t out[4];

		big[150000] = 0x42;
		CHECK(memtable__add(t, &be) == 2);
		free(big);
		CHECK(memtable__read(t, 1, 0x100000 + 150000, out, 1, 3) == 0 && out[0] == 0x42);
	}
	memtable__delete(t);
	memtable__delete(NULL);
}

/* The memsrc adapter: bound pid and time, chained to a next source. */
static void test_memsrc(void)
{
	struct memtable *t = memtable__new();
	struct memtable_src src;
	struct memsrc next;
	struct memsrc_window w = { 0x7000, 4, (const uint8_t *)"next" };
	struct memsrc_windows ws = { &w, 1 };
	uint8_t out[8];

	CHECK(add_fill(t, 3, 0x3000, 8, 'm', 100, 100, 1) >= 0);
	CHECK(add_fill(t, 3, 0x3000, 8, 'n', 200, 200, 2) >= 0);
	memsrc__init_windows(&next, &ws, NULL);
	memtable__memsrc(&src, t, 3, 150, &next);
	CHECK(memsrc__read(&src.ms, 0x3000, out, 8) == 0 && out[0] == 'm' && out[7] == 'm');
	CHECK(memsrc__read(&src.ms, 0x7000, out, 4) == 0 && !memcmp(out, "next", 4));
	CHECK(memsrc__read(&src.ms, 0x9000, out, 4) == -EFAULT);
	CHECK(src.hits == 1 && src.misses == 2);
	memtable__memsrc(&src, t, 3, 250, NULL);
	CHECK(memsrc__read(&src.ms, 0x3000, out, 8) == 0 && out[0] == 'n');
	memtable__memsrc(&src, t, 4, 250, NULL);
	CHECK(memsrc__read(&src.ms, 0x3000, out, 8) == -EFAULT);
	memtable__delete(t);
}

/* -- Oracle ------------------------------------------------------------------ */

struct oent {
	uint64_t addr, len, first, last, gen;
	uint8_t fill;
	uint32_t pid;			/* test_expire */
};

/* Rank per memtable.h (0 = none); keys larger-is-better. */
static int o_rank(const struct oent *e, uint64_t t, uint64_t slack, uint64_t *k1, uint64_t *k2)
{
	if (e->first <= t && t <= e->last) {
		*k1 = e->gen;
		*k2 = e->first;
		return 3;
	}
	if (e->first <= t) {
		*k1 = e->first;
		*k2 = e->gen;
		return 2;
	}
	if (e->first - t <= slack) {
		*k1 = UINT64_MAX - e->first;
		*k2 = e->gen;
		return 1;
	}
	return 0;
}

/* Is rank a better than rank b? */
static int o_better(int ra, uint64_t a1, uint64_t a2, int rb, uint64_t b1, uint64_t b2)
{
	if (ra != rb)
		return ra > rb;
	if (a1 != b1)
		return a1 > b1;
	return a2 > b2;
}

/* Brute force: index of the entry answering the read, or -1. */
static long oracle(const struct oent *es, size_t n, uint64_t addr, uint64_t len, uint64_t t,
		   uint64_t slack)
{
	long *ans = malloc(n * sizeof(*ans));	/* answer of the range of each entry */
	long cov = -1;
	size_t i, j;
	uint64_t c1 = 0, c2 = 0, k1 = 0, k2 = 0, b1, b2;
	int cr = 0, r, br;

	/* 1. the answer of every range (same addr and len) overlapping the read */
	for (i = 0; i < n; i++) {
		ans[i] = -1;
		if (es[i].addr >= addr + len || es[i].addr + es[i].len <= addr)
			continue;
		br = 0;
		b1 = b2 = 0;
		for (j = 0; j < n; j++) {
			if (es[j].addr != es[i].addr || es[j].len != es[i].len)
				continue;
			r = o_rank(&es[j], t, slack, &k1, &k2);
			if (r && (ans[i] < 0 || o_better(r, k1, k2, br, b1, b2))) {
				ans[i] = (long)j;
				br = r;
				b1 = k1;
				b2 = k2;
			}
		}
	}
	/* 3. the best covering answer */
	for (i = 0; i < n; i++) {
		const struct oent *e;

		if (ans[i] < 0)
			continue;
		e = &es[ans[i]];
		if (e->addr > addr || e->addr + e->len < addr + len)
			continue;
		r = o_rank(e, t, slack, &k1, &k2);
		if (cov < 0 || o_better(r, k1, k2, cr, c1, c2)) {
			cov = ans[i];
			cr = r;
			c1 = k1;
			c2 = k2;
		}
	}
	/* ... unless a better answer elsewhere disagrees (fills differ and
	 * overlap the read, which every considered range does). */
	for (i = 0; cov >= 0 && i < n; i++) {
		const struct oent *e;

		if (ans[i] < 0 || ans[i] == cov)
			continue;
		e = &es[ans[i]];
		r = o_rank(e, t, slack, &k1, &k2);
		if (o_better(r, k1, k2, cr, c1, c2) && e->fill != es[cov].fill)
			cov = -1;
	}
	free(ans);
	return cov;
}

/* Random tables, lookups interleaved with additions, against the oracle. */
static void test_oracle(void)
{
	enum { N = 700, Q = 20000 };
	struct oent *es = calloc(N, sizeof(*es));
	struct memtable *t = memtable__new();
	unsigned seed = 12345;
	size_t n = 0, q, bad = 0, hits = 0;
	uint64_t slack = 0;

	for (q = 0; q < Q; q++) {
		uint64_t addr, len, time;
		const struct memtable_entry *got;
		long want;

		if (n < N && rand_r(&seed) % 3 == 0) {
			struct oent *e = &es[n];

			e->addr = 0x1000 + 8 * (uint64_t)(rand_r(&seed) % 24);
			e->len = 8 * (1 + (uint64_t)(rand_r(&seed) % 6));
			e->first = (uint64_t)(rand_r(&seed) % 1000);
			e->last = e->first + (rand_r(&seed) % 4 ? 0 : (uint64_t)(rand_r(&seed) % 300));
			e->gen = n + 1;		/* unique: no exact ties */
			e->fill = (uint8_t)('a' + rand_r(&seed) % 3);
			if (add_fill(t, 9, e->addr, (uint32_t)e->len, e->fill, e->first, e->last,
				     e->gen) != (long)n)
				bad++;
			n++;
		}
		if (q == Q / 2) {
			slack = 40;
			memtable__set_slack(t, slack);
		}
		addr = 0x1000 + 4 * (uint64_t)(rand_r(&seed) % 56);
		len = 1 + (uint64_t)(rand_r(&seed) % 24);
		time = (uint64_t)(rand_r(&seed) % 1400);
		want = oracle(es, n, addr, len, time, slack);
		got = memtable__lookup(t, 9, addr, len, time);
		if (want < 0 ? got != NULL : got != memtable__entry(t, (size_t)want)) {
			if (bad++ < 1) {
				size_t k;
				fprintf(stderr, "oracle: read 0x%llx+%llu at %llu: want %ld got %p\n",
					(unsigned long long)addr, (unsigned long long)len,
					(unsigned long long)time, want, (const void *)got);
				for (k = 0; k < n; k++)
					if (es[k].addr < addr + len && es[k].addr + es[k].len > addr)
						fprintf(stderr, "  %zu: %llx+%llu [%llu,%llu] g%llu %c\n", k,
							(unsigned long long)es[k].addr, (unsigned long long)es[k].len,
							(unsigned long long)es[k].first, (unsigned long long)es[k].last,
							(unsigned long long)es[k].gen, es[k].fill);
			}
		}
		hits += want >= 0;
	}
	CHECK(bad == 0);
	CHECK(hits > Q / 10 && hits < Q - Q / 10);	/* both outcomes exercised */
	printf("oracle: %zu lookups over up to %zu entries, %zu answered\n", (size_t)Q, n, hits);
	memtable__delete(t);
	free(es);
}

/* Seconds spent on n reads of one range at random times in [0, span). */
static double time_reads(struct memtable *t, uint64_t addr, uint64_t span, uint64_t step,
			 size_t n, size_t *ok)
{
	struct timespec a, b;
	unsigned seed = 7;
	uint8_t buf[64];
	size_t i;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		uint64_t v = (uint64_t)rand_r(&seed) % span;

		if (memtable__read(t, 1, addr, buf, 64, step * v + step / 2) == 0 &&
		    buf[0] == (uint8_t)(v & 0x7f))
			(*ok)++;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

/* One range read once per sample for a long recording has a version per
 * sample: a lookup must cost about the same as for a range of one version
 * (a scan of the versions would be ~100000 times slower). */
static void test_speed(void)
{
	enum { VERS = 100000, READS = 200000 };
	struct memtable *t = memtable__new();
	size_t i, bad = 0, ok_deep = 0, ok_flat = 0;
	double deep, flat;

	for (i = 0; i < VERS; i++)
		if (add_fill(t, 1, 0x10000, 64, (int)(i & 0x7f), 1000 * i, 1000 * i, i + 1) < 0)
			bad++;
	for (i = 0; i < 200; i++)	/* neighbours, one version each */
		if (add_fill(t, 1, 0x20000 + 256 * i, 64, 0, 0, 0, 1) < 0)
			bad++;
	/* The flat range gets a second version, so that its reads take the
	 * search too rather than the memo of time-independent answers. */
	if (add_fill(t, 1, 0x20000 + 256 * 50, 64, 0, 1, 1, 2) < 0)
		bad++;
	CHECK(bad == 0);
	deep = time_reads(t, 0x10000, VERS, 1000, READS, &ok_deep);
	flat = time_reads(t, 0x20000 + 256 * 50, 1, 1000, READS, &ok_flat);
	CHECK(ok_deep == READS && ok_flat == READS);
	printf("speed: %d reads of a range with %d versions in %.3f s, of a range with two "
	       "versions in %.3f s (%.1fx)\n", READS, VERS, deep, flat, deep / flat);
	/* Each deep read misses the cache (a random one of 100,000 versions,
	 * each in its own buffer), a flat one does not: 17-36x here, busy or
	 * not.  A scan of the versions would be thousands of times slower. */
	CHECK(deep < 150 * flat);
	memtable__delete(t);
}

/* Answers remembered across reads (one range of one version, or none)
 * still follow the time, the slack and every later add. */
static void test_memo(void)
{
	struct memtable *t = memtable__new();
	int i, ok;

	CHECK(read_fill(t, 1, 0x1000, 8, 100) == -1);
	CHECK(add_fill(t, 1, 0x1000, 64, 7, 100, 200, 1) >= 0);
	CHECK(read_fill(t, 1, 0x1000, 8, 50) == -1);	/* before its first sight */
	CHECK(read_fill(t, 1, 0x1000, 8, 150) == 7);
	CHECK(read_fill(t, 1, 0x1000, 8, 50) == -1);	/* remembered, still by time */
	CHECK(read_fill(t, 1, 0x1000, 8, 900) == 7);
	CHECK(read_fill(t, 1, 0x1030, 32, 150) == -1);	/* not covered */
	CHECK(read_fill(t, 1, 0x1030, 32, 150) == -1);
	memtable__set_slack(t, 60);
	CHECK(read_fill(t, 1, 0x1000, 8, 50) == 7);	/* within the new slack */
	memtable__set_slack(t, 0);
	CHECK(add_fill(t, 1, 0x1000, 64, 9, 300, 400, 2) >= 0);
	CHECK(read_fill(t, 1, 0x1000, 8, 350) == 9);	/* the add is seen */
	CHECK(read_fill(t, 1, 0x1000, 8, 150) == 7);
	CHECK(add_fill(t, 1, 0x1000, 16, 5, 500, 600, 3) >= 0);
	CHECK(read_fill(t, 1, 0x1000, 8, 550) == 5);
	memtable__delete(t);
	/* Two ranges of one version each, different bytes: which answers, or
	 * whether they conflict, changes with the time, read after read. */
	t = memtable__new();
	CHECK(add_fill(t, 1, 0x2000, 64, 1, 100, 200, 1) >= 0);
	CHECK(add_fill(t, 1, 0x2000, 16, 2, 300, 400, 1) >= 0);
	CHECK(read_fill(t, 1, 0x2000, 8, 150) == 1);
	CHECK(read_fill(t, 1, 0x2000, 8, 350) == 2);
	CHECK(read_fill(t, 1, 0x2000, 8, 150) == 1);
	CHECK(read_fill(t, 1, 0x2008, 16, 350) == -1);	/* the newer bytes differ */
	CHECK(read_fill(t, 1, 0x2008, 16, 150) == 1);
	CHECK(read_fill(t, 1, 0x2008, 16, 350) == -1);
	CHECK(read_fill(t, 1, 0x2000, 8, 50) == -1);
	memtable__delete(t);
	/* A remembered outcome holds only while every range answers at the
	 * same rank: past the end of A's window (200), A is only the latest
	 * seen (rank 2) and B, first seen later (120), outranks it. */
	t = memtable__new();
	CHECK(add_fill(t, 1, 0x3000, 64, 1, 100, 200, 1) >= 0);
	CHECK(add_fill(t, 1, 0x3000, 16, 2, 120, 120, 1) >= 0);
	for (i = 0, ok = 1; i <= MT_QUIET_READS; i++)	/* sorted: then remembered */
		ok &= read_fill(t, 1, 0x3000, 8, 150) == 1;
	CHECK(ok);
	CHECK(read_fill(t, 1, 0x3000, 8, 160) == 1);	/* through the memo */
	CHECK(read_fill(t, 1, 0x3000, 8, 170) == 1);
	CHECK(read_fill(t, 1, 0x3000, 8, 230) == 2);
	CHECK(read_fill(t, 1, 0x3000, 8, 190) == 1);
	CHECK(read_fill(t, 1, 0x3000, 8, 110) == 1);	/* before B: A alone */
	memtable__delete(t);
}

/* A reader going through a capture in time order: entries arrive in file
 * order (first_ns out of order by at most LAM), lookups come at sample
 * times (out of order by at most DEL), and the table is expired at the
 * latest time no later lookup can precede.  Every read must give the same
 * bytes as a table that holds every entry from the start (report without
 * expiry) and as one fed the same way that never expires. */
static void test_expire(void)
{
	enum { N = 6000, Q = 40000, LAM = 50, DEL = 30, SLACK = 40 };
	struct oent *es = calloc(N, sizeof(*es));
	struct memtable *all = memtable__new(), *fed = memtable__new(), *exp = memtable__new();
	unsigned seed = 4242;
	size_t i, q, loaded = 0, bad = 0, answered = 0;
	uint64_t runmax = 0, memmax = 0, dropped = 0, pid2_end = 20000;
	long r;
	int drop2 = 0;

	for (i = 0; i < N; i++) {
		struct oent *e = &es[i];
		uint64_t base = LAM + i * 8;		/* file order ~ time order */

		e->first = base - (uint64_t)(rand_r(&seed) % LAM);
		e->last = e->first + (rand_r(&seed) % 3 ? 0 : (uint64_t)(rand_r(&seed) % 400));
		e->addr = 0x1000 + 8 * (uint64_t)(rand_r(&seed) % 16);
		e->len = 8 * (1 + (uint64_t)(rand_r(&seed) % 4));
		e->gen = 1 + (uint64_t)(rand_r(&seed) % 3000);	/* ties happen */
		e->fill = (uint8_t)('a' + rand_r(&seed) % 3);
		e->pid = rand_r(&seed) % 4 ? 1 : 2;
		CHECK(add_fill(all, e->pid, e->addr, (uint32_t)e->len, e->fill, e->first, e->last,
			       e->gen) >= 0);
	}
	memtable__set_slack(all, SLACK);
	memtable__set_slack(fed, SLACK);
	memtable__set_slack(exp, SLACK);
	for (q = 0; q < Q; q++) {
		uint64_t t = 60 + q * (8 * N / Q) + (uint64_t)(rand_r(&seed) % DEL);
		uint64_t addr = 0x1000 + 4 * (uint64_t)(rand_r(&seed) % 40);
		uint64_t len = 1 + (uint64_t)(rand_r(&seed) % 24);
		uint32_t pid = rand_r(&seed) % 5 ? 1 : 2;
		int a, b, c;

		if (pid == 2 && t >= pid2_end)
			pid = 1;		/* pid 2 is not sampled any more */
		if (t > runmax)
			runmax = t;
		/* Everything first seen up to t + SLACK is in. */
		while (loaded < N && (loaded == 0 || memmax < runmax + SLACK + LAM)) {
			const struct oent *e = &es[loaded++];

			if (e->first > memmax)
				memmax = e->first;
			CHECK(add_fill(fed, e->pid, e->addr, (uint32_t)e->len, e->fill, e->first,
				       e->last, e->gen) >= 0);
			CHECK(add_fill(exp, e->pid, e->addr, (uint32_t)e->len, e->fill, e->first,
				       e->last, e->gen) >= 0);
		}
		if (!drop2 && runmax >= pid2_end + DEL) {
			CHECK(memtable__drop_pid(exp, 2) == 0);
			drop2 = 1;
		}
		if (q % 97 == 0 && runmax > DEL) {
			r = memtable__expire(exp, runmax - DEL);
			CHECK(r >= 0);
			dropped += r > 0 ? (uint64_t)r : 0;
		}
		a = read_fill(all, pid, addr, (size_t)len, t);
		b = read_fill(fed, pid, addr, (size_t)len, t);
		c = read_fill(exp, pid, addr, (size_t)len, t);
		if (a != b || a != c) {
			if (bad++ < 3)
				fprintf(stderr, "expire: pid %u 0x%llx+%llu at %llu: all %d fed %d "
					"expired %d\n", pid, (unsigned long long)addr,
					(unsigned long long)len, (unsigned long long)t, a, b, c);
		}
		answered += a >= 0;
	}
	CHECK(bad == 0);
	CHECK(answered > Q / 4);
	/* Most versions went, and so did pid 2. */
	r = memtable__expire(exp, runmax - DEL);
	CHECK(r >= 0);
	dropped += r > 0 ? (uint64_t)r : 0;
	CHECK(memtable__count(exp) < memtable__count(fed) / 4);
	CHECK(dropped + memtable__count(exp) == memtable__count(fed));
	for (i = 0; i < memtable__count(exp); i++)
		CHECK(memtable__entry(exp, i)->pid != 2);
	/* What was dropped is given back: pid 2's index and runs are gone,
	 * pid 1's hold at most twice their entries (memtable_expire.c). */
	{
		uint64_t v;
		const struct mt_pid *p2, *p1;

		CHECK(intmap__get(&exp->pids, 2, &v));
		p2 = (const struct mt_pid *)(uintptr_t)v;
		CHECK(p2->n == 0 && p2->cap == 0 && p2->runcap == 0 && !p2->idx && !p2->runs);
		CHECK(intmap__get(&exp->pids, 1, &v));
		p1 = (const struct mt_pid *)(uintptr_t)v;
		CHECK(p1->n > 0 && p1->cap <= 2 * p1->n + MT_SHRINK_SLACK &&
		      p1->runcap <= 2 * p1->nruns + MT_SHRINK_SLACK);
	}
	printf("expire: %zu lookups agree; %zu entries fed, %zu kept\n", (size_t)Q,
	       memtable__count(fed), memtable__count(exp));
	CHECK(memtable__expire(NULL, 0) == -EINVAL && memtable__drop_pid(NULL, 1) == -EINVAL);
	memtable__delete(all);
	memtable__delete(fed);
	memtable__delete(exp);
	free(es);
}

int main(void)
{
	test_generations();
	test_point_windows();
	test_containing_wins();
	test_coverage();
	test_conflicts();
	test_many_pids();
	test_add_errors();
	test_memsrc();
	test_oracle();
	test_memo();
	test_expire();
	test_speed();
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
