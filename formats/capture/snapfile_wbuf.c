/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapfile_wbuf.c -- the capture writer's buffer: records framed (format 1)
 * or gathered into zstd chunks (format 2 and 3, MEMORY records in chunks of
 * their own), and written to the file (docs/capture-format.md, section 3).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "formats/capture/snapfile_dedup.h"
#include "formats/capture/snapfile_int.h"
#include "formats/capture/snapfile_write_int.h"
#include "symtab/vec.h"

/* -- Buffer and framing ------------------------------------------------------ */

/* Make room for n more bytes in the buffer: 0, -ENOMEM or -EOVERFLOW. */
int snapfile_writer__reserve(struct snapfile_writer *w, size_t n)
{
	if (n > SIZE_MAX - w->len)
		return -EOVERFLOW;
	return vec__grow(&w->buf, &w->cap, 1, w->len + n);
}

/* msgpack write callback: append to the buffer, remember a failure. */
int snapfile_writer__put(void *data, const char *p, size_t n)
{
	struct snapfile_writer *w = data;

	if (w->oom)
		return -1;
	if (!n)
		return 0;
	if (snapfile_writer__reserve(w, n)) {
		w->oom = 1;
		return -1;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	return 0;
}

/* Bytes before a payload: a format 1 frame header, or a format 2 chunk's
 * record length (docs/capture-format.md, section 1). */
size_t snapfile_writer__hdr_len(const struct snapfile_writer *w)
{
	return w->cctx ? SNAPFILE_REC_HDR : SNAPFILE_FRAME_HDR;
}

/* Start a frame: reserve its header. */
int snapfile_writer__begin(struct snapfile_writer *w, enum snapfile_kind kind, size_t nfields)
{
	if (w->err)
		return w->err;
	w->oom = 0;
	w->rec_start = w->len;
	if (snapfile_writer__reserve(w, snapfile_writer__hdr_len(w)))
		return w->err = -ENOMEM;
	w->len += snapfile_writer__hdr_len(w);
	w->kind = kind;
	msgpack_pack_array(&w->pk, nfields + 1);
	msgpack_pack_uint32(&w->pk, kind);
	return 0;
}

/* Finish a frame: fill length and crc (format 2 in a chunk: the length
 * only, the chunk has a checksum), flush when the buffer is large. */
int snapfile_writer__end(struct snapfile_writer *w)
{
	size_t payload = w->len - w->rec_start - snapfile_writer__hdr_len(w);
	uint8_t *hdr = w->buf + w->rec_start;
	uint32_t v;

	if (w->oom) {
		w->len = w->rec_start;
		return w->err = -ENOMEM;
	}
	if (payload > SNAPFILE_FRAME_MAX) {
		w->len = w->rec_start;
		return -E2BIG;
	}
	v = htole32((uint32_t)payload);
	memcpy(hdr, &v, 4);
	if (!w->cctx) {
		v = htole32((uint32_t)crc32(0L, hdr + SNAPFILE_FRAME_HDR, (uInt)payload));
		memcpy(hdr + 4, &v, 4);
	}
	w->records++;
	if (w->cctx && w->kind == SNAPFILE_REC_MEMORY) {
		/* Harvested memory goes to chunks of its own, so that a reader
		 * after it alone passes over the samples' chunks unread. */
		size_t n = w->len - w->rec_start;

		if (vec__grow(&w->mbuf, &w->mcap, 1, w->mlen + n)) {
			w->len = w->rec_start;
			w->records--;
			return w->err = -ENOMEM;
		}
		memcpy(w->mbuf + w->mlen, w->buf + w->rec_start, n);
		w->mlen += n;
		w->mrecs++;
		w->len = w->rec_start;
		if (w->mlen >= w->flush_at)
			return snapfile_writer__flush(w);
		return 0;
	}
	w->chunk_kinds |= w->kind < 32 ? 1u << w->kind : 1u;
	w->chunk_recs++;
	if (w->len >= w->flush_at)
		return snapfile_writer__flush(w);
	return 0;
}

/* Format 2: a chunk's summary (a zstd skippable frame: magic, size, kinds
 * mask, records; docs/capture-format.md, section 1), then len bytes of
 * records compressed as one zstd frame with its content size and XXH64
 * content checksum (set in __open_opts), in w->zbuf.  The bytes to write,
 * or 0 with w->err set. */
static size_t snapfile_writer__compress(struct snapfile_writer *w, const uint8_t *buf, size_t len,
					uint32_t kinds, uint32_t recs)
{
	const size_t head = 8 + SNAPFILE_SUMMARY_LEN;
	size_t bound = ZSTD_compressBound(len), n;
	uint32_t sum[4];

	if (vec__grow(&w->zbuf, &w->zcap, 1, head + bound)) {
		w->err = -ENOMEM;
		return 0;
	}
	sum[0] = htole32(SNAPFILE_SUMMARY_MAGIC);
	sum[1] = htole32(SNAPFILE_SUMMARY_LEN);
	sum[2] = htole32(kinds);
	sum[3] = htole32(recs);
	memcpy(w->zbuf, sum, head);
	/* ZSTD_compress2 resets the session, keeping the parameters. */
	n = ZSTD_compress2(w->cctx, w->zbuf + head, w->zcap - head, buf, len);
	if (ZSTD_isError(n)) {
		w->err = ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation ? -ENOMEM : -EIO;
		return 0;
	}
	return head + n;
}

/* Write len bytes to the file.  0 or negative errno (sticky). */
static int snapfile_writer__write(struct snapfile_writer *w, const uint8_t *out, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(w->fd, out + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* The file now ends inside a frame at worst; readers report
			 * that as truncation.  Nothing more is written. */
			w->err = n < 0 ? -errno : -EIO;
			w->bytes_written += done;
			return w->err;
		}
		done += (size_t)n;
	}
	w->bytes_written += done;
	return 0;
}

/* Write the buffered records to the file (no fsync): format 2, the chunk
 * of MEMORY records first, then the others'.  0 or negative errno. */
int snapfile_writer__flush(struct snapfile_writer *w)
{
	size_t len;

	if (w->err)
		return w->err;
	if (!w->cctx) {
		len = w->len;
		w->len = 0;
		return snapfile_writer__write(w, w->buf, len);
	}
	if (w->mlen) {
		len = snapfile_writer__compress(w, w->mbuf, w->mlen,
						1u << SNAPFILE_REC_MEMORY, w->mrecs);
		w->mlen = 0;
		w->mrecs = 0;
		if (w->err || snapfile_writer__write(w, w->zbuf, len)) {
			w->len = 0;
			return w->err;
		}
	}
	if (w->len) {
		len = snapfile_writer__compress(w, w->buf, w->len, w->chunk_kinds, w->chunk_recs);
		w->len = 0;
		w->chunk_kinds = 0;
		w->chunk_recs = 0;
		/* A chunk refers to no sample outside it (snapfile_dedup.h). */
		if (w->dd)
			snapfile_dedup__reset(w->dd);
		if (w->err)
			return w->err;
		return snapfile_writer__write(w, w->zbuf, len);
	}
	return 0;
}
