/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * speedscope.h -- the profile as a speedscope file (speedscope's own JSON
 * format, file-format-schema.json of the speedscope package):
 *
 *   { "$schema": ..., "exporter": "ljsnap VERSION", "name": CAPTURE,
 *     "activeProfileIndex": 0,
 *     "shared": { "frames": [ { "name", "file"?, "line"? }, ... ] },
 *     "profiles": [ { "type": "sampled", "name": "comm (pid N)",
 *                     "unit": "none", "startValue": 0, "endValue": SUM,
 *                     "samples": [ [frame, ...], ... ], "weights": [ ... ] } ] }
 *
 * One profile per process (per thread with output_opts.per_thread), in the
 * order of agg__procs (most samples first).  A sample is a stack of frame
 * indexes root first, the root being the process name, so a profile shows
 * the stacks the folded output prints for that pid, with the same frame
 * names; its weight is the number of samples of that stack.  The profiles
 * come from the labelled groups (agg__groups: `ljsnap report` labels every
 * sample for this format); a profile model without any gives one profile of
 * every stack, named by its root.  The file is written as it goes (memory
 * bounded by the profile model, not the file).
 */
#ifndef LJSNAP_SPEEDSCOPE_H
#define LJSNAP_SPEEDSCOPE_H

#include <stdio.h>

#include "formats/output/aggregate.h"
#include "formats/output/output.h"

/* Write a as a speedscope file (o may be NULL: one profile per process).
 * 0, -ENOMEM, or -EIO on a write error. */
int speedscope__write(const struct agg *a, const struct output_opts *o, FILE *out);

#endif /* LJSNAP_SPEEDSCOPE_H */
