/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_pprof.c -- the pprof writer's bytes, read back with zlib and a
 * protobuf reader of the test's own: the empty profile, the fields of a
 * small one (field numbers: google/pprof's proto/profile.proto), equal
 * output for equal profiles, -EIO on a full disk.  What pprof makes of the
 * files is tests/output/pprof.sh's part.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "formats/output/aggregate.h"
#include "formats/output/pprof.h"
#include "tests/unit/check.h"

int failures, checks;

/* pprof__write a into memory, gunzipped: the protobuf bytes (*n), or NULL. */
static unsigned char *write_pb(const struct agg *a, size_t *n, unsigned char **gz, size_t *gzn)
{
	static unsigned char out[1 << 16];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	z_stream z;
	int err;

	*n = 0;
	if (!f)
		return NULL;
	err = pprof__write(a, NULL, f);
	fclose(f);
	CHECK(err == 0);
	CHECK(len > 18 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b);
	memset(&z, 0, sizeof(z));
	if (err || inflateInit2(&z, 15 + 16) != Z_OK) {
		free(buf);
		return NULL;
	}
	z.next_in = (unsigned char *)buf;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = sizeof(out);
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
	*n = sizeof(out) - z.avail_out;
	inflateEnd(&z);
	*gz = (unsigned char *)buf;
	*gzn = len;
	return out;
}

static uint64_t varint(const unsigned char **p, const unsigned char *end)
{
	uint64_t v = 0;
	int s = 0;

	while (*p < end && s < 64) {
		unsigned char b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << s;
		if (b < 0x80)
			break;
		s += 7;
	}
	return v;
}

/* Top-level fields: the strings (field 6) in order, the count of each field
 * number, the varint of field 12 (period). */
struct top {
	char str[64][64];
	int nstr, count[32];
	uint64_t period;
};

static void read_top(const unsigned char *p, size_t n, struct top *t)
{
	const unsigned char *end = p + n;

	memset(t, 0, sizeof(*t));
	while (p < end) {
		uint64_t key = varint(&p, end), len;
		unsigned num = (unsigned)(key >> 3);

		if (num < 32)
			t->count[num]++;
		if ((key & 7) == 0) {
			uint64_t v = varint(&p, end);

			if (num == 12)
				t->period = v;
			continue;
		}
		CHECK((key & 7) == 2);
		len = varint(&p, end);
		if ((key & 7) != 2 || len > (uint64_t)(end - p))
			return;
		if (num == 6 && t->nstr < 64 && len < 64)
			memcpy(t->str[t->nstr++], p, len);
		p += len;
	}
}

static void test_empty(void)
{
	struct agg *a = agg__new(0);
	unsigned char *pb, *gz = NULL;
	size_t n, gzn;
	struct top t;

	pb = write_pb(a, &n, &gz, &gzn);
	CHECK(pb != NULL);
	if (pb) {
		read_top(pb, n, &t);
		CHECK(t.nstr == 5 && t.str[0][0] == '\0' && !strcmp(t.str[1], "samples") &&
		      !strcmp(t.str[2], "count") && !strcmp(t.str[3], "cpu") &&
		      !strcmp(t.str[4], "nanoseconds"));
		CHECK(t.count[1] == 2 && t.count[11] == 1 && t.count[2] == 0 && t.count[3] == 0 &&
		      t.count[4] == 0 && t.count[5] == 0);
		CHECK(t.period == 1000000000 / 99);
	}
	free(gz);
	agg__delete(a);
}

static void test_small(void)
{
	struct agg *a = agg__new(0);
	struct ljs_stack st = { 0 };
	struct ljs_frame_src lsrc = { .func = "leaf", .file = "x.lua", .line = 7, .start_line = 5 };
	struct agg_labels l = { 10, 11, LJS_VM_INTERP };
	struct agg_time tm = { .start_ns = 5, .duration_ns = 6, .freq_hz = 1000 };
	unsigned char *pb, *gz1 = NULL, *gz2 = NULL;
	size_t n, gzn1 = 0, gzn2 = 0;
	struct top t;
	FILE *full;
	int i;

	agg__set_time(a, &tm);
	CHECK(ljs_stack__push(&st, "app", 3, LJS_FK_ROOT) == 0);
	CHECK(ljs_stack__push_src(&st, "leaf x.lua:5", 12, LJS_FK_LUA, &lsrc) == 0);
	CHECK(agg__add_stack(a, &st, &l, 3) == 0);
	pb = write_pb(a, &n, &gz1, &gzn1);
	CHECK(pb != NULL);
	if (pb) {
		read_top(pb, n, &t);
		/* 2 sample types, 1 sample, 1 mapping ([lua]), 1 location, 1 function */
		CHECK(t.count[1] == 2 && t.count[2] == 1 && t.count[3] == 1 && t.count[4] == 1 &&
		      t.count[5] == 1 && t.count[9] == 1 && t.count[10] == 1);
		CHECK(t.period == 1000000);
		CHECK(t.str[0][0] == '\0');
		for (i = 1; i < t.nstr; i++)
			CHECK(t.str[i][0] != '\0');
	}
	/* The same profile again: the same bytes. */
	CHECK(write_pb(a, &n, &gz2, &gzn2) != NULL);
	CHECK(gzn1 == gzn2 && gz1 && gz2 && !memcmp(gz1, gz2, gzn1));
	/* A full disk. */
	full = fopen("/dev/full", "w");
	if (full) {
		CHECK(pprof__write(a, NULL, full) == -EIO);
		fclose(full);
	}
	free(gz1);
	free(gz2);
	ljs_stack__exit(&st);
	agg__delete(a);
}

int main(void)
{
	test_empty();
	test_small();
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
