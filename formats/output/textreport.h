/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * textreport.h -- the human-readable summary of an aggregate: top functions
 * by self and total samples, VM states, how well the stacks were unwound,
 * the processes sampled, what the capture file reader noticed, and the
 * samples per JIT trace.
 */
#ifndef LJSNAP_TEXTREPORT_H
#define LJSNAP_TEXTREPORT_H

#include <stdint.h>
#include <stdio.h>

#include "formats/output/aggregate.h"
#include "formats/output/output.h"

/* Write the summary: the text output of output.h.  0, -ENOMEM, or -EIO on a
 * write error. */
int textreport__write(const struct agg *a, const struct output_opts *o, FILE *out);

#endif /* LJSNAP_TEXTREPORT_H */
