/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rewrite.c -- copy a capture file into another format version, record by
 * record, payloads unchanged (snapfile_reader__payload, snapfile_writer__raw):
 *
 *   rewrite [--format 1|2] [--chunk-bytes N] [--level N] IN OUT
 *
 * The header is written again from what the reader decoded (its strings,
 * clock reference and options), with the new format version; every other
 * record is copied as it is, except END, which the writer writes itself.
 * tests/golden/golden.sh reports each format 1 fixture rewritten as format 2
 * and compares it with the same expected output (docs/capture-format.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/capture/snapfile.h"

/* Copy every record of r into w: 0 or a negative errno. */
static int copy_records(struct snapfile_reader *r, struct snapfile_writer *w, uint64_t *n)
{
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	int rc, err = 0;

	if (!rec)
		return -ENOMEM;
	while (!err && (rc = snapfile_reader__next(r, rec)) != 0) {
		const uint8_t *p;
		uint32_t len;

		if (rc < 0) {
			fprintf(stderr, "rewrite: %s\n", snapfile_reader__error(r));
			continue;
		}
		if (rec->kind == SNAPFILE_REC_END)
			continue;
		if (rec->kind == SNAPFILE_REC_SAMPLE) {
			err = snapfile_writer__sample(w, &rec->sample);
		} else {
			p = snapfile_reader__payload(r, &len);
			err = snapfile_writer__raw(w, p, len);
		}
		(*n)++;
	}
	free(rec);
	return err;
}

int main(int argc, char **argv)
{
	struct snapfile_writer_opts o = { .major = SNAPFILE_MAJOR };
	struct snapfile_reader *r = NULL;
	struct snapfile_writer *w = NULL;
	uint64_t n = 0;
	int i, err = 0;

	for (i = 1; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
		if (!strcmp(argv[i], "--format"))
			o.major = (uint32_t)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--chunk-bytes"))
			o.chunk_bytes = (uint32_t)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--level"))
			o.level = atoi(argv[i + 1]);
		else
			break;
	}
	if (argc - i != 2) {
		fprintf(stderr, "usage: rewrite [--format 1|2|3] [--chunk-bytes N] [--level N] IN OUT\n");
		return 2;
	}
	r = snapfile_reader__open(argv[i], &err);
	if (!r) {
		fprintf(stderr, "rewrite: %s: %s\n", argv[i], snapfile__strerror(err));
		goto out;
	}
	w = snapfile_writer__open_opts(argv[i + 1], snapfile_reader__header(r), &o, &err);
	if (!w) {
		fprintf(stderr, "rewrite: %s: %s\n", argv[i + 1], snapfile__strerror(err));
		goto out;
	}
	err = copy_records(r, w, &n);
	if (err)
		fprintf(stderr, "rewrite: %s: %s\n", argv[i + 1], snapfile__strerror(err));
out:
	if (w) {
		int cerr = snapfile_writer__close(w);

		if (!err)
			err = cerr;
	}
	snapfile_reader__close(r);
	if (!err)
		printf("%llu records copied\n", (unsigned long long)n);
	return err ? 1 : 0;
}
