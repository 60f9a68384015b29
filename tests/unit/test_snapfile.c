/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_snapfile.c -- capture file writer/reader/info tests.
 *
 * Ground truth is the input handed to the writer (records are compared field
 * by field with what the reader returns) and an independent parse of the
 * bytes with zlib and msgpack-c's own unpacker.  Covers: round trip of every
 * record kind, truncation at every byte, corruption (checksum, lengths,
 * undecodable payloads, random damage), versioning, forward compatibility
 * (unknown kinds, keys, fields, registers), file mode, write errors, info.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <msgpack.h>
#include "formats/capture/info.h"
#include "formats/capture/snapfile.h"
#include "tests/unit/snapfile_test.h"

int failures, checks;

static char tmpdir[64];

/* Path of a file in the test's temporary directory. */
const char *tpath(const char *name)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) & 3;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* Deterministic pseudo-random numbers (xorshift64). */
uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* -- File helpers ----------------------------------------------------------- */

/* Read a whole file into a malloc'd buffer. */
uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;

	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		b = malloc(n ? (size_t)n : 1);
		if (b && fread(b, 1, (size_t)n, f) == (size_t)n)
			*len = (size_t)n;
	}
	fclose(f);
	return b;
}

/* Write bytes to a file (replacing it). */
void spit(const char *path, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, p, len) == (ssize_t)len);
	close(fd);
}

/* -- Reading helpers ------------------------------------------------------------ */

/* The expected record for one of kind k read after *im MEMORY records and
 * *io others: a format 2 writer puts MEMORY records in chunks of their own
 * (written before the chunk of the others buffered with them), so each of
 * the two streams is in ex[]'s order.  NULL when none is left. */
static const struct expect *ex_next(enum snapfile_kind k, int *im, int *io)
{
	int *i = k == SNAPFILE_REC_MEMORY ? im : io;

	while (*i < nex && (ex[*i].kind == SNAPFILE_REC_MEMORY) != (k == SNAPFILE_REC_MEMORY))
		(*i)++;
	return *i < nex ? &ex[(*i)++] : NULL;
}

/* Read every record of path, comparing with ex[] (in order within the
 * MEMORY records and within the others); returns records matched, or -1
 * when a record differs.  *nerr counts negative returns, *total
 * (if given) the records returned. */
int read_all(const char *path, int *nerr, int *total, struct snapfile_reader **keep)
{
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	struct snapfile_reader *r;
	int err, rc, n = 0, guard = 0, bad = 0, im = 0, io = 0;

	*nerr = 0;
	r = snapfile_reader__open(path, &err);
	if (!r) {
		free(rec);
		return -1000 + err;
	}
	while ((rc = snapfile_reader__next(r, rec)) != 0 && guard++ < 1000) {
		if (rc < 0) {
			(*nerr)++;
			continue;
		}
		{
			const struct expect *e = ex_next(rec->kind, &im, &io);

			if (!e || !rec_eq(rec, e))
				bad = 1;
		}
		n++;
	}
	if (total)
		*total = n;
	CHECK(guard < 1000);
	free(rec);
	if (keep)
		*keep = r;
	else
		snapfile_reader__close(r);
	return bad ? -1 : n;
}

/* -- Tests --------------------------------------------------------------------------- */

/* A reader told to pass over some kinds returns exactly the others, and a
 * corrupt record of a passed-over kind is not reported by that reader. */
