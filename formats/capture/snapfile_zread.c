/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapfile_zread.c -- format 2's compressed chunks: find each zstd frame in
 * the file, decompress it into one reused buffer, hand out its records in
 * place (docs/capture-format.md, sections 1 and 5).
 *
 * A complete chunk is decompressed whole before any of its records is
 * returned, so zstd has checked its XXH64 content checksum (zstd.h:
 * ZSTD_c_checksumFlag); a chunk cut by the end of the file is decompressed as
 * far as its bytes go, and its complete records are returned unchecked.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>
#include "formats/capture/snapfile_int.h"
#include "symtab/vec.h"

#define IN_STEP (1u << 20)		/* compressed bytes read at a time */
#define OUT_MIN (1u << 20)		/* first size of the decompressed chunk buffer */
#define TRUST_RATIO 1024		/* content sizes up to this many times the chunk are allocated at once */
#define PREFETCH_BYTES (16u << 10)	/* of the record after the one handed out */
#define FRAME_HEAD 18			/* a zstd frame header at most (zstd.h: ZSTD_FRAMEHEADERSIZE_MAX) */

/* What comes after the records of the current chunk. */
enum zin_tail {
	TAIL_NEXT,		/* the next chunk */
	TAIL_TRUNC,		/* the file was cut inside this chunk */
	TAIL_STOP,		/* this chunk was damaged past recovery: stop (err says why) */
};

struct snapfile_zin {
	int fd;
	int eof;			/* read() returned 0 */
	uint8_t *in;			/* compressed bytes [ipos, ilen) not yet used */
	size_t ipos, ilen, icap;
	uint64_t in_off;		/* file offset of in[0] */
	uint8_t *out;			/* the current chunk, decompressed: records [opos, olen) */
	size_t opos, olen, ocap;
	ZSTD_DCtx *dctx;
	uint64_t chunk_off;		/* file offset of the current chunk */
	uint64_t chunk_len;		/* its compressed bytes */
	uint64_t sbase;			/* uncompressed stream offset of out[0] */
	enum zin_tail tail;
	uint32_t skip;			/* kinds the caller passes over (bit 1 << kind) */
	int have_sum;			/* a summary came just before the next chunk */
	uint32_t sum_kinds, sum_recs;	/* what it says */
	char *err;			/* the reader's message buffer */
	size_t errlen;
};

/* Start reading chunks at file offset off; the first n bytes there are
 * already read (pre).  NULL on -ENOMEM. */
struct snapfile_zin *snapfile_zin__new(int fd, const uint8_t *pre, size_t n, uint64_t off,
				       char *err, size_t errlen)
{
	struct snapfile_zin *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	z->fd = fd;
	z->in_off = off;
	z->sbase = off;
	z->err = err;
	z->errlen = errlen;
	z->dctx = ZSTD_createDCtx();
	if (!z->dctx || vec__grow(&z->in, &z->icap, 1, n > IN_STEP ? n : IN_STEP)) {
		snapfile_zin__delete(z);
		return NULL;
	}
	memcpy(z->in, pre, n);
	z->ilen = n;
	return z;
}

/* Free z (NULL is a no-op); the file descriptor stays the reader's. */
void snapfile_zin__delete(struct snapfile_zin *z)
{
	if (!z)
		return;
	ZSTD_freeDCtx(z->dctx);
	free(z->in);
	free(z->out);
	free(z);
}

/* Pass over the records of these kinds (bit 1 << kind): a chunk whose
 * summary lists only such kinds is not even decompressed. */
void snapfile_zin__skip(struct snapfile_zin *z, uint32_t mask)
{
	z->skip = mask;
}

/* File bytes used so far (the end of the current chunk). */
uint64_t snapfile_zin__offset(const struct snapfile_zin *z)
{
	return z->in_off + z->ipos;
}

/* The file offset of the chunk the records come from: it changes with each chunk. */
uint64_t snapfile_zin__chunk(const struct snapfile_zin *z)
{
	return z->chunk_off;
}

/* Uncompressed bytes so far: the stream up to the end of the current chunk. */
uint64_t snapfile_zin__raw_bytes(const struct snapfile_zin *z)
{
	return z->sbase + z->olen;
}

