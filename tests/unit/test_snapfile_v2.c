/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_snapfile_v2.c -- format 2: records in zstd chunks (docs/capture-format.md).
 * The chunks are found and decompressed here with libzstd alone, to check
 * the reader against an independent parse: every record comes back, a cut
 * at any byte gives every record of the complete chunks before it, a corrupt
 * chunk costs only its own records, and a format 1 file copied record by
 * record into format 2 reads back the same.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "formats/capture/info.h"
#include "tests/unit/snapfile_test.h"

#define MAXCH 64

struct chunk {
	size_t sum;		/* its summary frame starts here */
	size_t off, end;	/* the zstd frame [off, end) in the file */
	int nrec;		/* records in it */
};

/* Records in a decompressed chunk (u32 length + payload each), or -1. */
static int count_records(const uint8_t *p, size_t n)
{
	size_t i = 0;
	int k = 0;

	while (i + 4 <= n) {
		uint32_t len;

		memcpy(&len, p + i, 4);
		i += 4 + le32toh(len);
		k++;
	}
	return i == n ? k : -1;
}

/* Find the header frame and the chunks of a format 2 file with libzstd:
 * the chunk count (or -1), *hdr_end the end of the header frame. */
static int parse_chunks(const uint8_t *b, size_t len, size_t *hdr_end, struct chunk *ch)
{
	size_t off;
	uint32_t hl;
	int n = 0;

	if (len < 16)
		return -1;
	memcpy(&hl, b + 8, 4);
	off = 16 + le32toh(hl);
	*hdr_end = off;
	while (off < len && n < MAXCH) {
		size_t cs = ZSTD_findFrameCompressedSize(b + off, len - off);
		unsigned long long size;
		uint32_t sum[4];
		uint8_t *out;

		/* Each chunk comes after its summary (a skippable frame). */
		if (ZSTD_isError(cs) || cs != 16 || len - off < 16)
			return -1;
		memcpy(sum, b + off, 16);
		off += 16;
		cs = ZSTD_findFrameCompressedSize(b + off, len - off);
		if (le32toh(sum[0]) != SNAPFILE_SUMMARY_MAGIC || le32toh(sum[1]) != 8 || ZSTD_isError(cs))
			return -1;
		size = ZSTD_getFrameContentSize(b + off, cs);
		if (size >= ZSTD_CONTENTSIZE_ERROR || !(out = malloc(size ? size : 1)))
			return -1;
		if (ZSTD_decompress(out, size, b + off, cs) != size)
			ch[n].nrec = -1;
		else
			ch[n].nrec = count_records(out, size);
		free(out);
		if (ch[n].nrec < 0 || (uint32_t)ch[n].nrec != le32toh(sum[3]))
			return -1;
		ch[n].sum = off - 16;
		ch[n].off = off;
		ch[n].end = off + cs;
		off += cs;
		n++;
	}
	return off == len ? n : -1;
}

/* Write the fixture in format 2 with chunks of chunk_bytes, and parse it. */
static uint8_t *write_v2(const char *path, uint32_t chunk_bytes, size_t *len, size_t *hdr_end,
			 struct chunk *ch, int *nch)
{
	struct snapfile_writer_opts o = { .major = 2, .chunk_bytes = chunk_bytes };
	uint8_t *b;
	int i, total = 0;

	fixture_write_opts(path, &o);
	b = slurp(path, len);
	*nch = b ? parse_chunks(b, *len, hdr_end, ch) : -1;
	CHECKF(*nch > 0, "chunk_bytes %u: %d chunks", chunk_bytes, *nch);
	for (i = 0; i < *nch; i++) {
		uint32_t kinds;

		total += ch[i].nrec;
		/* MEMORY records have chunks of their own (the summary says). */
		memcpy(&kinds, b + ch[i].sum + 8, 4);
		kinds = le32toh(kinds);
		CHECKF(kinds == 1u << SNAPFILE_REC_MEMORY || !(kinds & 1u << SNAPFILE_REC_MEMORY),
		       "chunk_bytes %u: chunk %d holds kinds 0x%x", chunk_bytes, i, kinds);
	}
	CHECKF(*nch <= 0 || total == nex, "chunk_bytes %u: %d records in the chunks, want %d",
	       chunk_bytes, total, nex);
	return b;
}

