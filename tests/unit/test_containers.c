/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_containers.c -- symtab/vec.h and symtab/intmap.h.
 *
 * vec: growth keeps the contents, sizes whose byte count overflows are
 * refused with the array left as it was.  intmap: many keys (with keys
 * chosen to share home slots), key 0 and UINT64_MAX, replace, delete and
 * reinsert, iteration that sees every key exactly once, all checked
 * against a plain array oracle.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/intmap.h"
#include "symtab/vec.h"
#include "tests/unit/check.h"

int failures, checks;

struct pair {
	uint32_t a;
	uint64_t b;
};

/* Growth by one and in jumps keeps what was there. */
static void test_vec_growth(void)
{
	struct pair *v = NULL;
	size_t n = 0, cap = 0, i, ok = 1, lastcap = 0, regrowths = 0;

	for (i = 0; i < 100000; i++) {
		if (VEC_GROW(v, &cap, n + 1) != 0)
			break;
		if (cap != lastcap) {
			regrowths++;
			lastcap = cap;
		}
		v[n].a = (uint32_t)i;
		v[n++].b = i * 3;
	}
	CHECK(n == 100000 && cap >= n);
	CHECKF(regrowths < 20, "%zu reallocs for 100000 pushes", regrowths);
	for (i = 0; i < n; i++)
		if (v[i].a != i || v[i].b != i * 3)
			ok = 0;
	CHECK(ok);
	/* Already big enough: nothing moves. */
	{
		struct pair *before = v;
		size_t c = cap;

		CHECK(VEC_GROW(v, &cap, 10) == 0 && v == before && cap == c);
	}
	/* A jump past twice the capacity. */
	CHECK(VEC_GROW(v, &cap, 5 * cap) == 0 && cap >= 5 * n);
	CHECK(v[n - 1].a == n - 1);
	free(v);

	/* Bytes, from empty to one exact need. */
	{
		unsigned char *b = NULL;
		size_t bc = 0;

		CHECK(vec__grow(&b, &bc, 1, 1) == 0 && b && bc >= 1);
		CHECK(vec__grow(&b, &bc, 1, 1u << 20) == 0 && bc >= 1u << 20);
		memset(b, 7, 1u << 20);
		free(b);
	}
}

/* Sizes whose byte count does not fit, or that no allocator gives. */
static void test_vec_overflow(void)
{
	struct pair *v = NULL;
	size_t cap = 0, n;

	CHECK(VEC_GROW(v, &cap, 4) == 0);
	v[3].a = 42;
	n = cap;
	CHECK(VEC_GROW(v, &cap, SIZE_MAX) == -EOVERFLOW);
	CHECK(VEC_GROW(v, &cap, SIZE_MAX / sizeof(*v) + 1) == -EOVERFLOW);
	CHECK(cap == n && v && v[3].a == 42);
	/* Fits in a size_t, but no memory is that large. */
	CHECK(VEC_GROW(v, &cap, SIZE_MAX / sizeof(*v)) == -ENOMEM);
	CHECK(VEC_GROW(v, &cap, SIZE_MAX / sizeof(*v) / 2 + 1) == -ENOMEM);
	CHECK(cap == n && v[3].a == 42);
	CHECK(vec__grow(&v, &cap, 0, 100) == -EINVAL);
	free(v);
	/* From empty. */
	v = NULL;
	cap = 0;
	CHECK(VEC_GROW(v, &cap, SIZE_MAX / 2) == -EOVERFLOW && !v && cap == 0);
}

/* Keys that all share the low bits: in a table indexed by low bits they
 * would collide, and home slots collide among themselves at any size. */
static uint64_t key_of(size_t i)
{
	return ((uint64_t)i << 40) | 0x1000;
}

/* Many keys: put, get, replace, iterate, delete half, reinsert. */
static void test_intmap_many(void)
{
	enum { N = 50000 };
	struct intmap m;
	uint64_t k, v, *p;
	unsigned char *seen = calloc(N, 1);
	size_t i, it, bad = 0, count = 0;

	intmap__init(&m);
	CHECK(intmap__find(&m, 5) == NULL && intmap__count(&m) == 0);
	for (i = 0; i < N; i++)
		if (intmap__put(&m, key_of(i), i * 7) != 0)
			bad++;
	CHECK(bad == 0 && intmap__count(&m) == N);
	CHECK(m.cap >= 2 * N && (m.cap & (m.cap - 1)) == 0);
	for (i = 0, bad = 0; i < N; i++)
		if (!intmap__get(&m, key_of(i), &v) || v != i * 7)
			bad++;
	CHECK(bad == 0);
	CHECK(!intmap__get(&m, key_of(N), &v) && !intmap__find(&m, 0x1000 | 1));
	/* Replace: the count stays. */
	CHECK(intmap__put(&m, key_of(3), 99) == 0 && intmap__count(&m) == N);
	CHECK(intmap__get(&m, key_of(3), &v) && v == 99);
	CHECK(intmap__put(&m, key_of(3), 21) == 0);
	/* Iteration sees each key once, with its value. */
	for (it = 0, bad = 0; intmap__next(&m, &it, &k, &v); count++) {
		i = (size_t)(k >> 40);
		if ((k & 0xffffffffffull) != 0x1000 || i >= N || seen[i]++ || v != i * 7)
			bad++;
	}
	CHECK(bad == 0 && count == N);
	/* Delete the odd keys, then check all: deletion must not cut probe runs. */
	for (i = 1, bad = 0; i < N; i += 2)
		if (intmap__del(&m, key_of(i)) != 0)
			bad++;
	CHECK(bad == 0 && intmap__count(&m) == N / 2);
	CHECK(intmap__del(&m, key_of(1)) == -ENOENT);
	for (i = 0, bad = 0; i < N; i++) {
		int there = intmap__get(&m, key_of(i), &v);

		if (i % 2 ? there : (!there || v != i * 7))
			bad++;
	}
	CHECK(bad == 0);
	/* Reinsert with new values through intmap__slot. */
	for (i = 1, bad = 0; i < N; i += 2) {
		if (intmap__slot(&m, key_of(i), &p) != 0 || *p != 0)
			bad++;
		else
			*p = i + 1;
	}
	CHECK(bad == 0 && intmap__count(&m) == N);
	CHECK(intmap__slot(&m, key_of(2), &p) == 1 && *p == 14);
	for (i = 0, bad = 0; i < N; i++)
		if (!intmap__get(&m, key_of(i), &v) || v != (i % 2 ? i + 1 : i * 7))
			bad++;
	CHECK(bad == 0);
	/* Clear keeps the table, empties it. */
	intmap__clear(&m);
	CHECK(intmap__count(&m) == 0 && m.cap > 0 && !intmap__find(&m, key_of(0)));
	it = 0;
	CHECK(!intmap__next(&m, &it, &k, &v));
	CHECK(intmap__put(&m, key_of(0), 1) == 0 && intmap__count(&m) == 1);
	intmap__exit(&m);
	CHECK(m.cap == 0 && m.slots == NULL && intmap__count(&m) == 0);
	free(seen);
}

