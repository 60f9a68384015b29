/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_aggregate.c -- the profile model itself: labelled groups and their
 * label table, frame sources, and the memo of stacks seen before.
 *
 * Ground truth: counts and labels kept by the test in plain arrays, next to
 * what the aggregate's hashing gives back.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "formats/output/aggregate.h"
#include "unwind/pipeline.h"
#include "tests/unit/check.h"

int failures, checks;

/* Labelled groups and frame sources: kept as given, counts add up. */
static void test_groups_src(void)
{
	struct agg *a = agg__new(0);
	struct ljs_stack st = { 0 };
	struct ljs_frame_src src = { .func = "leaf", .file = "x.lua", .line = 7, .start_line = 5 },
			     got, nsrc = { .func = "memset", .module = "/lib/libc.so.6",
					   .build_id = "abcd", .addr = 0x1234, .map_start = 0x1000,
					   .map_limit = 0x2000, .map_offset = 0x10 };
	struct agg_labels l1 = { 10, 11, LJS_VM_INTERP }, l2 = { 10, 12, LJS_VM_TRACE };
	const struct agg_group *g;
	const struct agg_labels *lab;
	size_t n, nl, i;
	uint64_t sum = 0;
	long id;

	CHECK(ljs_stack__push(&st, "app", 3, LJS_FK_ROOT) == 0);
	CHECK(ljs_stack__push_src(&st, "leaf x.lua:5", 12, LJS_FK_LUA, &src) == 0);
	CHECK(ljs_stack__push_src(&st, "memset", 6, LJS_FK_NATIVE, &nsrc) == 0);
	CHECK(agg__add_stack(a, &st, &l1, 2) == 0);
	CHECK(agg__add_stack(a, &st, &l2, 3) == 0);
	CHECK(agg__add_stack(a, &st, &l1, 1) == 0);
	src.line = 99;			/* a later source of the same frame is not kept */
	ljs_stack__reset(&st);
	CHECK(ljs_stack__push(&st, "app", 3, LJS_FK_ROOT) == 0);
	CHECK(ljs_stack__push_src(&st, "leaf x.lua:5", 12, LJS_FK_LUA, &src) == 0);
	CHECK(agg__add_stack(a, &st, NULL, 4) == 0);
	g = agg__groups(a, &n);
	CHECK(g && n == 2);
	for (i = 0; g && i < n; i++)
		sum += g[i].count;
	CHECK(sum == 6 && agg__total(a) == 10 && agg__nstacks(a) == 2);
	lab = agg__labels(a, &nl);
	CHECK(lab && nl == 2 && g && g[0].label < nl && g[1].label < nl && g[0].label != g[1].label);
	CHECK(g && lab && lab[g[0].label].pid == 10 && lab[g[0].label].tid == 11 &&
	      lab[g[0].label].vm == LJS_VM_INTERP && g[0].count == 3);
	CHECK(g && lab && lab[g[1].label].tid == 12 && lab[g[1].label].vm == LJS_VM_TRACE &&
	      g[1].count == 3);
	id = agg__frame(a, "leaf x.lua:5", 12, LJS_FK_LUA);
	CHECK(id >= 0 && agg__frame_src(a, (uint32_t)id, &got) == 1 && got.line == 7 &&
	      got.start_line == 5 && !strcmp(got.file, "x.lua") && !strcmp(got.func, "leaf"));
	id = agg__frame(a, "memset", 6, LJS_FK_NATIVE);
	CHECK(id >= 0 && agg__frame_src(a, (uint32_t)id, &got) == 1 && got.addr == 0x1234 &&
	      !strcmp(got.module, "/lib/libc.so.6") && !strcmp(got.build_id, "abcd") &&
	      got.map_start == 0x1000 && got.map_limit == 0x2000 && got.map_offset == 0x10 &&
	      !got.file);
	id = agg__frame(a, "app", 3, LJS_FK_ROOT);
	CHECK(id >= 0 && agg__frame_src(a, (uint32_t)id, &got) == 0);
	ljs_stack__exit(&st);
	agg__delete(a);
}

/* Many threads and VM states: the label table grows (rehashes) and every
 * group keeps the labels it was added with, one group per (stack, labels). */
