/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_snapfile_v3.c -- format 3: stack references (snapfile_dedup.h,
 * docs/capture-format.md).  Samples of three threads whose stacks keep
 * their outer part, as real ones do, are written as format 3 and read back
 * equal to what was written: whole, in small chunks, cut at many bytes.
 * With a sample taken out of the file, the references to it cannot be
 * resolved: the sections they are in come back cut, never with other bytes.
 */
#include <stdlib.h>
#include <string.h>
#include "formats/capture/snapfile_dedup.h"
#include "tests/unit/snapfile_test.h"

#define V3_N		240		/* samples */
#define V3_TIDS		3
#define V3_USTACK	12288		/* user stack bytes at most */
#define V3_LSTACK	6144		/* Lua stack bytes at most */

struct v3 {
	struct ljs_sample s[V3_N];
	uint8_t *ubuf[V3_N], *lbuf[V3_N], *gbuf[V3_N];
};

/* The "memory" of each thread: stack bytes that a sample changes near sp
 * (the user stack's low addresses) and near the top of the Lua stack. */
static uint8_t ustk[V3_TIDS][V3_USTACK], lstk[V3_TIDS][V3_LSTACK];

static void v3_build(struct v3 *v)
{
	size_t i, k;

	for (k = 0; k < V3_TIDS; k++) {
		for (i = 0; i < V3_USTACK; i++)
			ustk[k][i] = (uint8_t)rnd();
		for (i = 0; i < V3_LSTACK; i++)
			lstk[k][i] = (uint8_t)rnd();
	}
	for (i = 0; i < V3_N; i++) {
		struct ljs_sample *s = &v->s[i];
		uint32_t t = (uint32_t)(rnd() % V3_TIDS), depth, j;
		uint32_t ulen = 2048 + (uint32_t)(rnd() % (V3_USTACK - 2048));
		uint32_t llen = 512 + (uint32_t)(rnd() % (V3_LSTACK - 512));
		uint64_t utop = 0x7ffd00000000ull + t * 0x100000ull;

		/* the innermost bytes change: a few words below and above sp */
		depth = V3_USTACK - ulen;
		for (j = 0; j < 64 && depth + j < V3_USTACK; j++)
			ustk[t][depth + j] = (uint8_t)rnd();
		for (j = 0; j < 48 && llen >= 48; j++)
			lstk[t][llen - 48 + j] = (uint8_t)rnd();
		if (rnd() % 16 == 0)	/* now and then an outer frame changes too */
			ustk[t][V3_USTACK - 1 - rnd() % 512] ^= 0x5a;
		memset(s, 0, sizeof(*s));
		s->time_ns = 1000000000ull + i * 1000000ull;
		s->pid = 100;
		s->tid = 100 + t;
		s->cpu = (uint32_t)(i % 2);
		strcpy(s->comm, "v3");
		s->regs.ip = 0x400000 + i;
		s->regs.sp = utop - ulen;
		s->g = 0x10000;
		v->ubuf[i] = malloc(ulen);
		v->lbuf[i] = malloc(llen);
		v->gbuf[i] = malloc(64);
		memcpy(v->ubuf[i], ustk[t] + depth, ulen);
		memcpy(v->lbuf[i], lstk[t], llen);
		for (j = 0; j < 64; j++)
			v->gbuf[i][j] = (uint8_t)(i + j);
		s->sec[0] = (struct ljs_section){ .kind = LJS_SEC_USTACK, .status = LJS_ST_PARTIAL,
			.len = ulen, .want = 16384, .addr = utop - ulen, .data = v->ubuf[i] };
		s->sec[1] = (struct ljs_section){ .kind = LJS_SEC_G, .len = 64, .want = 64,
			.addr = 0x10000, .data = v->gbuf[i] };
		s->sec[2] = (struct ljs_section){ .kind = LJS_SEC_LSTACK, .len = llen, .want = llen,
			.addr = 0x40000000ull + t * 0x100000ull, .data = v->lbuf[i] };
		s->nsec = 3;
	}
}

static void v3_free(struct v3 *v)
{
	size_t i;

	for (i = 0; i < V3_N; i++) {
		free(v->ubuf[i]);
		free(v->lbuf[i]);
		free(v->gbuf[i]);
	}
}