static void test_skip_kinds(void)
{
	const char *path = tpath("skip.ljsnap"), *bad = tpath("skip-bad.ljsnap");
	struct frame_info fi[64];
	struct snapfile_rec rec;
	struct snapfile_reader *r;
	uint64_t seen[SNAPFILE_REC__MAX];
	uint8_t *b;
	size_t len;
	int err, n, i, res, corrupt;

	fixture_write(path);
	for (int pass = 0; pass < 2; pass++) {
		uint32_t mask = pass ? ~(1u << SNAPFILE_REC_SAMPLE) : 1u << SNAPFILE_REC_SAMPLE;

		r = snapfile_reader__open(path, &err);
		CHECK(r != NULL);
		if (!r)
			return;
		snapfile_reader__skip_kinds(r, mask);
		memset(seen, 0, sizeof(seen));
		while ((res = snapfile_reader__next(r, &rec)) > 0)
			seen[rec.kind]++;
		CHECK(res == 0);
		CHECKF(pass ? seen[SNAPFILE_REC_SAMPLE] == NSAMPLES : seen[SNAPFILE_REC_SAMPLE] == 0,
		       "pass %d: %llu samples", pass, (unsigned long long)seen[SNAPFILE_REC_SAMPLE]);
		CHECKF(pass ? seen[SNAPFILE_REC_MEMORY] == 0 : seen[SNAPFILE_REC_MEMORY] == NMEM,
		       "pass %d: %llu memory records", pass, (unsigned long long)seen[SNAPFILE_REC_MEMORY]);
		snapfile_reader__close(r);
	}
	/* Cut the file at every byte: passing over samples (which lseeks past
	 * their payload) gives the other records a full read gives, and says
	 * truncated exactly when it does. */
	b = slurp(path, &len);
	for (size_t cut = 0; b && cut <= len; cut += cut < 64 ? 1 : 7) {
		uint64_t want[2] = { 0, 0 };
		int trunc[2] = { 0, 0 };

		spit(bad, b, cut);
		for (int pass = 0; pass < 2; pass++) {
			r = snapfile_reader__open(bad, &err);
			if (!r)
				break;	/* cut inside the header: both fail alike */
			snapfile_reader__skip_kinds(r, pass ? 1u << SNAPFILE_REC_SAMPLE : 0);
			while ((res = snapfile_reader__next(r, &rec)) != 0)
				want[pass] += res > 0 && rec.kind != SNAPFILE_REC_SAMPLE;
			trunc[pass] = snapfile_reader__stats(r)->truncated;
			snapfile_reader__close(r);
		}
		CHECKF(want[0] == want[1] && trunc[0] == trunc[1],
		       "cut %zu: %llu/%llu records, truncated %d/%d", cut, (unsigned long long)want[0],
		       (unsigned long long)want[1], trunc[0], trunc[1]);
	}
	free(b);
	/* Flip the last byte of the first sample's payload. */
	b = slurp(path, &len);
	n = parse_frames(b, len, fi, 64);
	for (i = 0; i < n; i++)
		if (fi[i].kind == SNAPFILE_REC_SAMPLE)
			break;
	CHECK(i < n);
	if (i < n) {
		b[fi[i].end - 1] ^= 0x5a;
		spit(bad, b, len);
		for (int pass = 0; pass < 2; pass++) {
			r = snapfile_reader__open(bad, &err);
			CHECK(r != NULL);
			if (!r)
				break;
			snapfile_reader__skip_kinds(r, pass ? 0 : 1u << SNAPFILE_REC_SAMPLE);
			corrupt = 0;
			while ((res = snapfile_reader__next(r, &rec)) != 0)
				corrupt += res < 0;
			CHECKF(corrupt == pass, "pass %d: %d corrupt records reported", pass, corrupt);
			snapfile_reader__close(r);
		}
	}
	free(b);
}

