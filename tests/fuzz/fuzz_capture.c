/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_capture.c -- the capture reader (formats/capture/snapfile.h) and its
 * record decoders on a fuzzed file: the input is written to a memfd and
 * read with snapfile_reader__open, then every record with __next.
 *
 * A mutated payload almost always fails its frame's crc32 and is skipped
 * before any decoder sees it, so for inputs of even length the harness
 * first recomputes the crc of every complete frame (docs/capture-format.md:
 * u32 length, u32 crc32(payload), payload): those reach the decoders, the
 * odd-length ones test the crc path.  Half of the even ones (size % 4 ==
 * 2) are then rewritten as format 2 (docs/capture-format.md: the header's
 * major 2, the frames after it as records in zstd chunks of up to four,
 * each after its summary, the incomplete tail appended as it is), so that
 * the decoders are reached through the chunk reader too; inputs that are
 * format 2 already test the chunk reader on damaged chunks.  The decoders have no entry point
 * of their own that needs no reader state (SAMPLE needs the header's
 * register map), so the reader is the entry point of both.
 */
#include <endian.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "formats/capture/snapfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fix_crcs(uint8_t *b, size_t n)
{
	size_t off = SNAPFILE_MAGIC_LEN;

	while (off + SNAPFILE_FRAME_HDR <= n) {
		uint32_t len = (uint32_t)b[off] | (uint32_t)b[off + 1] << 8 |
			       (uint32_t)b[off + 2] << 16 | (uint32_t)b[off + 3] << 24, crc;

		if (len > n - off - SNAPFILE_FRAME_HDR)
			break;
		crc = (uint32_t)crc32(0, b + off + SNAPFILE_FRAME_HDR, len);
		b[off + 4] = (uint8_t)crc;
		b[off + 5] = (uint8_t)(crc >> 8);
		b[off + 6] = (uint8_t)(crc >> 16);
		b[off + 7] = (uint8_t)(crc >> 24);
		off += SNAPFILE_FRAME_HDR + len;
	}
}

/* Append a chunk of the records in rec[0, n) (kinds: their summary mask)
 * to out: 0 or -1. */
static int put_chunk(uint8_t *out, size_t *len, size_t cap, const uint8_t *rec, size_t n,
		     uint32_t kinds, uint32_t nrec)
{
	static ZSTD_CCtx *cc;
	uint32_t sum[4] = { htole32(SNAPFILE_SUMMARY_MAGIC), htole32(8), htole32(kinds),
			    htole32(nrec) };
	size_t k;

	if (!cc) {
		cc = ZSTD_createCCtx();
		if (!cc)
			abort();
		ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
		ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1);
	}
	if (cap - *len < sizeof(sum))
		return -1;
	memcpy(out + *len, sum, sizeof(sum));
	k = ZSTD_compress2(cc, out + *len + sizeof(sum), cap - *len - sizeof(sum), rec, n);
	if (ZSTD_isError(k))
		return -1;
	*len += sizeof(sum) + k;
	return 0;
}

/* A format 1 file with good crcs rewritten as format 2, or NULL. */
static uint8_t *to_v2(const uint8_t *b, size_t n, size_t *outlen)
{
	size_t off = SNAPFILE_MAGIC_LEN, hlen, rlen = 0, olen, cap = 2 * n + 1024;
	uint8_t *out = malloc(cap), *rec = malloc(n + 1), *m;
	uint32_t len, kinds = 0, nrec = 0, crc;

	if (!out || !rec || n < off + SNAPFILE_FRAME_HDR)
		goto fail;
	memcpy(&len, b + off, 4);
	hlen = SNAPFILE_FRAME_HDR + le32toh(len);
	if (hlen > n - off || hlen < SNAPFILE_FRAME_HDR + 7)
		goto fail;
	memcpy(out, b, off + hlen);
	m = memmem(out + off + SNAPFILE_FRAME_HDR, hlen - SNAPFILE_FRAME_HDR, "\xa5major\x01", 7);
	if (!m)
		goto fail;
	m[6] = 2;
	crc = htole32((uint32_t)crc32(0, out + off + SNAPFILE_FRAME_HDR, hlen - SNAPFILE_FRAME_HDR));
	memcpy(out + off + 4, &crc, 4);
	olen = off + hlen;
	for (off += hlen; off + SNAPFILE_FRAME_HDR <= n; off += SNAPFILE_FRAME_HDR + len) {
		memcpy(&len, b + off, 4);
		len = le32toh(len);
		if (len > n - off - SNAPFILE_FRAME_HDR)
			break;
		memcpy(rec + rlen, b + off, 4);
		memcpy(rec + rlen + 4, b + off + SNAPFILE_FRAME_HDR, len);
		rlen += 4 + len;
		kinds |= len >= 2 && b[off + 9] < 32 ? 1u << b[off + 9] : 1u;
		if (++nrec == 4) {
			if (put_chunk(out, &olen, cap, rec, rlen, kinds, nrec))
				goto fail;
			rlen = 0, kinds = 0, nrec = 0;
		}
	}
	if (nrec && put_chunk(out, &olen, cap, rec, rlen, kinds, nrec))
		goto fail;
	if (n - off > cap - olen)
		goto fail;
	memcpy(out + olen, b + off, n - off);
	*outlen = olen + (n - off);
	free(rec);
	return out;
fail:
	free(out);
	free(rec);
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct snapfile_reader *r = NULL;
	struct snapfile_rec rec;
	char path[64], msg[256];
	uint8_t *copy = NULL;
	int err, rc, n = 0;

	if (fd < 0 && (fd = memfd_create("fuzz_capture", 0)) < 0)
		abort();
	copy = malloc(size ? size : 1);
	if (!copy)
		goto out;
	memcpy(copy, data, size);
	if (!(size & 1))
		fix_crcs(copy, size);
	if ((size & 3) == 2) {
		size_t n2;
		uint8_t *v2 = to_v2(copy, size, &n2);

		if (v2) {
			free(copy);
			copy = v2;
			size = n2;
		}
	}
	if (ftruncate(fd, 0) || pwrite(fd, copy, size, 0) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = snapfile_reader__open_msg(path, &err, msg, sizeof(msg));
	if (!r)
		goto out;
	(void)snapfile_reader__header(r);
	/* Never loops without consuming input (snapfile.h); n is the harness's own bound. */
	while ((rc = snapfile_reader__next(r, &rec)) != 0 && n++ < 1000000)
		if (rc < 0)
			(void)snapfile_reader__error(r);
	(void)snapfile_reader__note(r);
	(void)snapfile_reader__stats(r);
out:
	snapfile_reader__close(r);
	free(copy);
	return 0;
}
