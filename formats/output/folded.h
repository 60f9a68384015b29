/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * folded.h -- aggregated stacks in the "folded" format of Brendan Gregg's
 * stackcollapse scripts, read by flamegraph.pl, inferno and speedscope:
 *
 *   root;frame;frame COUNT
 *
 * one line per distinct stack, root first, sorted by the stack text (byte
 * order) so that equal inputs give byte-identical output.  Frame names never
 * hold ';' or a newline (aggregate.c makes them safe); lines have no
 * trailing space.
 */
#ifndef LJSNAP_FOLDED_H
#define LJSNAP_FOLDED_H

#include <stdio.h>

#include "formats/output/aggregate.h"
#include "formats/output/output.h"

/* Write every stack of a to out (the folded output of output.h; o may be
 * NULL).  0, -ENOMEM, or -EIO on a write error. */
int folded__write(const struct agg *a, const struct output_opts *o, FILE *out);

#endif /* LJSNAP_FOLDED_H */
