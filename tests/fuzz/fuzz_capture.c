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
 * odd-length ones test the crc path.  The decoders have no entry point
 * of their own that needs no reader state (SAMPLE needs the header's
 * register map), so the reader is the entry point of both.
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

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
