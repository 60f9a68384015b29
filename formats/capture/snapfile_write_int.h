/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapfile_write_int.h -- the capture writer's state, shared by
 * snapfile_write.c (records packed from their schema, open and close) and
 * snapfile_wbuf.c (the buffer, its frames or chunks, and the writes).
 */
#ifndef LJSNAP_SNAPFILE_WRITE_INT_H
#define LJSNAP_SNAPFILE_WRITE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <zstd.h>
#include <msgpack/pack.h>

#include "formats/capture/snapfile.h"

struct snapfile_dedup;
struct snapfile_ref;

struct snapfile_writer {
	int fd;
	int is_reg;		/* regular file: fsync applies */
	int err;		/* first I/O or allocation error (sticky) */
	int oom;		/* the record being packed lost bytes */
	uint8_t *buf;		/* frames not yet written (format 2: one chunk, uncompressed) */
	size_t len, cap;
	size_t rec_start;	/* frame being packed starts here */
	size_t flush_at;	/* flush when len reaches this */
	msgpack_packer pk;
	uint64_t bytes_written;
	uint64_t records;
	uint32_t major;		/* format written */
	ZSTD_CCtx *cctx;	/* format 2, once the header is written: chunks are compressed */
	uint8_t *zbuf;		/* one chunk's summary and compressed records */
	size_t zcap;
	uint32_t kind;		/* of the record being packed */
	uint32_t chunk_kinds;	/* kinds in the buffered chunk (bit 1 << kind; bit 0: kinds >= 32) */
	uint32_t chunk_recs;	/* records in it */
	uint8_t *mbuf;		/* format 2: MEMORY records, a chunk of their own */
	size_t mlen, mcap;
	uint32_t mrecs;		/* records in it */
	struct snapfile_dedup *dd;	/* format 3: stack references */
	const struct snapfile_ref *refs;	/* of the sample being packed, or NULL */
	uint32_t ref_seq;	/* the number of the sample they refer to */
	uint8_t *lit;		/* a referring section's own bytes, made contiguous */
	size_t litcap;
};

/* snapfile_wbuf.c */
/* Room for n more bytes in the buffer: 0, -ENOMEM or -EOVERFLOW. */
int snapfile_writer__reserve(struct snapfile_writer *w, size_t n);
/* msgpack write callback: append to the buffer. */
int snapfile_writer__put(void *data, const char *p, size_t n);
/* Bytes before a payload (a frame header or a chunk's record length). */
size_t snapfile_writer__hdr_len(const struct snapfile_writer *w);
/* Start a record of kind with nfields fields after the kind; finish it
 * (and flush when the buffer is large). */
int snapfile_writer__begin(struct snapfile_writer *w, enum snapfile_kind kind, size_t nfields);
int snapfile_writer__end(struct snapfile_writer *w);

#endif /* LJSNAP_SNAPFILE_WRITE_INT_H */