/* Key 0 and UINT64_MAX are ordinary keys. */
static void test_intmap_edges(void)
{
	struct intmap m = { 0 };
	uint64_t k, v, *p;
	size_t it, count = 0;
	int saw0 = 0, sawmax = 0, saw1 = 0;

	CHECK(!intmap__get(&m, 0, &v) && intmap__del(&m, 0) == -ENOENT);
	CHECK(intmap__del(&m, 7) == -ENOENT);
	CHECK(intmap__put(&m, 0, 10) == 0);
	CHECK(intmap__put(&m, UINT64_MAX, 20) == 0);
	CHECK(intmap__put(&m, 1, 30) == 0);
	CHECK(intmap__count(&m) == 3);
	CHECK(intmap__get(&m, 0, &v) && v == 10);
	CHECK(intmap__get(&m, UINT64_MAX, &v) && v == 20);
	CHECK(intmap__slot(&m, 0, &p) == 1 && *p == 10);
	*p = 11;
	CHECK(intmap__get(&m, 0, &v) && v == 11);
	for (it = 0; intmap__next(&m, &it, &k, NULL); count++) {
		saw0 += k == 0;
		sawmax += k == UINT64_MAX;
		saw1 += k == 1;
	}
	CHECK(count == 3 && saw0 == 1 && sawmax == 1 && saw1 == 1);
	CHECK(intmap__del(&m, 0) == 0 && !intmap__find(&m, 0) && intmap__count(&m) == 2);
	CHECK(intmap__slot(&m, 0, &p) == 0 && *p == 0 && intmap__count(&m) == 3);
	CHECK(intmap__del(&m, UINT64_MAX) == 0 && !intmap__find(&m, UINT64_MAX));
	CHECK(intmap__put(&m, UINT64_MAX, 5) == 0 && intmap__get(&m, UINT64_MAX, &v) && v == 5);
	/* Pointers as values. */
	CHECK(intmap__put(&m, 42, (uint64_t)(uintptr_t)&m) == 0);
	CHECK((struct intmap *)(uintptr_t)*intmap__find(&m, 42) == &m);
	intmap__exit(&m);
	/* A reservation nobody can have. */
	CHECK(intmap__reserve(&m, SIZE_MAX / 2) == -EOVERFLOW);
	CHECK(intmap__reserve(&m, SIZE_MAX / 64) != 0 && m.cap == 0);
	CHECK(intmap__reserve(&m, 1000) == 0 && m.cap >= 2000);
	CHECK(intmap__put(&m, 3, 3) == 0);
	intmap__exit(&m);
}

/* Key i of k: half of them just above 0, half just below UINT64_MAX. */
static uint64_t key_near_ends(size_t i, size_t k)
{
	return i < k / 2 ? (uint64_t)i : UINT64_MAX - (i - k / 2);
}

/* Random puts and deletes in a small key space against an array oracle:
 * probe runs wrap around the end of the table and are shifted back. */
static void test_intmap_random(void)
{
	enum { K = 300 };
	struct intmap m;
	uint64_t oracle[K], v, key;
	unsigned char live[K];
	uint64_t rng = 0x243f6a8885a308d3ull;
	size_t step, i, bad = 0, n = 0;

	intmap__init(&m);
	memset(live, 0, sizeof(live));
	for (step = 0; step < 200000; step++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		i = (size_t)(rng % K);
		key = key_near_ends(i, K);

		if ((rng >> 32) % 3 == 0) {
			int err = intmap__del(&m, key);

			if (err != (live[i] ? 0 : -ENOENT))
				bad++;
			n -= live[i];
			live[i] = 0;
		} else {
			if (intmap__put(&m, key, rng) != 0)
				bad++;
			n += !live[i];
			live[i] = 1;
			oracle[i] = rng;
		}
		if (step % 997 == 0) {
			size_t j;

			for (j = 0; j < K; j++) {
				int there = intmap__get(&m, key_near_ends(j, K), &v);

				if (there != live[j] || (there && v != oracle[j]))
					bad++;
			}
			if (intmap__count(&m) != n)
				bad++;
		}
	}
	CHECK(bad == 0);
	intmap__exit(&m);
}

int main(void)
{
	test_vec_growth();
	test_vec_overflow();
	test_intmap_many();
	test_intmap_edges();
	test_intmap_random();
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