/* Does ex[from, to) hold a MEMORY record? */
static int has_mem(int from, int to)
{
	int i;

	for (i = from; i < to; i++)
		if (ex[i].kind == SNAPFILE_REC_MEMORY)
			return 1;
	return 0;
}

/* Every record comes back, in chunks of one record and of several. */
static void test_v2_roundtrip(void)
{
	static const uint32_t sizes[] = { 1, 700, 0 };
	size_t len, hdr_end, k;
	struct chunk ch[MAXCH];
	int nch, n, nerr;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct snapfile_reader *r = NULL;
		const struct snapfile_reader_stats *st;
		uint8_t *b = write_v2(tpath("v2.ljsnap"), sizes[k], &len, &hdr_end, ch, &nch);

		free(b);
		CHECK(sizes[k] != 1 || nch == nex);
		/* fixture_write flushes once, after ex[4]: two chunks, and one of
		 * MEMORY records before each that has some. */
		CHECK(sizes[k] != 0 || nch == 2 + has_mem(0, 5) + has_mem(5, nex));
		n = read_all(tpath("v2.ljsnap"), &nerr, NULL, &r);
		CHECKF(n == nex && nerr == 0, "chunk_bytes %u: %d records, %d errors", sizes[k], n, nerr);
		if (!r)
			continue;
		st = snapfile_reader__stats(r);
		CHECK(snapfile_reader__header(r)->major == 2);
		CHECK(st->clean_end && !st->truncated && st->corrupt == 0);
		CHECK(st->frames == (uint64_t)nex + 1 && st->offset == len);
		CHECK(st->raw_bytes > hdr_end && snapfile_reader__note(r) == NULL);
		snapfile_reader__close(r);
	}
}

/* Cut the file at every byte: the records of the complete chunks before the
 * cut come back (and perhaps some of the cut chunk), never a wrong one. */
static void test_v2_cuts(void)
{
	const char *cut = tpath("v2-cut.ljsnap");
	struct chunk ch[MAXCH];
	size_t len, hdr_end, c;
	int nch, bad = 0, last = 0;
	uint8_t *b = write_v2(tpath("v2-full.ljsnap"), 700, &len, &hdr_end, ch, &nch);

	for (c = 0; b && nch > 0 && c <= len; c++) {
		struct snapfile_reader *r = NULL;
		const struct snapfile_reader_stats *st;
		int k, complete = 0, boundary = c == hdr_end, n, nerr, ok = 1, err;

		spit(cut, b, c);
		if (c < hdr_end) {
			r = snapfile_reader__open(cut, &err);
			bad += r != NULL || err != SNAPFILE_E_TRUNCHDR;
			snapfile_reader__close(r);
			continue;
		}
		for (k = 0; k < nch; k++) {
			if (ch[k].end <= c)
				complete += ch[k].nrec;
			boundary |= ch[k].end == c;
		}
		n = read_all(cut, &nerr, NULL, &r);
		if (!r || n < 0 || nerr || n < complete || n < last)
			ok = 0;
		if (r) {
			st = snapfile_reader__stats(r);
			if (boundary && (n != complete || st->truncated || snapfile_reader__note(r)))
				ok = 0;
			if (!boundary && (!st->truncated || !snapfile_reader__note(r) ||
					  !strstr(snapfile_reader__note(r), "truncated after")))
				ok = 0;
			/* A cut in the last chunk's checksum: END read, unchecked. */
			if (st->clean_end != (n == nex))
				ok = 0;
		}
		if (!ok && bad < 5)
			fprintf(stderr, "v2 cut at %zu: read %d records (at least %d), %d errors\n", c, n,
				complete, nerr);
		bad += !ok;
		last = n > last ? n : last;
		snapfile_reader__close(r);
	}
	CHECKF(bad == 0, "%d of %zu cut positions misread", bad, len + 1);
	free(b);
}

