/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * html.h -- the profile as one self-contained HTML page: an interactive
 * flame graph (zoom, regular-expression search, icicle view, tooltips,
 * colours by frame kind) drawn on a <canvas> by the page's own script.
 *
 * The page is formats/output/flamegraph.html, compiled in as a C string
 * (the build generates formats/output/flamegraph_html.h from it).  The
 * profile goes in its <script type="application/json"> element:
 *
 *   { "v": 1, "file", "selection", "lines", "total",
 *     "time": { "start_ms", "duration_ns", "freq_hz" },
 *     "walk": { "samples", "lua_state", "to_main", "clean", "with_unknown", ... },
 *     "procs": [[pid, comm, samples, build or null], ...], "notes": [...],
 *     "kinds": [kind name, ...]           (ljs_fkind__name, by enum value)
 *     "frames": [name, kind, name, kind, ...]   (frame i at 2i, 2i + 1)
 *     "tree": [depth, frame, self, ...] }
 *
 * "frames" holds every frame sorted by name (then kind); "tree" is the call
 * tree of the stacks in preorder, children by frame name: one triple per
 * node, its depth (0: the process roots), its frame index and the samples
 * whose stack ends there.  A node's parent is the last node before it one
 * level up; its total is its self plus its children's totals.  Names are
 * exactly the folded output's; '<' is written as \u003c, so the JSON never
 * holds "</script".
 */
#ifndef LJSNAP_HTML_H
#define LJSNAP_HTML_H

#include <stdio.h>

#include "formats/output/aggregate.h"
#include "formats/output/output.h"

/* Write the page (o unused, may be NULL).  0, -ENOMEM, or -EIO on a write
 * error. */
int html__write(const struct agg *a, const struct output_opts *o, FILE *out);

#endif /* LJSNAP_HTML_H */