/* Every record kind comes back as written; the bytes parse with zlib and msgpack-c. */
static void test_roundtrip(void)
{
	const char *path = tpath("rt.ljsnap");
	const struct snapfile_reader_stats *st;
	const struct snapfile_header *h;
	struct snapfile_reader *r = NULL;
	struct frame_info fi[64];
	struct snapfile_rec *rec;
	size_t len;
	uint8_t *b;
	int n, nerr, k;

	fixture_write(path);
	b = slurp(path, &len);
	CHECK(b != NULL);
	n = parse_frames(b, len, fi, 64);
	CHECKF(n == nex + 1, "independent parse found %d frames, expected %d", n, nex + 1);
	if (n == nex + 1) {
		CHECK(fi[0].kind == SNAPFILE_REC_HEADER);
		for (k = 0; k < nex; k++)
			CHECK(fi[k + 1].kind == (int)ex[k].kind);
		CHECK(fi[n - 1].end == len);
	}
	free(b);

	n = read_all(path, &nerr, NULL, &r);
	CHECKF(n == nex, "read back %d records matching the input, expected %d", n, nex);
	CHECK(nerr == 0);
	if (!r)
		return;
	h = snapfile_reader__header(r);
	CHECK(h->major == 1 && h->minor == 0);	/* fixture_write: format 1 */
	CHECK(!strcmp(h->ljsnap_version, fx.hdr.ljsnap_version));
	CHECK(!strcmp(h->host, "testhost") && !strcmp(h->kernel, fx.hdr.kernel));
	CHECK(!strcmp(h->arch, "x86_64") && !strcmp(h->target, fx.hdr.target));
	CHECK(h->mono_ns == fx.hdr.mono_ns && h->real_ns == fx.hdr.real_ns);
	CHECK(h->freq_hz == 99 && h->stack_bytes == LJS_USTACK_DEFAULT);
	CHECK(h->lstack_bytes == LJS_LSTACK_DEFAULT && h->features == fx.hdr.features);
	CHECK(snapfile_header__wall_ns(h, fx.hdr.mono_ns + 2500) == fx.hdr.real_ns + 2500);
	st = snapfile_reader__stats(r);
	CHECK(st->clean_end && !st->truncated && !st->stopped && st->corrupt == 0);
	CHECK(st->unknown == 0 && st->frames == (uint64_t)nex + 1);
	CHECK(st->per_kind[SNAPFILE_REC_SAMPLE] == NSAMPLES);
	CHECK(st->per_kind[SNAPFILE_REC_PROCESS] == 3 && st->per_kind[SNAPFILE_REC_MEMORY] == NMEM);
	CHECK(snapfile_reader__note(r) == NULL);
	rec = malloc(sizeof(*rec));
	CHECK(snapfile_reader__next(r, rec) == 0);	/* stays at the end */
	free(rec);
	snapfile_reader__close(r);

	/* Defaults: header strings and clock filled by the writer. */
	{
		struct snapfile_header h0 = { 0 };
		struct snapfile_writer *w = snapfile_writer__open(tpath("def.ljsnap"), &h0, &nerr);

		CHECK(w && snapfile_writer__close(w) == 0);
		r = snapfile_reader__open(tpath("def.ljsnap"), &nerr);
		CHECK(r != NULL);
		if (r) {
			h = snapfile_reader__header(r);
			CHECK(h->host[0] && h->kernel[0] && !strcmp(h->arch, "x86_64"));
			CHECK(h->mono_ns && h->real_ns > 1600000000ull * 1000000000ull);
			CHECK(h->target && !h->target[0]);
			snapfile_reader__close(r);
		}
	}
}

/* The file is created 0600, and an existing file is made 0600. */
static void test_mode(void)
{
	const char *path = tpath("mode.ljsnap");
	struct snapfile_writer *w;
	mode_t old = umask(0);
	struct stat st;
	int err, fd;

	unlink(path);
	w = snapfile_writer__open(path, &fx.hdr, &err);
	CHECK(w && snapfile_writer__close(w) == 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT, 0666);
	CHECK(fd >= 0 && fchmod(fd, 0666) == 0);
	close(fd);
	w = snapfile_writer__open(path, &fx.hdr, &err);
	CHECK(w && snapfile_writer__close(w) == 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600);
	umask(old);
}

/* Cut the file at every byte: exactly the complete records come back. */
static void test_truncation(void)
{
	const char *full = tpath("trunc-full.ljsnap"), *cut = tpath("trunc.ljsnap");
	struct frame_info fi[64];
	size_t len, c;
	int nf, bad_cuts = 0;
	uint8_t *b;

	fixture_write(full);
	b = slurp(full, &len);
	nf = parse_frames(b, len, fi, 64);
	CHECK(nf == nex + 1);
	if (nf != nex + 1) {
		free(b);
		return;
	}
	for (c = 0; c <= len; c++) {
		struct snapfile_reader *r;
		const struct snapfile_reader_stats *st;
		int complete = 0, boundary = c == SNAPFILE_MAGIC_LEN, n, nerr, k, ok = 1;
		size_t last = SNAPFILE_MAGIC_LEN;
		char want[160];

		spit(cut, b, c);
		for (k = 0; k < nf; k++) {
			if (fi[k].end <= c) {
				complete++;
				last = fi[k].end;
			}
			if (fi[k].end == c)
				boundary = 1;
		}
		if (c < fi[0].end) {
			int err;

			r = snapfile_reader__open(cut, &err);
			if (r || err != SNAPFILE_E_TRUNCHDR) {
				ok = 0;
				snapfile_reader__close(r);
			}
			bad_cuts += !ok;
			continue;
		}
		r = NULL;
		n = read_all(cut, &nerr, NULL, &r);
		if (n != complete - 1 || nerr != 0 || !r) {
			ok = 0;
		} else {
			st = snapfile_reader__stats(r);
			snprintf(want, sizeof(want), "truncated after %d records (%zu bytes of an "
				 "incomplete record ignored)", complete, c - last);
			if (st->truncated != !boundary || st->frames != (uint64_t)complete ||
			    (st->truncated && (st->trunc_bytes != c - last ||
					       !snapfile_reader__note(r) ||
					       strcmp(snapfile_reader__note(r), want))) ||
			    (!st->truncated && snapfile_reader__note(r)) ||
			    st->clean_end != (c == len))
				ok = 0;
		}
		if (!ok && bad_cuts < 5)
			fprintf(stderr, "cut at %zu: read %d records (want %d), %d errors\n", c, n,
				complete - 1, nerr);
		bad_cuts += !ok;
		snapfile_reader__close(r);
	}
	CHECKF(bad_cuts == 0, "%d of %zu cut positions misread", bad_cuts, len + 1);
	free(b);
}

