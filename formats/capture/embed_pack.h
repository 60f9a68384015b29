/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * embed_pack.h -- an EMBED record's payload (docs/capture-format.md, EMBED)
 * from a copy of a mapped file (symtab/elfcopy.h) and back: the extents as
 * u64 little-endian pairs, their bytes as one zstd frame.
 *
 * Programs that call these link libzstd; the rest of libljcapture does not
 * need it.
 */
#ifndef LJSNAP_CAPTURE_EMBED_PACK_H
#define LJSNAP_CAPTURE_EMBED_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "formats/capture/snapfile.h"
#include "symtab/elfcopy.h"

#define EMBED_PACK_LEVEL	3	/* zstd level (docs/capture-format.md, EMBED: sizes) */
#define EMBED_PACK_RAW_MAX	(1ull << 32)	/* section bytes a record may claim */
#define EMBED_PACK_RATIO_MAX	64	/* ... and at most this many per compressed byte */

/* A packed record and the buffers it points to. */
struct embed_pack {
	struct snapfile_embed rec;	/* ready for snapfile_writer__embed */
	uint8_t *ext, *z;
};

/* Pack copy c of the file with build id (id, n), read from path (both are
 * pointed to, not copied).  0, -ENOMEM, -EIO (zstd failed) or -E2BIG (over
 * the frame size). */
int embed_pack__init(struct embed_pack *p, const char *path, const uint8_t *id, size_t n,
		     const struct elfcopy *c);
void embed_pack__exit(struct embed_pack *p);

/* Unpack a record into a copy (the caller frees it with elfcopy__exit).
 * 0, -EBADMSG (extents not pairs or out of order, a frame that does not
 * decompress to raw bytes, raw over size or over EMBED_PACK_RATIO_MAX times
 * the compressed bytes) or -ENOMEM. */
int embed_pack__unpack(const struct snapfile_embed *r, struct elfcopy *out);

#endif
