/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * embed_pack.c -- an EMBED record's payload and back; see embed_pack.h.
 * The zstd frame is RFC 8878's, made and read by libzstd.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "formats/capture/embed_pack.h"

/* Pack a copy; see embed_pack.h. */
int embed_pack__init(struct embed_pack *p, const char *path, const uint8_t *id, size_t n,
		     const struct elfcopy *c)
{
	size_t i, k, zcap = ZSTD_compressBound(c->len), zlen;
	int err = -ENOMEM;

	memset(p, 0, sizeof(*p));
	p->ext = malloc(c->n ? c->n * 16 : 1);
	p->z = malloc(zcap ? zcap : 1);
	if (!p->ext || !p->z)
		goto out;
	for (i = 0; i < c->n; i++)
		for (k = 0; k < 8; k++) {
			p->ext[16 * i + k] = (uint8_t)(c->ext[i].offset >> (8 * k));
			p->ext[16 * i + 8 + k] = (uint8_t)(c->ext[i].len >> (8 * k));
		}
	zlen = ZSTD_compress(p->z, zcap, c->data, c->len, EMBED_PACK_LEVEL);
	err = -EIO;
	if (ZSTD_isError(zlen))
		goto out;
	err = -E2BIG;
	if (zlen + c->n * 16 + c->names_len + strlen(path) + n + 256 > SNAPFILE_FRAME_MAX)
		goto out;
	p->rec.path = path;
	p->rec.build_id = id;
	p->rec.build_id_len = (uint32_t)n;
	p->rec.size = c->size;
	p->rec.what = c->what;
	p->rec.extents = p->ext;
	p->rec.extents_len = (uint32_t)(c->n * 16);
	p->rec.raw_len = c->len;
	p->rec.data = p->z;
	p->rec.len = (uint32_t)zlen;
	p->rec.names = c->names;
	p->rec.names_len = (uint32_t)c->names_len;
	err = 0;
out:
	if (err)
		embed_pack__exit(p);
	return err;
}

/* Free the buffers. */
void embed_pack__exit(struct embed_pack *p)
{
	free(p->ext);
	free(p->z);
	memset(p, 0, sizeof(*p));
}

/* Unpack a record; see embed_pack.h. */
int embed_pack__unpack(const struct snapfile_embed *r, struct elfcopy *out)
{
	struct elfcopy_extent *ext = NULL;
	uint8_t *raw = NULL;
	size_t i, k, n = r->extents_len / 16, got;
	unsigned long long want;
	int err = -EBADMSG;

	memset(out, 0, sizeof(*out));
	want = r->data ? ZSTD_getFrameContentSize(r->data, r->len) : ZSTD_CONTENTSIZE_ERROR;
	/* raw_len bounds the allocation: unwind, symbol and DWARF sections
	 * compress 2-6x, so a small corrupt record cannot ask for gigabytes. */
	if (r->extents_len % 16 || n > ELFCOPY_MAX_EXTENTS || r->raw_len > EMBED_PACK_RAW_MAX ||
	    r->raw_len > r->size || r->raw_len > (uint64_t)r->len * EMBED_PACK_RATIO_MAX + 65536 ||
	    want != r->raw_len)
		goto out;
	err = -ENOMEM;
	ext = calloc(n ? n : 1, sizeof(*ext));
	raw = malloc(r->raw_len ? r->raw_len : 1);
	if (!ext || !raw)
		goto out;
	for (i = 0; i < n; i++)
		for (k = 0; k < 8; k++) {
			ext[i].offset |= (uint64_t)r->extents[16 * i + k] << (8 * k);
			ext[i].len |= (uint64_t)r->extents[16 * i + 8 + k] << (8 * k);
		}
	got = ZSTD_decompress(raw, r->raw_len, r->data, r->len);
	err = -EBADMSG;
	if (ZSTD_isError(got) || got != r->raw_len)
		goto out;
	err = elfcopy__init(out, r->size, r->what, ext, n, raw, got);
	if (!err && r->names_len && (err = elfcopy__set_names(out, r->names, r->names_len)) != 0)
		elfcopy__exit(out);
	if (err == -EINVAL)
		err = -EBADMSG;
out:
	free(ext);
	free(raw);
	return err;
}