/* Write v's samples in format 3 with chunks of chunk_bytes (0: default). */
static void v3_write(const struct v3 *v, const char *path, uint32_t chunk_bytes)
{
	struct snapfile_writer_opts o = { .major = 3, .chunk_bytes = chunk_bytes };
	struct snapfile_writer *w;
	int err, i;

	w = snapfile_writer__open_opts(path, NULL, &o, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	for (i = 0; i < V3_N; i++)
		CHECK(snapfile_writer__sample(w, &v->s[i]) == 0);
	CHECK(snapfile_writer__close(w) == 0);
}

/* Read path: the samples in order (how many; 0 if it cannot be opened, -1
 * if one differs), each equal to v's; references resolved and lost in
 * *refs, *lost. */
static int v3_read(const struct v3 *v, const char *path, uint64_t *refs, uint64_t *lost)
{
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	struct snapfile_reader *r;
	int err, n = 0, rc;

	*refs = *lost = 0;
	r = snapfile_reader__open(path, &err);
	if (!r || !rec) {	/* a file cut inside its header: no sample */
		free(rec);
		snapfile_reader__close(r);
		return rec ? 0 : -1;
	}
	while ((rc = snapfile_reader__next(r, rec)) > 0) {
		if (rec->kind != SNAPFILE_REC_SAMPLE)
			continue;
		if (n >= V3_N || !sample_eq(&rec->sample, &v->s[n])) {
			n = -1;
			break;
		}
		n++;
	}
	*refs = snapfile_reader__stats(r)->refs;
	*lost = snapfile_reader__stats(r)->refs_lost;
	snapfile_reader__close(r);
	free(rec);
	return n;
}

/* Whole files, default and small chunks: the samples come back as written,
 * and references made them smaller before compression. */
static void test_v3_roundtrip(const struct v3 *v)
{
	static const uint32_t chunks[] = { 0, 60000, 1 };
	uint64_t refs, lost;
	size_t i;

	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		v3_write(v, tpath("v3.ljsnap"), chunks[i]);
		CHECKF(v3_read(v, tpath("v3.ljsnap"), &refs, &lost) == V3_N, "chunk %u",
		       chunks[i]);
		CHECK(lost == 0);
		/* one sample per chunk (chunk_bytes 1): nothing to refer to */
		CHECKF(chunks[i] == 1 ? refs == 0 : refs > V3_N / 2, "chunk %u: %llu refs",
		       chunks[i], (unsigned long long)refs);
	}
}

/* A file cut anywhere: what is read is what was written, in order. */
static void test_v3_cuts(const struct v3 *v)
{
	uint64_t refs, lost;
	uint8_t *b;
	size_t len, cut;
	int bad = 0, prev = 0, n;

	v3_write(v, tpath("v3.ljsnap"), 60000);
	b = slurp(tpath("v3.ljsnap"), &len);
	CHECK(b != NULL);
	for (cut = len; b && cut > 16; cut = cut > 5000 ? cut - 4999 : cut / 2) {
		spit(tpath("v3cut.ljsnap"), b, cut);
		n = v3_read(v, tpath("v3cut.ljsnap"), &refs, &lost);
		bad += n < 0 || lost != 0 || (prev && n > prev);
		prev = n;
	}
	CHECK(bad == 0);
	free(b);
}

/*
 * Copy the samples of a format 3 file record by record, leaving out the
 * sample `drop`: the next sample of its thread refers to it.  The reader
 * must then cut that section short, mark it, and count it, and every other
 * section must come back as written.
 */
static void test_v3_lost(const struct v3 *v)
{
	struct snapfile_writer_opts o = { .major = 3 };
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	struct snapfile_reader *r;
	struct snapfile_writer *w;
	int err, i = 0, n = 0, wrong = 0, cut = 0, rc;
	uint64_t lost;

	v3_write(v, tpath("v3.ljsnap"), 0);
	r = snapfile_reader__open(tpath("v3.ljsnap"), &err);
	w = snapfile_writer__open_opts(tpath("v3lost.ljsnap"), NULL, &o, &err);
	CHECK(r && w && rec);
	while (r && w && rec && (rc = snapfile_reader__next(r, rec)) > 0) {
		const uint8_t *p;
		uint32_t plen;

		if (rec->kind != SNAPFILE_REC_SAMPLE)
			continue;
		p = snapfile_reader__payload(r, &plen);
		if (i++ != 10)
			CHECK(snapfile_writer__raw(w, p, plen) == 0);
	}
	snapfile_reader__close(r);
	CHECK(w && snapfile_writer__close(w) == 0);
	r = snapfile_reader__open(tpath("v3lost.ljsnap"), &err);
	CHECK(r != NULL);
	for (i = 0; r && rec && (rc = snapfile_reader__next(r, rec)) > 0;) {
		const struct ljs_sample *s = &rec->sample, *x;
		uint32_t k;

		if (rec->kind != SNAPFILE_REC_SAMPLE)
			continue;
		if (i == 10)
			i++;
		x = &v->s[i++];
		n++;
		for (k = 0; k < s->nsec && k < x->nsec; k++) {
			const struct ljs_section *a = &s->sec[k], *b = &x->sec[k];

			if (a->len < b->len && a->status == LJS_ST_FAULT)
				cut++;
			else if (a->len != b->len || a->status != b->status)
				wrong++;
			if (a->kind != b->kind || a->addr != b->addr || a->len > b->len ||
			    (a->len && memcmp(a->data, b->data, a->len)))
				wrong++;
		}
		wrong += s->nsec != x->nsec;
	}
	lost = r ? snapfile_reader__stats(r)->refs_lost : 0;
	CHECK(n == V3_N - 1);
	CHECK(wrong == 0);
	/* the dropped sample's thread loses at least its next reference; its
	 * samples after that refer to samples the reader did not count */
	CHECKF(cut > 0 && lost == (uint64_t)cut, "cut %d lost %llu", cut, (unsigned long long)lost);
	snapfile_reader__close(r);
	free(rec);
}

