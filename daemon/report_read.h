/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report_read.h -- the sample records of a capture, read ahead by a thread
 * of their own for `ljsnap report`'s sample pass.
 *
 * Reading a record (the file, its checksum, its decoding) costs about as
 * much as unwinding and naming its stack; with a second CPU both run at
 * once.  The thread reads, checks and decodes SAMPLE records (every other
 * kind skipped, as the first pass read them) into a ring of copies; the
 * caller takes them in file order, with the reader's errors in their place
 * among them, so the report is the same as with one thread.  threads = 1
 * reads in the caller's thread instead.
 */
#ifndef LJSNAP_DAEMON_REPORT_READ_H
#define LJSNAP_DAEMON_REPORT_READ_H

#include <stdint.h>

#include "formats/capture/snapfile.h"

struct report_reader;

/* Open path for its samples, with a reading thread when threads > 1.  NULL
 * with *err (negative errno) on failure. */
struct report_reader *report_reader__open(const char *path, unsigned threads, int *err);

/* The next record in file order: 1 with *s (valid until the next call) and
 * *offset; -1 with *msg (the reader's error, valid until the next call);
 * 0 at the end; -ENOMEM when a copy could not be made. */
int report_reader__next(struct report_reader *rr, const struct ljs_sample **s, uint64_t *offset,
			const char **msg);

/* The file's header. */
const struct snapfile_header *report_reader__header(const struct report_reader *rr);

/* Stop the thread and close the file. */
/* Format 3: references to another sample's stack bytes that could not be
 * resolved (that sample was lost); their sections were cut.  Read it once
 * report_reader__next has returned 0. */
uint64_t report_reader__refs_lost(const struct report_reader *rr);

void report_reader__close(struct report_reader *rr);

#endif /* LJSNAP_DAEMON_REPORT_READ_H */
