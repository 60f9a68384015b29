/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * capmutate.c -- garbage inside valid frames, for tests/e2e/report_fuzz.sh.
 *
 * usage: capmutate IN OUT SEED NFRAMES
 * Copies the capture IN to OUT with NFRAMES frames (never the header)
 * changed in 1..16 random payload bytes each, their CRC32 recomputed, so
 * that the garbage gets past the reader's checksum into the decoders and
 * the walker.  Deterministic for a seed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAGIC_LEN	8
#define MAX_FRAMES	(1u << 22)

static uint64_t rng_state;

static uint32_t rnd(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int main(int argc, char **argv)
{
	uint8_t *buf = NULL;
	size_t *frames = NULL, nf = 0, len = 0, off, i;
	long n;
	FILE *f;
	int rc = 1;

	if (argc != 5) {
		fprintf(stderr, "usage: capmutate IN OUT SEED NFRAMES\n");
		return 2;
	}
	rng_state = strtoull(argv[3], NULL, 10) * 2654435761u + 1;
	n = atol(argv[4]);
	f = fopen(argv[1], "rb");
	if (!f || fseek(f, 0, SEEK_END) || (len = (size_t)ftell(f)) < MAGIC_LEN + 8 ||
	    fseek(f, 0, SEEK_SET) || !(buf = malloc(len)) || fread(buf, 1, len, f) != len) {
		fprintf(stderr, "capmutate: cannot read %s\n", argv[1]);
		goto out;
	}
	fclose(f);
	f = NULL;
	frames = malloc(MAX_FRAMES * sizeof(*frames));
	if (!frames)
		goto out;
	for (off = MAGIC_LEN; off + 8 <= len && nf < MAX_FRAMES; ) {
		uint32_t fl = rd32(buf + off);

		if (fl == 0 || off + 8 + fl > len)
			break;
		frames[nf++] = off;
		off += 8 + (size_t)fl;
	}
	if (nf < 2) {
		fprintf(stderr, "capmutate: %s has no frame after the header\n", argv[1]);
		goto out;
	}
	for (; n > 0; n--) {
		size_t fo = frames[1 + rnd() % (nf - 1)];
		uint32_t fl = rd32(buf + fo), crc, k = 1 + rnd() % 16;
		uint8_t *p = buf + fo + 8;

		for (i = 0; i < k; i++) {
			uint32_t at = rnd() % fl;

			p[at] = (rnd() & 3) ? (uint8_t)rnd() : (uint8_t)(p[at] ^ (1u << (rnd() % 8)));
		}
		crc = (uint32_t)crc32(0L, p, fl);
		for (i = 0; i < 4; i++)
			buf[fo + 4 + i] = (uint8_t)(crc >> (8 * i));
	}
	f = fopen(argv[2], "wb");
	if (!f || fwrite(buf, 1, len, f) != len) {
		fprintf(stderr, "capmutate: cannot write %s\n", argv[2]);
		goto out;
	}
	rc = 0;
out:
	if (f && fclose(f) && !rc)
		rc = 1;
	free(frames);
	free(buf);
	return rc;
}
