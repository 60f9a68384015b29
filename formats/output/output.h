/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * output.h -- the output formats of `ljsnap report`, one table entry each.
 *
 * Every format reads the one profile model (aggregate.h) and writes a file;
 * adding a format is one file with its write function and one entry in
 * output.c's table.
 */
#ifndef LJSNAP_OUTPUT_H
#define LJSNAP_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include "formats/output/aggregate.h"

/* Options every format may use (the text summary does). */
struct output_opts {
	unsigned top;			/* rows per top list (0 = 25) */
	int by_trace;			/* also the samples per JIT trace */
	int per_thread;			/* speedscope: one profile per thread, not per process */
};

struct output_format {
	const char *name;		/* what -f takes */
	const char *summary;		/* one line for --help */
	int notes_inline;		/* it prints the profile's notes itself (else
					 * the caller writes them to stderr) */
	/* 0, -ENOMEM, or -EIO on a write error */
	int (*write)(const struct agg *a, const struct output_opts *o, FILE *out);
	const char *suffix;		/* -o names ending so choose this format without -f */
	const char *view;		/* how to look at the file, "%s" = its name (NULL: none) */
	unsigned needs;			/* OUTPUT_NEEDS_* */
};

#define OUTPUT_NEEDS_SRC	0x1	/* frames with files, lines, addresses (LJS_PIPE_DETAILS) */
#define OUTPUT_NEEDS_LABELS	0x2	/* samples grouped by pid, tid and VM state */

/* The format called name, or NULL. */
const struct output_format *output__find(const char *name);

/* The format whose suffix ends path (the longest match), or NULL. */
const struct output_format *output__for_file(const char *path);

/* Print f's view hint with every "%s" replaced by path (nothing without one). */
void output__print_view(const struct output_format *f, const char *path, FILE *out);

/* Every format, in the table's order. */
const struct output_format *output__formats(size_t *n);

#endif /* LJSNAP_OUTPUT_H */