/* Damage: a flipped byte inside a chunk costs that chunk's records (and the
 * reading goes on); a chunk that is not a zstd frame stops the reading. */
static void test_v2_corruption(void)
{
	struct chunk ch[MAXCH];
	size_t len, hdr_end;
	int nch, n, nerr, total, k, before = 0;
	uint8_t *b = write_v2(tpath("v2-bad.ljsnap"), 1, &len, &hdr_end, ch, &nch);
	struct snapfile_reader *r;

	if (!b || nch < 4) {
		free(b);
		return;
	}
	k = nch / 2;
	for (int i = 0; i < k; i++)
		before += ch[i].nrec;
	for (int where = 0; where < 2; where++) {
		/* the middle of its compressed data; its content checksum */
		size_t at = where ? ch[k].end - 2 : (ch[k].off + ch[k].end) / 2;

		b[at] ^= 0x20;
		spit(tpath("v2-mod.ljsnap"), b, len);
		b[at] ^= 0x20;
		r = NULL;
		n = read_all(tpath("v2-mod.ljsnap"), &nerr, &total, &r);
		CHECKF(nerr == 1 && total == nex - ch[k].nrec, "flip at %zu: %d errors, %d records",
		       at, nerr, total);
		CHECK(r && snapfile_reader__stats(r)->clean_end && snapfile_reader__stats(r)->corrupt == 1);
		CHECKF(r && strstr(snapfile_reader__error(r), "corrupt compressed chunk at byte offset"),
		       "%s", r ? snapfile_reader__error(r) : "");
		snapfile_reader__close(r);
		(void)n;
	}
	/* Its magic: the frames after it cannot be found. */
	b[ch[k].off] ^= 0xff;
	spit(tpath("v2-mod.ljsnap"), b, len);
	r = NULL;
	n = read_all(tpath("v2-mod.ljsnap"), &nerr, &total, &r);
	CHECKF(n == before && nerr == 1, "bad magic: %d records (want %d), %d errors", n, before, nerr);
	CHECK(r && snapfile_reader__stats(r)->stopped && !snapfile_reader__stats(r)->clean_end);
	snapfile_reader__close(r);
	free(b);
}

