/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * capshow.c -- the kernel symbols and the embedded copies of a capture,
 * for the e2e tests to check against /proc/kallsyms and against each other.
 *
 * usage: capshow FILE
 *
 * Prints "ip HEX" for every distinct kernel ip of the samples' kernel
 * stacks (LJS_SEC_KSTACK), "ksym HEX NAME MODULE" ("-" for vmlinux) for
 * every entry of the KSYMS records, and for every EMBED record "embed
 * BUILD_ID WHAT SIZE RAW_LEN" and the lengths and CRC32s of its extents,
 * data and names, as the capture reader gives them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "formats/capture/snapfile.h"
#include "symtab/vec.h"

int main(int argc, char **argv)
{
	struct snapfile_reader *r;
	struct snapfile_rec rec;
	uint64_t *ips = NULL;
	size_t n = 0, cap = 0, i;
	int err, rc;

	if (argc != 2) {
		fprintf(stderr, "usage: capshow FILE\n");
		return 2;
	}
	r = snapfile_reader__open(argv[1], &err);
	if (!r) {
		fprintf(stderr, "capshow: %s: %s\n", argv[1], snapfile__strerror(err));
		return 1;
	}
	while ((rc = snapfile_reader__next(r, &rec)) != 0) {
		const struct ljs_section *k;

		if (rc < 0)
			continue;
		if (rec.kind == SNAPFILE_REC_EMBED) {
			const struct snapfile_embed *e = &rec.embed;
			char hex[2 * 64 + 1];
			uint32_t b;

			for (b = 0; b < e->build_id_len && b < 64; b++)
				sprintf(hex + 2 * b, "%02x", e->build_id[b]);
			hex[2 * b] = 0;
			printf("embed %s %x %llu %llu extents %u %08x data %u %08x names %u %08x\n",
			       hex, e->what,
			       (unsigned long long)e->size, (unsigned long long)e->raw_len,
			       e->extents_len, (unsigned)crc32(0, e->extents, e->extents_len),
			       e->len, (unsigned)crc32(0, e->data, e->len),
			       e->names_len, (unsigned)crc32(0, e->names, e->names_len));
			continue;
		}
		if (rec.kind == SNAPFILE_REC_KSYMS) {
			for (i = 0; i < rec.ksyms.n; i++) {
				const struct ksym *s = &rec.ksyms.syms[i];

				printf("ksym %llx %s %s\n", (unsigned long long)s->addr, s->name,
				       s->module && *s->module ? s->module : "-");
			}
			continue;
		}
		if (rec.kind != SNAPFILE_REC_SAMPLE ||
		    !(k = ljs_sample__section(&rec.sample, LJS_SEC_KSTACK, -1)))
			continue;
		for (i = 0; i + 8 <= k->len; i += 8) {
			if (VEC_GROW(ips, &cap, n + 1)) {
				fprintf(stderr, "capshow: out of memory\n");
				return 1;
			}
			memcpy(&ips[n++], k->data + i, 8);
		}
	}
	qsort(ips, n, sizeof(*ips), vec__cmp_u64);
	for (i = 0; i < n; i++)
		if (!i || ips[i] != ips[i - 1])
			printf("ip %llx\n", (unsigned long long)ips[i]);
	snapfile_reader__close(r);
	free(ips);
	return 0;
}
