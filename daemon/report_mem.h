/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report_mem.h -- harvested memory for report's samples, loaded whole or
 * streamed.
 *
 * A capture holds a MEMORY record each time the recorder saw a range's
 * bytes change, so a long one holds many versions of the same objects.
 * Two ways to give each sample the memory it needs:
 *   - load: the first pass adds every MEMORY record to the table, which
 *     then holds them all while samples are walked (memory grows with the
 *     capture);
 *   - stream: the first pass notes when records come (report_mem_plan, with
 *     the samples' heads: snapfile_reader__sample_heads), and while samples
 *     are walked in file order a second reader adds MEMORY records just
 *     ahead of them and the table drops what no later sample can use
 *     (memtable__expire, memtable__drop_pid):
 *       - every MEMORY record first seen up to a sample's time plus the
 *         table's slack is in the table when the sample is walked: records
 *         come in file order with first_ns out of order by at most the
 *         disorder the first pass measured, so reading until one is first
 *         seen later than that is enough;
 *       - no later sample is earlier than the latest sample time so far
 *         minus the samples' measured disorder: the table expires at that
 *         time;
 *       - a pid's entries go once its last sample (by file offset) is
 *         walked.
 *     Records past the end the first pass saw (a file still being
 *     written) are not loaded, and nothing is dropped once a sample past
 *     that end comes.  It costs a read of every sample chunk in the first
 *     pass.
 * Either way each sample's memory reads get the same answers.
 */
#ifndef LJSNAP_REPORT_MEM_H
#define LJSNAP_REPORT_MEM_H

#include <stdint.h>

#include "formats/capture/snapfile.h"
#include "symtab/intmap.h"
#include "unwind/memtable.h"

/* What the first pass learns. */
struct report_mem_plan {
	struct memtable *load;		/* load: the table the records go to; NULL: stream */
	uint64_t records;		/* MEMORY records */
	uint64_t mem_max, mem_disorder;	/* their latest first_ns so far, and how far one
					 * came before an earlier one (ns) */
	uint64_t s_max, s_disorder;	/* the same for sample times */
	uint64_t end;			/* offset of the last record read */
	int have_s, have_mem;
	struct intmap last;		/* pid -> offset of its last sample */
	int err;			/* -ENOMEM met */
};

/* load_into: the table to load MEMORY records into, or NULL to stream
 * them (then the first pass must read the samples' heads). */
void report_mem_plan__init(struct report_mem_plan *pl, struct memtable *load_into);
void report_mem_plan__exit(struct report_mem_plan *pl);
/* Note each record the first pass reads, in file order: a sample's head
 * (SNAPFILE_REC_SAMPLE_HEAD), a MEMORY record (loaded now when loading), or
 * any other (only its offset counts).  0, or -EINVAL for a MEMORY record
 * the table would refuse (not noted).  A failed allocation is kept in
 * pl->err. */
int report_mem_plan__record(struct report_mem_plan *pl, const struct snapfile_rec *rec);

struct report_mem;

/* A loader of path's MEMORY records into mt, whose slack is slack_ns, per
 * the plan (which must outlive it; with a loading plan it has nothing left
 * to do).  pid (when not NULL): load only that pid's records.  NULL with
 * *err (negative errno). */
struct report_mem *report_mem__open(const char *path, struct memtable *mt, uint64_t slack_ns,
				    const struct report_mem_plan *pl, const uint32_t *pid,
				    int *err);
void report_mem__close(struct report_mem *rm);

/* Before a sample (time, file offset) read in file order, walked or not:
 * load and drop what it and the samples before it allow.  0 or -ENOMEM. */
int report_mem__before(struct report_mem *rm, uint64_t time_ns, uint64_t offset);

#endif /* LJSNAP_REPORT_MEM_H */