/* Write a modified copy of b and count what the reader makes of it. */
static int read_modified(const uint8_t *b, size_t len, int *nerr, struct snapfile_reader **r)
{
	const char *path = tpath("mod.ljsnap");

	spit(path, b, len);
	return read_all(path, nerr, NULL, r);
}

/* Long on purpose: one list of checks, each a corruption of the same file. */
/* Corrupt frames are reported with their offset and skipped or stopped at. */
static void test_corruption(void)
{
	const char *full = tpath("corrupt-full.ljsnap");
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	struct frame_info fi[64];
	struct snapfile_reader *r;
	uint8_t *b, *m;
	size_t len, off;
	int nf, n, nerr, victim, i, rc;
	uint32_t v;
	char want[64];

	fixture_write(full);
	b = slurp(full, &len);
	nf = parse_frames(b, len, fi, 64);
	m = malloc(len + 64);
	victim = 5;	/* the second sample (ex[4]) */
	CHECK(nf == nex + 1 && ex[victim - 1].kind == SNAPFILE_REC_SAMPLE);

	/* A flipped payload byte: that record alone is lost, with its offset. */
	memcpy(m, b, len);
	m[(fi[victim].off + fi[victim].end) / 2] ^= 0x40;
	spit(tpath("flip.ljsnap"), m, len);
	r = snapfile_reader__open(tpath("flip.ljsnap"), &rc);
	CHECK(r != NULL);
	n = 0;
	i = 0;
	snprintf(want, sizeof(want), "byte offset %zu:", fi[victim].off);
	while (r && (rc = snapfile_reader__next(r, rec)) != 0 && i++ < 100) {
		if (rc < 0) {
			CHECK(rc == SNAPFILE_E_CORRUPT);
			CHECKF(strstr(snapfile_reader__error(r), want) != NULL, "%s",
			       snapfile_reader__error(r));
			CHECK(strstr(snapfile_reader__error(r), "checksum") != NULL);
			continue;
		}
		/* Records after the victim are ex[] shifted by one. */
		CHECK(rec_eq(rec, &ex[n >= victim - 1 ? n + 1 : n]));
		n++;
	}
	CHECK(n == nex - 1);
	CHECK(r && snapfile_reader__stats(r)->corrupt == 1 && snapfile_reader__stats(r)->clean_end);
	snapfile_reader__close(r);

	/* A flipped crc byte does the same. */
	memcpy(m, b, len);
	m[fi[victim].off + 5] ^= 0x01;
	n = read_modified(m, len, &nerr, NULL);
	CHECK(n == -1 && nerr == 1);	/* -1: the records after the gap are shifted */

	/* An implausible length stops reading, after the records before it. */
	memcpy(m, b, len);
	v = htole32(0xfffffff0u);
	memcpy(m + fi[victim].off, &v, 4);
	n = read_modified(m, len, &nerr, &r);
	CHECK(n == victim - 1 && nerr == 1);
	if (r) {
		CHECK(snapfile_reader__stats(r)->stopped);
		CHECK(strstr(snapfile_reader__error(r), "implausible length") != NULL);
		CHECK(snapfile_reader__mem(r) < (4u << 20));
		snapfile_reader__close(r);
	}
	v = 0;
	memcpy(m + fi[victim].off, &v, 4);
	n = read_modified(m, len, &nerr, NULL);
	CHECK(n == victim - 1 && nerr == 1);

	/* A plausible length past the end: truncation, and no 60 MiB buffer. */
	memcpy(m, b, len);
	v = htole32(60u << 20);
	memcpy(m + fi[victim].off, &v, 4);
	n = read_modified(m, len, &nerr, &r);
	CHECK(n == victim - 1 && nerr == 0);
	if (r) {
		CHECK(snapfile_reader__stats(r)->truncated);
		CHECK(snapfile_reader__stats(r)->trunc_bytes == len - fi[victim].off);
		CHECK(snapfile_reader__mem(r) < (4u << 20));
		snapfile_reader__close(r);
	}

	/* Undecodable payloads with a valid checksum: skipped, reading goes on. */
	{
		static const uint8_t bad1[] = { 0x93, 0x03, 0xc1, 0x00 };	/* 0xc1: invalid */
		static const uint8_t bad2[] = { 0x92, 0x03, 0xdd, 0xff, 0xff, 0xff, 0xff };
		static const uint8_t bad3[] = { 0x92, 0x02, 0x81, 0xa3, 'p', 'i', 'd', 0xa1, 'x' };
		static const uint8_t bad4[] = { 0x92, 0x05, 0xdd, 0x10, 0x00, 0x00, 0x00, 0x01 };
		static const uint8_t bad5[] = { 0x90 };
		static const uint8_t bad6[] = { 0x91, 0x03, 0x00 };	/* trailing byte */
		const uint8_t *bad[] = { bad1, bad2, bad3, bad4, bad5, bad6 };
		size_t badlen[] = { sizeof(bad1), sizeof(bad2), sizeof(bad3), sizeof(bad4),
				    sizeof(bad5), sizeof(bad6) };
		size_t j, nb = sizeof(bad) / sizeof(bad[0]);
		uint8_t *g = malloc(len + 512);

		/* Insert the bad frames right after the first sample (ex[1]). */
		off = fi[2].end;
		memcpy(g, b, off);
		for (j = 0; j < nb; j++) {
			uint32_t l = htole32((uint32_t)badlen[j]);
			uint32_t c = htole32((uint32_t)crc32(0, bad[j], (uInt)badlen[j]));

			memcpy(g + off, &l, 4);
			memcpy(g + off + 4, &c, 4);
			memcpy(g + off + 8, bad[j], badlen[j]);
			off += 8 + badlen[j];
		}
		memcpy(g + off, b + fi[2].end, len - fi[2].end);
		n = read_modified(g, off + len - fi[2].end, &nerr, &r);
		CHECKF(n == nex && nerr == (int)nb, "n %d nerr %d", n, nerr);
		if (r) {
			CHECK(snapfile_reader__stats(r)->corrupt == nb);
			CHECK(snapfile_reader__mem(r) < (4u << 20));
			snapfile_reader__close(r);
		}
		free(g);
	}

	/* Damaged payloads behind a valid checksum (a buggy or hostile writer):
	 * only the victim is lost; a payload cut short is always an error. */
	for (i = 0; i < 3000; i++) {
		int k = 1 + (int)(rnd() % (uint64_t)(nf - 1)), what = i % 3, total;
		size_t plen = fi[k].end - fi[k].off - 8, nl = plen, j;
		uint8_t *g = malloc(len + 64);
		uint32_t l, c;

		memcpy(g, b, fi[k].off + 8 + plen);
		if (what == 0) {
			nl = rnd() % plen;	/* cut inside the payload */
		} else if (what == 1) {
			for (j = 0; j < 1 + rnd() % 3; j++)
				g[fi[k].off + 8 + rnd() % plen] = (uint8_t)rnd();
		} else {
			nl = plen + 1 + rnd() % 16;	/* append junk */
			for (j = plen; j < nl; j++)
				g[fi[k].off + 8 + j] = (uint8_t)rnd();
		}
		if (!nl)
			nl = 1;
		l = htole32((uint32_t)nl);
		c = htole32((uint32_t)crc32(0, g + fi[k].off + 8, (uInt)nl));
		memcpy(g + fi[k].off, &l, 4);
		memcpy(g + fi[k].off + 4, &c, 4);
		memcpy(g + fi[k].off + 8 + nl, b + fi[k].end, len - fi[k].end);
		spit(tpath("mod.ljsnap"), g, fi[k].off + 8 + nl + len - fi[k].end);
		n = read_all(tpath("mod.ljsnap"), &nerr, &total, NULL);
		if (what != 1)
			CHECKF(nerr == 1 && total == nex - 1, "frame %d mutation %d: %d errors, %d records",
			       k, what, nerr, total);
		else
			CHECK(nerr <= 1 && total >= nex - 1 && total <= nex);
		free(g);
	}

	/* Random damage: never crashes, never loops, always terminates. */
	for (i = 0; i < 3000; i++) {
		int flips = 1 + (int)(rnd() % 4), f;

		memcpy(m, b, len);
		for (f = 0; f < flips; f++) {
			size_t at = fi[1].off + rnd() % (len - fi[1].off);

			m[at] = i & 1 ? (uint8_t)rnd() : m[at] ^ (uint8_t)(1u << (rnd() % 8));
		}
		n = read_modified(m, i % 5 ? len : len - rnd() % (len - fi[1].off), &nerr, NULL);
		CHECK(n >= -1 && nerr <= nex + 1);
	}
	free(m);
	free(b);
	free(rec);
}