/*
 * REF sections that make no sense, written as they are (the writer packs a
 * section of kind SNAPFILE_SEC_REF like any other): one before any section,
 * one after another, an offset past the section, a huge length, a sample
 * number that is not the thread's previous one, and a range its previous
 * section does not hold.  Every sample comes back, no section longer than
 * it was written plus nothing from elsewhere, each bad REF counted.
 */
static void test_v3_garbage(void)
{
	struct snapfile_writer_opts o = { .major = 3 };
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	struct snapfile_reader *r;
	struct snapfile_writer *w;
	struct ljs_sample s[7];
	uint8_t bytes[600];
	int err, i, n = 0, rc, longer = 0;
	uint64_t lost;

	for (i = 0; i < (int)sizeof(bytes); i++)
		bytes[i] = (uint8_t)(i * 7);
	memset(s, 0, sizeof(s));
	for (i = 0; i < 7; i++) {
		s[i].time_ns = 1000 + (uint64_t)i;
		s[i].pid = 7;
		s[i].tid = 70 + (uint32_t)i;
		strcpy(s[i].comm, "garbage");
		s[i].sec[0] = (struct ljs_section){ .kind = LJS_SEC_USTACK, .len = 512, .want = 512,
			.addr = 0x7000, .data = bytes };
		s[i].sec[1] = (struct ljs_section){ .kind = SNAPFILE_SEC_REF, .addr = 16, .want = 64 };
		s[i].nsec = 2;
	}
	/* 0: a REF first */
	s[0].sec[0] = s[0].sec[1];
	s[0].sec[1] = (struct ljs_section){ .kind = LJS_SEC_G, .len = 64, .want = 64, .addr = 0x100,
		.data = bytes };
	/* 1: a REF after a REF */
	s[1].sec[2] = s[1].sec[1];
	s[1].nsec = 3;
	/* 2: an offset past the section; 3: a huge length */
	s[2].sec[1].addr = 100000;
	s[3].sec[1].want = 0xffffffffu;
	/* 4: a sample number of no sample; 5 and 6: one thread, whose second
	 * sample refers to a range the first one does not hold */
	s[4].sec[1].aux = 12345;
	s[5].nsec = 1;
	s[6].tid = s[5].tid;
	s[6].sec[1].aux = 1;
	s[6].sec[1].addr = 500;
	s[6].sec[1].want = 4096;
	w = snapfile_writer__open_opts(tpath("v3junk.ljsnap"), NULL, &o, &err);
	CHECK(w != NULL && rec != NULL);
	for (i = 0; w && i < 7; i++)
		CHECK(snapfile_writer__sample(w, &s[i]) == 0);
	CHECK(w && snapfile_writer__close(w) == 0);
	r = snapfile_reader__open(tpath("v3junk.ljsnap"), &err);
	CHECK(r != NULL);
	while (r && rec && (rc = snapfile_reader__next(r, rec)) > 0) {
		uint32_t k;

		if (rec->kind != SNAPFILE_REC_SAMPLE)
			continue;
		n++;
		for (k = 0; k < rec->sample.nsec; k++) {
			const struct ljs_section *c = &rec->sample.sec[k];

			CHECK(c->kind != SNAPFILE_SEC_REF);
			longer += c->len > 512 || (c->len && memcmp(c->data, bytes, c->len));
		}
	}
	lost = r ? snapfile_reader__stats(r)->refs_lost : 0;
	CHECK(n == 7);
	CHECK(longer == 0);
	/* 0: 1; 1: 1 (and its first REF: 1); 2..4: 1 each; 6: 1 */
	CHECKF(lost == 7, "lost %llu", (unsigned long long)lost);
	snapfile_reader__close(r);
	free(rec);
}

/* Format 3 tests. */
void test_format3(void)
{
	struct v3 *v = calloc(1, sizeof(*v));

	CHECK(v != NULL);
	if (!v)
		return;
	v3_build(v);
	test_v3_roundtrip(v);
	test_v3_cuts(v);
	test_v3_lost(v);
	test_v3_garbage();
	v3_free(v);
	free(v);
}