/* Passing over samples gives the other records, the same as a full read. */
static void test_v2_skip(void)
{
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	struct chunk ch[MAXCH];
	size_t len, hdr_end;
	int nch, res, other = 0, samples = 0, i, want = 0;
	uint8_t *b = write_v2(tpath("v2-skip.ljsnap"), 300, &len, &hdr_end, ch, &nch);
	struct snapfile_reader *r = snapfile_reader__open(tpath("v2-skip.ljsnap"), &res);

	free(b);
	CHECK(r && rec);
	if (!r || !rec) {
		free(rec);
		snapfile_reader__close(r);
		return;
	}
	snapfile_reader__skip_kinds(r, 1u << SNAPFILE_REC_SAMPLE);
	while ((res = snapfile_reader__next(r, rec)) > 0) {
		samples += rec->kind == SNAPFILE_REC_SAMPLE;
		other++;
	}
	for (i = 0; i < nex; i++)
		want += ex[i].kind != SNAPFILE_REC_SAMPLE;
	CHECKF(res == 0 && samples == 0 && other == want, "%d samples, %d others (want %d)", samples,
	       other, want);
	CHECK(snapfile_reader__stats(r)->frames == (uint64_t)nex + 1);
	snapfile_reader__close(r);
	/* Cut anywhere: the same other records and truncation as a full read
	 * (a chunk passed over by its summary is never a cut one). */
	b = slurp(tpath("v2-skip.ljsnap"), &len);
	for (size_t cut = hdr_end; b && cut <= len; cut += 3) {
		int got[2] = { 0, 0 }, trunc[2] = { 0, 0 };

		spit(tpath("v2-skipcut.ljsnap"), b, cut);
		for (int pass = 0; pass < 2; pass++) {
			r = snapfile_reader__open(tpath("v2-skipcut.ljsnap"), &res);
			if (!r)
				break;
			snapfile_reader__skip_kinds(r, pass ? 1u << SNAPFILE_REC_SAMPLE : 0);
			while ((res = snapfile_reader__next(r, rec)) != 0)
				got[pass] += res > 0 && rec->kind != SNAPFILE_REC_SAMPLE;
			trunc[pass] = snapfile_reader__stats(r)->truncated;
			snapfile_reader__close(r);
		}
		CHECKF(got[0] == got[1] && trunc[0] == trunc[1], "cut %zu: %d/%d records, truncated "
		       "%d/%d", cut, got[0], got[1], trunc[0], trunc[1]);
	}
	free(b);
	/* One record per chunk: a damaged sample chunk is passed over unseen
	 * (not even decompressed) by a reader skipping samples. */
	b = write_v2(tpath("v2-skip1.ljsnap"), 1, &len, &hdr_end, ch, &nch);
	for (i = 0; b && i < nch && i < nex; i++)
		if (ex[i].kind == SNAPFILE_REC_SAMPLE)
			break;
	CHECK(b && i < nch && i < nex);
	if (b && i < nch && i < nex) {
		b[(ch[i].off + ch[i].end) / 2] ^= 0x20;
		spit(tpath("v2-skip1.ljsnap"), b, len);
		uint64_t offs[2][32];
		int no[2] = { 0, 0 };

		for (int pass = 0; pass < 2; pass++) {
			int corrupt = 0;

			r = snapfile_reader__open(tpath("v2-skip1.ljsnap"), &res);
			CHECK(r != NULL);
			if (!r)
				break;
			snapfile_reader__skip_kinds(r, pass ? 0 : 1u << SNAPFILE_REC_SAMPLE);
			while ((res = snapfile_reader__next(r, rec)) != 0) {
				corrupt += res < 0;
				if (res > 0 && rec->kind != SNAPFILE_REC_SAMPLE && no[pass] < 32)
					offs[pass][no[pass]++] = rec->offset;
			}
			CHECKF(corrupt == pass, "pass %d: %d corrupt chunks reported", pass, corrupt);
			CHECK(snapfile_reader__stats(r)->frames == (uint64_t)nex + 1 - pass);
			snapfile_reader__close(r);
		}
		/* Both passes give the other records the same offsets (report
		 * orders processes and samples by them). */
		CHECK(no[0] == no[1] && no[0] > 0 && !memcmp(offs[0], offs[1], no[0] * sizeof(offs[0][0])));
	}
	free(b);
	free(rec);
}

/* A format 1 file copied payload by payload into format 2 reads back the
 * same records; and ljsnap info says which format and how compressed. */
static void test_v2_rewrite(void)
{
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	struct snapfile_writer_opts o = { .major = 2, .chunk_bytes = 500 };
	struct snapfile_reader *r = NULL;
	struct snapfile_writer *w = NULL;
	int err, rc, n = 0, nerr;
	char *text = NULL;
	size_t tlen = 0;
	FILE *f;

	fixture_write(tpath("v1.ljsnap"));
	r = snapfile_reader__open(tpath("v1.ljsnap"), &err);
	if (r)
		w = snapfile_writer__open_opts(tpath("v1to2.ljsnap"), snapfile_reader__header(r), &o,
					       &err);
	CHECK(r && w && rec);
	while (r && w && rec && (rc = snapfile_reader__next(r, rec)) > 0) {
		const uint8_t *p;
		uint32_t plen;

		p = snapfile_reader__payload(r, &plen);
		CHECK(p && plen == rec->size);
		if (rec->kind != SNAPFILE_REC_END)
			CHECK(snapfile_writer__raw(w, p, plen) == 0);
		else
			CHECK(snapfile_writer__raw(w, p, plen) == -EINVAL);
	}
	CHECK(w && snapfile_writer__close(w) == 0);
	snapfile_reader__close(r);
	free(rec);
	n = read_all(tpath("v1to2.ljsnap"), &nerr, NULL, NULL);
	CHECKF(n == nex && nerr == 0, "rewritten: %d records, %d errors", n, nerr);
	f = open_memstream(&text, &tlen);
	CHECK(f && snapfile__print_info(tpath("v1to2.ljsnap"), f) == 0);
	if (f)
		fclose(f);
	CHECKF(text && strstr(text, "format:     2.0") && strstr(text, "compression: zstd, "),
	       "%s", text ? text : "");
	free(text);
}