/* -- Writer errors --------------------------------------------------------------------- */

/* A file size limit (EFBIG) mid-recording, in format major: reported,
 * sticky, returned by close; the file reads back as truncated with intact
 * records (format 2: a chunk cut by the limit). */
static void efbig(uint32_t major)
{
	struct snapfile_writer_opts o = { .major = major, .chunk_bytes = 1 };
	const char *path = tpath("fsize.ljsnap");
	struct snapfile_writer *w;
	struct rlimit old, lim;
	int err, i;

	if (getrlimit(RLIMIT_FSIZE, &old) == 0) {
		signal(SIGXFSZ, SIG_IGN);
		lim = old;
		lim.rlim_cur = 6000;
		CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
		w = snapfile_writer__open_opts(path, &fx.hdr, &o, &err);
		CHECK(w != NULL);
		for (i = 0, err = 0; w && i < 200 && !err; i++) {
			err = snapfile_writer__sample(w, &fx.s[0]);
			if (!err && i % 3 == 2)
				err = snapfile_writer__flush(w);
		}
		CHECK(err == -EFBIG);
		if (w) {
			CHECK(snapfile_writer__sample(w, &fx.s[1]) == -EFBIG);
			CHECK(snapfile_writer__bytes_written(w) == 6000);
			CHECK(snapfile_writer__close(w) == -EFBIG);
		}
		CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
		signal(SIGXFSZ, SIG_DFL);
		{
			struct snapfile_rec *rec = malloc(sizeof(*rec));
			struct snapfile_reader *r = snapfile_reader__open(path, &err);
			int good = 0, rc;

			CHECK(r != NULL);
			while (r && (rc = snapfile_reader__next(r, rec)) > 0)
				good += sample_eq(&rec->sample, &fx.s[0]);
			CHECK(good > 0 && r && (uint64_t)good == snapfile_reader__stats(r)->per_kind[SNAPFILE_REC_SAMPLE]);
			CHECK(r && snapfile_reader__stats(r)->truncated && !snapfile_reader__stats(r)->clean_end);
			snapfile_reader__close(r);
			free(rec);
		}
	}
}

