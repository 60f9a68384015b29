/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_embed_pack.c -- formats/capture/embed_pack.h: a copy packed into an
 * EMBED record's payload reads back the same (extents, bytes, size, what),
 * and a record that does not add up is refused with -EBADMSG: extents not
 * 16-byte pairs or out of order, a raw size other than the frame's, over the
 * file's size or over the ratio bound, a cut or garbled zstd frame.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/capture/embed_pack.h"
#include "tests/unit/check.h"

int failures, checks;

static uint8_t data[5000];

/* Saved names: version, vmcalls 43, lj_str_new at 0x1234 (0x40 bytes). */
static const uint8_t names[] = "v1\0\x2b\0\0\0\x34\x12\0\0\0\0\0\0\x40\0\0\0lj_str_new";

/* A copy of a made-up 8192-byte file: two extents. */
static void make_copy(struct elfcopy *c)
{
	struct elfcopy_extent ext[2] = { { 0, 64 }, { 4096, sizeof(data) - 64 } };
	size_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 / 7);
	CHECK(elfcopy__init(c, 16384, ELFCOPY_UNWIND | ELFCOPY_SYMBOLS, ext, 2, data,
			    sizeof(data)) == 0);
}

/* Unpack a record changed by the caller: -EBADMSG expected. */
static int refused(const struct snapfile_embed *r)
{
	struct elfcopy c;
	int err = embed_pack__unpack(r, &c);

	elfcopy__exit(&c);
	return err == -EBADMSG;
}

int main(void)
{
	static const uint8_t id[4] = { 1, 2, 3, 4 };
	struct embed_pack p;
	struct elfcopy c, back;
	struct snapfile_embed r;
	uint8_t ext[32], *z;

	make_copy(&c);
	CHECK(embed_pack__init(&p, "/bin/x", id, 4, &c) == 0);
	CHECK(p.rec.len > 0 && p.rec.len < sizeof(data) && p.rec.extents_len == 32);
	CHECK(p.rec.raw_len == sizeof(data) && p.rec.size == 16384 && p.rec.build_id_len == 4);
	CHECK(embed_pack__unpack(&p.rec, &back) == 0);
	CHECK(back.n == 2 && back.size == c.size && back.what == c.what && back.len == c.len);
	CHECK(back.n == 2 && !memcmp(back.ext, c.ext, 2 * sizeof(*c.ext)));
	CHECK(back.data && !memcmp(back.data, c.data, c.len));
	CHECK(!back.names && !back.names_len && !p.rec.names_len);
	elfcopy__exit(&back);
	embed_pack__exit(&p);

	/* The names saved with the copy (symtab/funcs.h's format) come back. */
	CHECK(elfcopy__set_names(&c, names, sizeof(names)) == 0);
	CHECK(elfcopy__set_names(&c, names, 6) == -EINVAL);	/* cut in the entry */
	CHECK(c.names_len == sizeof(names));
	CHECK(embed_pack__init(&p, "/bin/x", id, 4, &c) == 0);
	CHECK(p.rec.names_len == sizeof(names));
	CHECK(embed_pack__unpack(&p.rec, &back) == 0);
	CHECK(back.names_len == sizeof(names) && !memcmp(back.names, names, sizeof(names)));
	elfcopy__exit(&back);
	r = p.rec;
	r.names_len--;	/* the last name not terminated */
	CHECK(refused(&r));

	r = p.rec;
	r.extents_len = 31;
	CHECK(refused(&r));
	memcpy(ext, p.rec.extents, 32);
	memcpy(ext, p.rec.extents + 16, 16);	/* out of order */
	memcpy(ext + 16, p.rec.extents, 16);
	r = p.rec;
	r.extents = ext;
	CHECK(refused(&r));
	r = p.rec;
	r.raw_len++;
	CHECK(refused(&r));
	r = p.rec;
	r.size = 4000;
	CHECK(refused(&r));
	r = p.rec;
	r.len--;
	CHECK(refused(&r));
	r = p.rec;
	r.len = 8;	/* claims 5000 bytes from 8: within the ratio, but cut */
	CHECK(refused(&r));
	z = malloc(p.rec.len);
	if (z) {
		memcpy(z, p.rec.data, p.rec.len);
		memset(z + p.rec.len / 2, 0xa5, p.rec.len - p.rec.len / 2);
		r = p.rec;
		r.data = z;
		CHECK(refused(&r));
		free(z);
	}
	r = p.rec;
	r.data = NULL;
	r.len = 0;
	CHECK(refused(&r));
	embed_pack__exit(&p);
	elfcopy__exit(&c);

	/* The ratio bound: a frame of zeros compresses too well to be sections. */
	{
		size_t big = 1 << 20;
		uint8_t *zeros = calloc(1, big);
		struct elfcopy_extent e1 = { 0, big };

		CHECK(zeros && elfcopy__init(&c, big, 1, &e1, 1, zeros, big) == 0);
		CHECK(embed_pack__init(&p, "/bin/z", id, 4, &c) == 0);
		CHECK(p.rec.len * EMBED_PACK_RATIO_MAX + 65536 < big);
		CHECK(refused(&p.rec));
		embed_pack__exit(&p);
		elfcopy__exit(&c);
		free(zeros);
	}
	printf("test_embed_pack: %d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
