/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pprof.h -- the profile as google/pprof's profile.proto (proto3), gzip
 * compressed, for `go tool pprof` and the other readers of that format.
 *
 * What goes where:
 *   sample_type   [samples/count, cpu/nanoseconds]; period_type cpu/nanoseconds,
 *                 period 1e9 / the sampling frequency (99 Hz when unknown),
 *                 time_nanos and duration_nanos from the recording;
 *   Sample        one per labelled group of the profile model (a stack with its
 *                 pid, tid and VM state): values [count, count * period],
 *                 location_id leaf first, labels pid and tid (numeric), comm
 *                 (the stack's root frame, which is no location unless it
 *                 is alone) and vm (the VM state's name, "none" without
 *                 LuaJIT state);
 *   Function      one per frame used: name is the frame's name exactly as the
 *                 folded output prints it, system_name the function alone
 *                 (symbol, Lua function name) where that differs from it;
 *                 filename and start_line where the frame's source says;
 *   Location      Lua-side frames (Lua, builtins, C functions, VM states,
 *                 [unknown]): address 0 in one mapping "[lua]"; native frames:
 *                 their pc in the mapping of their file (one per file, build
 *                 id and load address; the main binary first), with the
 *                 functions the compiler inlined there as extra Lines,
 *                 innermost first; kernel frames: their pc in one mapping
 *                 "[kernel.kallsyms]";
 *   Mapping       has_functions set on every one (the names are final: pprof
 *                 never symbolizes again); has_filenames / has_line_numbers
 *                 where lines are known, has_inline_frames where Lines were
 *                 inlined;
 *   comment       the profile's notes.
 * Ids of mappings, locations and functions are dense from 1, in the order
 * first used; string_table[0] is "" and the table comes last.  Equal
 * profiles give byte-identical files.
 */
#ifndef LJSNAP_PPROF_H
#define LJSNAP_PPROF_H

#include <stdio.h>

#include "formats/output/aggregate.h"
#include "formats/output/output.h"

/* Write a as a gzip-compressed profile.proto to out (o unused, may be
 * NULL).  0, -ENOMEM, or -EIO on a write error. */
int pprof__write(const struct agg *a, const struct output_opts *o, FILE *out);

#endif /* LJSNAP_PPROF_H */