/* Write errors are reported and sticky; bad input is refused. */
static void test_write_errors(void)
{
	struct snapfile_writer *w;
	struct ljs_sample s;
	int err, n, nerr;

	/* /dev/full: ENOSPC at the first flush, and the device is left alone. */
	if (access("/dev/full", W_OK) == 0) {
		struct stat st0, st1;

		CHECK(stat("/dev/full", &st0) == 0);
		w = snapfile_writer__open("/dev/full", &fx.hdr, &err);
		CHECK(w == NULL && err == -ENOSPC);
		CHECK(stat("/dev/full", &st1) == 0 && st0.st_mode == st1.st_mode);
	}

	/* Bad input is refused without touching the file. */
	w = snapfile_writer__open(tpath("einval.ljsnap"), &fx.hdr, &err);
	CHECK(w != NULL);
	if (w) {
		struct snapfile_memory big = fx.mem[0];

		s = fx.s[0];
		s.nsec = LJS_SAMPLE_MAX_SECS + 1;
		CHECK(snapfile_writer__sample(w, &s) == -EINVAL);
		s = fx.s[0];
		s.sec[0].data = NULL;
		CHECK(s.sec[0].len == 0 || snapfile_writer__sample(w, &s) == -EINVAL);
		big.len = SNAPFILE_FRAME_MAX;
		CHECK(snapfile_writer__memory(w, &big) == -E2BIG);
		CHECK(snapfile_writer__sample(w, &fx.s[1]) == 0);
		CHECK(snapfile_writer__close(w) == 0);
		n = read_all(tpath("einval.ljsnap"), &nerr, NULL, NULL);
		CHECK(n == -1 && nerr == 0);	/* one sample + END, not ex[] */
	}

	efbig(1);
	efbig(2);
}