static void test_many_labels(void)
{
	struct agg *a = agg__new(0);
	struct ljs_stack st = { 0 };
	const struct agg_group *g;
	const struct agg_labels *lab;
	static uint64_t want[7][40][3];
	uint64_t count;
	size_t n, nl, i;
	char name[16];
	int ok = 1;

	for (i = 0; i < 3000; i++) {
		struct agg_labels l = { 100 + (uint32_t)(i % 40) / 8, 1000 + (uint32_t)(i % 40),
					(int)(i % 3) - 1 };
		size_t s = i % 7;

		ljs_stack__reset(&st);
		snprintf(name, sizeof(name), "f%zu", s);
		CHECK(ljs_stack__push(&st, "app", 3, LJS_FK_ROOT) == 0);
		CHECK(ljs_stack__push(&st, name, strlen(name), LJS_FK_LUA) == 0);
		CHECK(agg__add_stack(a, &st, &l, i % 5 + 1) == 0);
		want[s][i % 40][i % 3] += i % 5 + 1;
	}
	g = agg__groups(a, &n);
	lab = agg__labels(a, &nl);
	CHECK(g && lab && nl == 120 && n == 7 * 120);
	for (i = 0; g && lab && i < n; i++) {
		const struct agg_labels *l = &lab[g[i].label];
		struct agg_stack sb = { NULL, 0, 0 };
		size_t s;

		ok &= g[i].label < nl && agg__stack(a, g[i].stack, &sb, &count) == 0 && sb.n == 2;
		if (!ok)
			break;
		s = (size_t)(agg__frame_name(a, sb.ids[1], NULL)[1] - '0');
		ok &= l->tid >= 1000 && l->tid < 1040 && l->pid == 100 + (l->tid - 1000) / 8 &&
		      l->vm >= -1 && l->vm <= 1 && s < 7 &&
		      want[s][l->tid - 1000][l->vm + 1] == g[i].count;
		want[s][l->tid - 1000][l->vm + 1] = 0;	/* each (stack, labels) once */
		agg_stack__exit(&sb);
	}
	CHECK(ok);
	ljs_stack__exit(&st);
	agg__delete(a);
}

/* Stacks given again (agg__add_stack remembers them): the same stack and
 * ids, counts added; another order, kind or name is another stack. */
static void test_stack_memo(void)
{
	struct agg *a = agg__new(0);
	struct ljs_stack st = { 0 };
	struct agg_labels l = { 10, 11, LJS_VM_INTERP };
	struct agg_stack s1 = { NULL, 0, 0 }, s2 = { NULL, 0, 0 };
	const uint32_t *ids;
	const struct agg_group *g;
	size_t n2, i;
	uint64_t count;
	int round;

	for (round = 0; round < 3; round++) {
		ljs_stack__reset(&st);
		CHECK(ljs_stack__push(&st, "app", 3, LJS_FK_ROOT) == 0);
		CHECK(ljs_stack__push(&st, "f a;b", 5, LJS_FK_LUA) == 0);	/* sanitized */
		CHECK(ljs_stack__push(&st, "memset", 6, LJS_FK_NATIVE) == 0);
		CHECK(agg__add_stack(a, &st, &l, 2) == 0);
	}
	CHECK(agg__nstacks(a) == 1 && agg__total(a) == 6);
	CHECK(agg__stack(a, 0, &s1, &count) == 0 && s1.n == 3 && count == 6);
	g = agg__groups(a, &n2);
	CHECK(g && n2 == 1 && g[0].count == 6);
	ljs_stack__reset(&st);		/* the same names, the other order */
	CHECK(ljs_stack__push(&st, "app", 3, LJS_FK_ROOT) == 0);
	CHECK(ljs_stack__push(&st, "memset", 6, LJS_FK_NATIVE) == 0);
	CHECK(ljs_stack__push(&st, "f a;b", 5, LJS_FK_LUA) == 0);
	CHECK(agg__add_stack(a, &st, NULL, 1) == 0);
	ljs_stack__reset(&st);		/* the same names, another kind */
	CHECK(ljs_stack__push(&st, "app", 3, LJS_FK_ROOT) == 0);
	CHECK(ljs_stack__push(&st, "f a;b", 5, LJS_FK_LUA_TRACE) == 0);
	CHECK(ljs_stack__push(&st, "memset", 6, LJS_FK_NATIVE) == 0);
	CHECK(agg__add_stack(a, &st, NULL, 1) == 0);
	ljs_stack__reset(&st);		/* a name that sanitizes to the same */
	CHECK(ljs_stack__push(&st, "app", 3, LJS_FK_ROOT) == 0);
	CHECK(ljs_stack__push(&st, "f a,b", 5, LJS_FK_LUA) == 0);
	CHECK(ljs_stack__push(&st, "memset", 6, LJS_FK_NATIVE) == 0);
	CHECK(agg__add_stack(a, &st, NULL, 1) == 0);
	CHECK(agg__nstacks(a) == 3 && agg__total(a) == 9);
	CHECK(agg__stack(a, 0, &s1, &count) == 0 && count == 7);
	ids = s1.ids;
	CHECK(agg__stack(a, 1, &s2, &count) == 0 && count == 1 && s2.n == 3 &&
	      s2.ids[1] == ids[2] && s2.ids[2] == ids[1]);
	CHECK(agg__stack(a, 2, &s2, &count) == 0 && count == 1 && s2.ids[1] != ids[1]);
	CHECK(agg__stack(a, 3, &s2, &count) == -EINVAL);
	for (i = 0; i < 3; i++)
		CHECK(ids && ids[i] < agg__nframes(a));
	ljs_stack__reset(&st);		/* empty: refused, as before */
	CHECK(agg__add_stack(a, &st, NULL, 1) == -EINVAL);
	agg_stack__exit(&s1);
	agg_stack__exit(&s2);
	ljs_stack__exit(&st);
	agg__delete(a);
}

int main(void)
{
	test_groups_src();
	test_many_labels();
	test_stack_memo();
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
