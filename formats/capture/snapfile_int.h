/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapfile_int.h -- internals shared by the capture file writer and reader.
 */
#ifndef LJSNAP_SNAPFILE_INT_H
#define LJSNAP_SNAPFILE_INT_H

#include <stdint.h>
#include <stddef.h>
#include "formats/capture/snapfile.h"

/* The registers of struct ljs_regs by name.  The header lists the names in
 * the order a sample's regs bytes store them, so reordering or extending the
 * struct never breaks an old file. */
struct snapfile_reg_field {
	const char *name;
	uint32_t offset;	/* offsetof(struct ljs_regs, ...) */
};
extern const struct snapfile_reg_field snapfile__regs[];
extern const size_t snapfile__nregs;

#define SNAPFILE_REGS_MAX 64	/* registers a header may list */
#define SNAPFILE_REG_NONE UINT32_MAX	/* a file register this build does not know */

/* -- Framing ----------------------------------------------------------------- */

/* Outcome of reading one frame (format 1) or record (format 2). */
enum frame_res {
	FRAME_OK = 1,		/* complete, checksum good */
	FRAME_EOF,		/* no byte left: clean end */
	FRAME_TRUNC,		/* the file ends inside this frame */
	FRAME_BADCRC,		/* complete, checksum wrong (frame consumed) */
	FRAME_BADLEN,		/* implausible length: cannot continue */
	FRAME_SKIP,		/* complete, of a kind the caller passes over (not checked) */
	FRAME_HEAD,		/* a sample passed over, its head read (snapfile_reader__sample_heads) */
};

/* Format 2's compressed chunks (snapfile_zread.c).  The reader reads the
 * magic and the header frame, then hands the file over at offset off with
 * the n bytes after the header it already read (pre).  Messages go to err. */
struct snapfile_zin;
struct snapfile_zin *snapfile_zin__new(int fd, const uint8_t *pre, size_t n, uint64_t off,
				       char *err, size_t errlen);
void snapfile_zin__delete(struct snapfile_zin *z);
/* FRAME_OK with the next record's payload (valid until the next call) and
 * its offset in the uncompressed stream; FRAME_EOF, FRAME_TRUNC (*trunc: the
 * bytes of the cut chunk), FRAME_BADCRC (a corrupt chunk or record skipped),
 * FRAME_BADLEN (cannot go on), each with err set, or -errno. */
int snapfile_zin__next(struct snapfile_zin *z, const uint8_t **p, uint32_t *len, uint64_t *off,
		       uint64_t *trunc);
/* FRAME_SKIP with *len records: a chunk of only these kinds passed over. */
void snapfile_zin__skip(struct snapfile_zin *z, uint32_t mask);
uint64_t snapfile_zin__offset(const struct snapfile_zin *z);	/* file bytes used */
uint64_t snapfile_zin__chunk(const struct snapfile_zin *z);	/* file offset of the current chunk */
uint64_t snapfile_zin__raw_bytes(const struct snapfile_zin *z);	/* the same, uncompressed */
size_t snapfile_zin__mem(const struct snapfile_zin *z);

/* -- Decode arena: chunked, so pointers stay valid while it grows -------- */

struct snapfile_arena_blk;
struct snapfile_arena {
	struct snapfile_arena_blk *head;
	size_t held;		/* bytes of blocks held */
};

/* size bytes, 16-byte aligned, or NULL. */
void *snapfile_arena__alloc(struct snapfile_arena *a, size_t size);
/* A NUL-terminated copy of (s, len), or NULL. */
char *snapfile_arena__strdup(struct snapfile_arena *a, const char *s, uint32_t len);
/* Forget every allocation (keeps one small block for reuse). */
void snapfile_arena__reset(struct snapfile_arena *a);
/* Free everything. */
void snapfile_arena__exit(struct snapfile_arena *a);

/* -- Payload decoders (snapfile_decode.c) ---------------------------------- *
 * Each reads the fields after the kind of a [kind, ...] payload; nfields is
 * the array length minus one.  0, -EBADMSG (c->why says why) or -ENOMEM. */

struct mp_cur;

/* What the header says about how samples store registers. */
struct snapfile_regmap {
	uint32_t n;				/* registers listed in the header */
	uint32_t off[SNAPFILE_REGS_MAX];	/* offset in struct ljs_regs or SNAPFILE_REG_NONE */
};

/* Only the frozen "major" key of a header map (minor too, when present). */
int snapfile__decode_version(struct mp_cur *c, uint32_t nfields, uint32_t *major, uint32_t *minor);
int snapfile__decode_header(struct mp_cur *c, uint32_t nfields, struct snapfile_header *h,
			    struct snapfile_regmap *rm, struct snapfile_arena *a);
int snapfile__decode_process(struct mp_cur *c, uint32_t nfields, struct snapfile_process *p,
			     struct snapfile_arena *a);
int snapfile__decode_sample(struct mp_cur *c, uint32_t nfields, struct ljs_sample *s,
			    const struct snapfile_regmap *rm);
int snapfile__decode_memory(struct mp_cur *c, uint32_t nfields, struct snapfile_memory *m);
int snapfile__decode_embed(struct mp_cur *c, uint32_t nfields, struct snapfile_embed *e,
			   struct snapfile_arena *a);
int snapfile__decode_object(struct mp_cur *c, uint32_t nfields, struct snapfile_object *o,
			    struct snapfile_arena *a);
int snapfile__decode_ksyms(struct mp_cur *c, uint32_t nfields, struct snapfile_ksyms *k,
			   struct snapfile_arena *a);
int snapfile__decode_stats(struct mp_cur *c, uint32_t nfields, struct snapfile_stats *st,
			   struct snapfile_arena *a);
int snapfile__decode_end(struct mp_cur *c, uint32_t nfields, struct snapfile_end *e);

#endif /* LJSNAP_SNAPFILE_INT_H */