/* Bytes of heap z holds. */
size_t snapfile_zin__mem(const struct snapfile_zin *z)
{
	return sizeof(*z) + z->icap + z->ocap + ZSTD_sizeof_DCtx(z->dctx);
}

/* Have at least n unused compressed bytes at z->in + z->ipos, fewer only at
 * the end of the file: the count held, or -errno.  The buffer grows with
 * what is read; it is compacted only when the bytes wanted do not follow. */
static ssize_t zin__want(struct snapfile_zin *z, size_t n)
{
	if (z->ilen - z->ipos >= n || (z->eof && z->ilen - z->ipos < n))
		return (ssize_t)(z->ilen - z->ipos);
	if (z->ipos) {
		memmove(z->in, z->in + z->ipos, z->ilen - z->ipos);
		z->ilen -= z->ipos;
		z->in_off += z->ipos;
		z->ipos = 0;
	}
	while (z->ilen < n && !z->eof) {
		ssize_t k;

		if (z->ilen == z->icap && vec__grow(&z->in, &z->icap, 1, z->icap + IN_STEP))
			return -ENOMEM;
		k = read(z->fd, z->in + z->ilen, z->icap - z->ilen);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			z->eof = 1;
		z->ilen += (size_t)k;
	}
	return (ssize_t)(z->ilen - z->ipos);
}

/* Decompress in[ipos, ipos + csize) into out: olen bytes.  0 = the frame is
 * complete (its checksum checked), 1 = the input ended first, or a zstd error
 * code (negative).  out grows with the bytes zstd actually produces. */
static int zin__inflate(struct snapfile_zin *z, size_t csize, uint64_t content)
{
	ZSTD_inBuffer ib = { z->in + z->ipos, csize, 0 };
	size_t ret, before;

	ZSTD_DCtx_reset(z->dctx, ZSTD_reset_session_only);
	z->olen = 0;
	/* A believable size is allocated at once: zstd then decompresses in one
	 * pass, straight into out (no copy through its window). */
	if (content <= SNAPFILE_CHUNK_MAX && content <= (uint64_t)TRUST_RATIO * csize &&
	    vec__grow(&z->out, &z->ocap, 1, content ? content : 1))
		return -ZSTD_error_memory_allocation;
	for (;;) {
		ZSTD_outBuffer ob;

		if (z->olen == z->ocap) {
			size_t want = z->ocap < OUT_MIN ? OUT_MIN : 2 * z->ocap;

			if (z->ocap >= SNAPFILE_CHUNK_MAX)
				return -ZSTD_error_dstSize_tooSmall;
			if (want > SNAPFILE_CHUNK_MAX)
				want = SNAPFILE_CHUNK_MAX;
			if (vec__grow(&z->out, &z->ocap, 1, want))
				return -ZSTD_error_memory_allocation;
		}
		ob.dst = z->out;
		ob.size = z->ocap;
		ob.pos = z->olen;
		before = ib.pos;
		ret = ZSTD_decompressStream(z->dctx, &ob, &ib);
		if (ZSTD_isError(ret))
			return -(int)ZSTD_getErrorCode(ret);
		if (ret == 0) {
			z->olen = ob.pos;
			return 0;
		}
		/* Wants more input than the chunk has (or makes no progress). */
		if (ob.pos < ob.size && (ib.pos == ib.size || (ib.pos == before && ob.pos == z->olen))) {
			z->olen = ob.pos;
			return 1;
		}
		z->olen = ob.pos;
	}
}

/* The file offset and size of the chunk at in[ipos] when it is not a zstd
 * frame at all, or its header is damaged. */
static int zin__stop(struct snapfile_zin *z, const char *why)
{
	snprintf(z->err, z->errlen, "corrupt compressed chunk at byte offset %llu: %s; the rest "
		 "of the file was ignored", (unsigned long long)snapfile_zin__offset(z), why);
	return FRAME_BADLEN;
}

/* Pass over a zstd skippable frame at in[ipos]: FRAME_SKIP, FRAME_TRUNC or
 * -errno.  Reserved for additions (docs/capture-format.md, section 1). */