/* -- info ------------------------------------------------------------------------------ */

/* Print info of path into a string. */
static char *info_of(const char *path, int *rc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	*rc = snapfile__print_info(path, f);
	fclose(f);
	return text;
}

/* info mentions the processes, counts and notes, computed from the input. */
static void test_info(void)
{
	const char *path = tpath("info.ljsnap");
	char want[256], *t;
	int rc, i, per_4242 = 0, per_777 = 0;
	uint8_t *b;
	size_t len;

	fixture_write(path);
	for (i = 0; i < NSAMPLES; i++) {
		per_4242 += fx.s[i].pid == 4242;
		per_777 += fx.s[i].pid == 777;
	}
	t = info_of(path, &rc);
	CHECK(rc == 0 && t);
	if (!t)
		return;
	snprintf(want, sizeof(want), "pid 4242 (ppid 1) nginx  exe %s", fx.pa.exe);
	CHECKF(strstr(t, want) != NULL, "missing '%s' in:\n%s", want, t);
	CHECK(strstr(t, fx.pa.lj_build) && strstr(t, "family openresty, GC64"));
	snprintf(want, sizeof(want), "pid 4242 %-16s %d samples", fx.s[0].comm, per_4242);
	CHECKF(strstr(t, want) != NULL, "missing '%s' in:\n%s", want, t);
	snprintf(want, sizeof(want), "pid 777 %-16s %d samples", fx.s[1].comm, per_777);
	CHECKF(strstr(t, want) != NULL, "missing '%s'", want);
	snprintf(want, sizeof(want), "sample %d,", NSAMPLES);
	CHECKF(strstr(t, want) != NULL, "missing '%s'", want);
	snprintf(want, sizeof(want), "%d ranges, %u bytes", NMEM, fx.mem[0].len + fx.mem[1].len);
	CHECKF(strstr(t, want) != NULL, "missing '%s'", want);
	snprintf(want, sizeof(want), "%d kernel symbols", NKSYMS);
	CHECKF(strstr(t, want) != NULL, "missing '%s'", want);
	CHECK(strstr(t, "pid 777 0123456789abcde exited at +3.000 s") != NULL);
	CHECK(strstr(t, "ringbuf_full") && strstr(t, "9.8.7-test") && strstr(t, "testhost"));
	CHECK(strstr(t, "notes:") == NULL);
	free(t);

	/* A cut copy says so; so does a corrupt one. */
	b = slurp(path, &len);
	spit(tpath("info-cut.ljsnap"), b, len - 3);
	t = info_of(tpath("info-cut.ljsnap"), &rc);
	CHECK(rc == 0 && t && strstr(t, "truncated after") && strstr(t, "no END record"));
	free(t);
	b[len / 2] ^= 0xff;
	spit(tpath("info-bad.ljsnap"), b, len);
	t = info_of(tpath("info-bad.ljsnap"), &rc);
	CHECK(rc == 0 && t && strstr(t, "corrupt") && strstr(t, "byte offset"));
	free(t);
	free(b);
	fprintf(stderr, "(an error about text.ljsnap follows: expected)\n");
	t = info_of(tpath("text.ljsnap"), &rc);
	CHECK(rc == SNAPFILE_E_NOTCAPTURE);
	free(t);
}

/* Remove the temporary directory. */
static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* Run every test; exit status 1 when a check failed. */
int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_snapfile.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	fixture_init();
	test_mpread();
	test_roundtrip();
	test_known_bytes();
	test_schema_fields();
	test_skip_kinds();
	test_mode();
	test_truncation();
	test_corruption();
	test_versions();
	test_forward_compat();
	test_embed_fields();
	test_write_errors();
	test_info();
	test_format2();
	test_format3();
	cleanup();
	printf("test_snapfile: %d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
