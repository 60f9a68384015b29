/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_ljwalk.c -- the LuaJIT frame walker (unwind/ljwalk.h) on one sample
 * and a memory table of fuzzed bytes, under a built-in layout with fuzzed
 * perturbations (input format: fuzz_lj.h).  ljw__walk must never crash,
 * hang or return an unbounded stack.
 */
#include <stdint.h>
#include <stdlib.h>

#include "tests/fuzz/fuzz_lj.h"
#include "unwind/ljwalk.h"
#include "unwind/memsrc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_lj x;
	struct ljw_opts o = { 0 };
	struct memtable_src mts;
	struct ljw_stack st;
	struct memsrc sm;
	struct ljw *w;
	char line[256];
	size_t i;

	fz_lj__decode(&x, data, size);
	w = ljw__new();
	if (!w || !x.mt)
		goto out;
	memtable__memsrc(&mts, x.mt, x.s.pid, x.s.time_ns, NULL);
	memsrc__init_sample(&sm, &x.s, &mts.ms);
	o.vm_lo = x.vm_lo;
	o.vm_hi = x.vm_hi;
	o.trace_scan = x.trace_scan;
	o.max_frames = (x.trace_scan & 1) ? 0 : 200;
	if (ljw__walk(w, &x.lay, &x.s, &sm, &o, &st) == 0) {
		if (o.max_frames && st.nframes > o.max_frames + 1)
			abort();
		/* The names and lines report prints, for every frame. */
		for (i = 0; i < st.nframes; i++) {
			ljw_frame__format(&st.frames[i], line, sizeof(line));
			ljw_frame__short_src(&st.frames[i], line, sizeof(line));
		}
	}
out:
	ljw__delete(w);
	memtable__delete(x.mt);
	return 0;
}