static int zin__skippable(struct snapfile_zin *z, uint64_t *trunc)
{
	uint32_t size;
	ssize_t have;

	uint32_t magic, v[2];

	memcpy(&magic, z->in + z->ipos, 4);
	memcpy(&size, z->in + z->ipos + 4, 4);
	size = le32toh(size);
	have = zin__want(z, 8 + (size_t)size);
	if (have < 0)
		return (int)have;
	if ((size_t)have < 8 + (size_t)size) {
		*trunc = (uint64_t)have;
		z->ipos = z->ilen;
		return FRAME_TRUNC;
	}
	/* A chunk summary: for the zstd frame right after it. */
	z->have_sum = le32toh(magic) == SNAPFILE_SUMMARY_MAGIC && size >= SNAPFILE_SUMMARY_LEN;
	if (z->have_sum) {
		memcpy(v, z->in + z->ipos + 8, sizeof(v));
		z->sum_kinds = le32toh(v[0]);
		z->sum_recs = le32toh(v[1]);
	}
	z->ipos += 8 + (size_t)size;
	return FRAME_SKIP;
}

/* A complete chunk whose summary lists only kinds passed over is passed over
 * whole, unchecked (as a format 1 reader passes over such frames): 1, with
 * *nrec its records. */
static int zin__pass_over(struct snapfile_zin *z, int cut, uint64_t content, size_t csize,
			  uint64_t *nrec)
{
	int sum = z->have_sum;

	z->have_sum = 0;
	if (!sum || cut || !z->skip || !z->sum_kinds || (z->sum_kinds & ~z->skip) ||
	    content > SNAPFILE_CHUNK_MAX)
		return 0;
	z->sbase += content;
	z->ipos += csize;
	*nrec = z->sum_recs;
	return 1;
}

/* Load the next chunk into out.  FRAME_OK (records in out, maybe none),
 * FRAME_SKIP (a skippable frame passed over; a whole chunk passed over when
 * *trunc is set: its record count), FRAME_EOF, FRAME_TRUNC (nothing
 * usable left), FRAME_BADCRC (a corrupt chunk skipped: z->err), FRAME_BADLEN
 * (cannot go on: z->err) or -errno. */
