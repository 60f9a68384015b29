/*
 * textreport.h -- the human-readable summary of an aggregate: top functions
 * by self and total samples, VM states, how well the stacks were unwound,
 * the processes sampled, and what the capture file reader noticed.
 */
#ifndef LJSNAP_TEXTREPORT_H
#define LJSNAP_TEXTREPORT_H

#include <stdint.h>
#include <stdio.h>

#include "formats/output/aggregate.h"

/* A process that had samples in the report. */
struct textreport_proc {
	uint32_t pid;
	const char *comm;
	const char *build;		/* LuaJIT build description, NULL = no LuaJIT */
	uint64_t samples;
};

struct textreport_in {
	const char *file;		/* capture file name */
	const char *selection;		/* "pid 123", or NULL for everything */
	const struct agg *agg;
	unsigned top;			/* rows per top list (0 = 25) */
	const struct textreport_proc *procs;
	size_t nprocs;
	const char *const *notes;	/* reader and recorder notes, one per line */
	size_t nnotes;
};

/* Write the summary.  0, -ENOMEM, or -EIO on a write error. */
int textreport__write(const struct textreport_in *in, FILE *out);

#endif /* LJSNAP_TEXTREPORT_H */