/* What a SIGKILL leaves: the file as it is after the last flush (the
 * recorder's, every second) reads back every record flushed, and no more. */
static void test_v2_killed(void)
{
	const char *path = tpath("v2-kill.ljsnap");
	struct snapfile_writer *w = snapfile_writer__open(path, &fx.hdr, NULL);
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	struct snapfile_reader *r;
	int i, n = 0, res, err;

	CHECK(w && rec);
	for (i = 0; w && i < 30; i++) {
		CHECK(snapfile_writer__sample(w, &fx.s[i % NSAMPLES]) == 0);
		if (i == 9 || i == 19)
			CHECK(snapfile_writer__flush(w) == 0);
	}
	/* Samples 20..29 are still in the writer's buffer. */
	r = rec ? snapfile_reader__open(path, &err) : NULL;
	CHECK(r != NULL);
	while (r && (res = snapfile_reader__next(r, rec)) > 0)
		n += rec->kind == SNAPFILE_REC_SAMPLE && sample_eq(&rec->sample, &fx.s[n % NSAMPLES]);
	CHECKF(n == 20, "%d samples read before close", n);
	CHECK(r && !snapfile_reader__stats(r)->truncated && !snapfile_reader__stats(r)->clean_end);
	snapfile_reader__close(r);
	CHECK(w && snapfile_writer__close(w) == 0);
	free(rec);
}

/* Format 2 tests. */
/* Samples passed over with their heads wanted come back as heads: the time,
 * pid, tid and offset a full read gives, in format 1 and 2; the other
 * records as before. */
static void test_sample_heads(void)
{
	static const struct snapfile_writer_opts v2 = { .major = 2 };
	const char *path = tpath("heads.ljsnap");
	struct snapfile_rec rec;
	uint64_t off[NSAMPLES];

	for (int fmt = 0; fmt < 2; fmt++) {
		struct snapfile_reader *r;
		int err, res, ns = 0, nh = 0, nother = 0, bad = 0;

		fixture_write_opts(path, fmt ? &v2 : NULL);
		r = snapfile_reader__open(path, &err);
		CHECK(r != NULL);
		while (r && (res = snapfile_reader__next(r, &rec)) > 0)
			if (rec.kind == SNAPFILE_REC_SAMPLE && ns < NSAMPLES)
				off[ns++] = rec.offset;
		snapfile_reader__close(r);
		CHECK(ns == NSAMPLES);
		r = snapfile_reader__open(path, &err);
		CHECK(r != NULL);
		if (!r)
			continue;
		snapfile_reader__skip_kinds(r, 1u << SNAPFILE_REC_SAMPLE);
		snapfile_reader__sample_heads(r, 1);
		while ((res = snapfile_reader__next(r, &rec)) > 0) {
			if (rec.kind == SNAPFILE_REC_SAMPLE_HEAD) {
				const struct ljs_sample *s = nh < NSAMPLES ? &fx.s[nh] : NULL;

				bad += !s || rec.head.time_ns != s->time_ns || rec.head.pid != s->pid ||
				       rec.head.tid != s->tid || rec.offset != off[nh];
				nh++;
			} else {
				bad += rec.kind == SNAPFILE_REC_SAMPLE;
				nother++;
			}
		}
		CHECK(res == 0);
		CHECKF(nh == NSAMPLES && bad == 0 && nother == nex - NSAMPLES,
		       "format %d: %d heads, %d others, %d wrong", fmt + 1, nh, nother, bad);
		snapfile_reader__close(r);
	}
}

void test_format2(void)
{
	test_v2_killed();
	test_v2_roundtrip();
	test_sample_heads();
	test_v2_cuts();
	test_v2_corruption();
	test_v2_skip();
	test_v2_rewrite();
}