static int zin__chunk(struct snapfile_zin *z, uint64_t *trunc)
{
	ssize_t have = zin__want(z, FRAME_HEAD);
	size_t csize;
	uint64_t content;
	uint32_t magic;
	int rc, cut = 0;

	if (have < 0)
		return (int)have;
	if (have == 0 && z->have_sum) {
		*trunc = 8 + SNAPFILE_SUMMARY_LEN;	/* a summary whose chunk is missing */
		return FRAME_TRUNC;
	}
	if (have == 0)
		return FRAME_EOF;
	if (have < 8) {
		*trunc = (uint64_t)have;
		z->ipos = z->ilen;
		return FRAME_TRUNC;
	}
	memcpy(&magic, z->in + z->ipos, 4);
	if ((le32toh(magic) & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START)
		return zin__skippable(z, trunc);
	if (le32toh(magic) != ZSTD_MAGICNUMBER)
		return zin__stop(z, "not a zstd frame");
	/* The whole frame, or all that the file has of it. */
	for (;;) {
		csize = ZSTD_findFrameCompressedSize(z->in + z->ipos, (size_t)have);
		if (!ZSTD_isError(csize))
			break;
		if (ZSTD_getErrorCode(csize) != ZSTD_error_srcSize_wrong)
			return zin__stop(z, ZSTD_getErrorName(csize));
		if (z->eof) {
			csize = (size_t)have;
			cut = 1;
			break;
		}
		have = zin__want(z, 2 * (size_t)have);
		if (have < 0)
			return (int)have;
	}
	content = ZSTD_getFrameContentSize(z->in + z->ipos, csize);
	if (content == ZSTD_CONTENTSIZE_ERROR)
		return zin__stop(z, "bad frame header");
	z->sbase += z->olen;
	z->olen = 0;
	z->opos = 0;
	if (zin__pass_over(z, cut, content, csize, trunc))
		return FRAME_SKIP;
	z->chunk_off = snapfile_zin__offset(z);
	z->chunk_len = csize;
	z->tail = TAIL_NEXT;
	rc = content == ZSTD_CONTENTSIZE_UNKNOWN || content > SNAPFILE_CHUNK_MAX ?
	     -ZSTD_error_frameParameter_unsupported : zin__inflate(z, csize, content);
	z->ipos += csize;
	if (rc == 0 && z->olen == content)
		return FRAME_OK;
	if (cut) {
		/* Cut by the end of the file: its complete records are usable. */
		z->tail = rc == 1 ? TAIL_TRUNC : TAIL_STOP;
		*trunc = csize;
		if (rc < 0)
			snprintf(z->err, z->errlen, "corrupt compressed chunk at byte offset %llu "
				 "(the last, %zu bytes): %s; the records before the damage were read",
				 (unsigned long long)z->chunk_off, csize,
				 ZSTD_getErrorString((ZSTD_ErrorCode)-rc));
		return FRAME_OK;
	}
	/* Stream offsets after it stay those of a reader that passed over it. */
	z->olen = 0;
	if (content <= SNAPFILE_CHUNK_MAX)
		z->sbase += content;
	snprintf(z->err, z->errlen, "corrupt compressed chunk at byte offset %llu: %s; its %zu "
		 "bytes were skipped", (unsigned long long)z->chunk_off,
		 rc < 0 ? ZSTD_getErrorString((ZSTD_ErrorCode)-rc) : "size differs from its header",
		 csize);
	return FRAME_BADCRC;
}

/* A record of the current chunk that cannot be one: the rest of the chunk is
 * skipped (a complete chunk) or ends the file (a cut one). */
static int zin__badrec(struct snapfile_zin *z, const char *why)
{
	snprintf(z->err, z->errlen, "corrupt record at stream offset %llu (in the compressed chunk "
		 "at byte offset %llu): %s; the rest of the chunk was skipped",
		 (unsigned long long)(z->sbase + z->opos), (unsigned long long)z->chunk_off, why);
	z->opos = z->olen;
	if (z->tail == TAIL_STOP)
		z->tail = TAIL_TRUNC;	/* its message is replaced by this one */
	return FRAME_BADCRC;
}

/* Ask for the next record's bytes while the caller works on this one: a
 * decompressed chunk (4 MiB) is larger than a core's cache, and each record
 * is first read long after zstd wrote it. */
static void zin__prefetch(const struct snapfile_zin *z)
{
	size_t i, end = z->olen - z->opos;

	if (end > PREFETCH_BYTES)
		end = PREFETCH_BYTES;
	for (i = 0; i < end; i += 64)
		__builtin_prefetch(z->out + z->opos + i);
}

/* The next record: FRAME_OK with its payload (p, len, stream offset off, in
 * z's buffer until the next call); FRAME_SKIP with len records of a chunk
 * passed over; or an enum frame_res / -errno as for a format 1 frame.
 * *trunc: the bytes of a cut chunk, at FRAME_TRUNC. */
int snapfile_zin__next(struct snapfile_zin *z, const uint8_t **p, uint32_t *len, uint64_t *off,
		       uint64_t *trunc)
{
	for (;;) {
		uint32_t n;
		int rc;

		if (z->olen - z->opos >= SNAPFILE_REC_HDR) {
			memcpy(&n, z->out + z->opos, 4);
			n = le32toh(n);
			if (n == 0 || n > SNAPFILE_FRAME_MAX)
				return zin__badrec(z, "implausible length");
			if (z->olen - z->opos - SNAPFILE_REC_HDR >= n) {
				*p = z->out + z->opos + SNAPFILE_REC_HDR;
				*len = n;
				*off = z->sbase + z->opos;
				z->opos += SNAPFILE_REC_HDR + (size_t)n;
				zin__prefetch(z);
				return FRAME_OK;
			}
		}
		if (z->opos < z->olen && z->tail == TAIL_NEXT)
			return zin__badrec(z, "it runs past the end of its chunk");
		if (z->tail == TAIL_TRUNC) {
			*trunc = z->chunk_len;
			return FRAME_TRUNC;
		}
		if (z->tail == TAIL_STOP)
			return FRAME_BADLEN;
		*trunc = 0;
		rc = zin__chunk(z, trunc);
		if (rc == FRAME_SKIP && *trunc) {
			*len = (uint32_t)*trunc;	/* records of a chunk passed over */
			*trunc = 0;
			return FRAME_SKIP;
		}
		if (rc != FRAME_OK && rc != FRAME_SKIP)
			return rc;
	}
}
