/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dump.h -- the live views' shared parts (dump_live.c): the pipeline on a
 * live process, and the short BPF sampling burst `ljsnap dump` takes
 * (dump_live.c).
 */
#ifndef LJSNAP_DUMP_H
#define LJSNAP_DUMP_H

#include <stdint.h>
#include "daemon/vdso.h"
#include "unwind/detect/ljdetect.h"
#include "unwind/pipeline.h"

/* Where a process runs LuaJIT, and the layout to walk it with. */
struct live_lj {
	struct lj_layout layout;
	uint64_t vm_lo, vm_hi;
};

/* Describe a live process for the pipeline: the mappings of pd (NULL:
 * none, Lua frames only) resolved with ljs_pipe__proc, LuaJIT from lj
 * (NULL: none).  ljs_proc__exit frees it.  0 or -ENOMEM (a mapping the
 * pipeline cannot resolve is left out, not an error). */
int live__proc(struct ljs_pipe *pipe, const struct lj_proc_detect *pd, const struct vdso_image *vdso,
	       const struct live_lj *lj, struct ljs_proc *out);

/* Give the pipeline this machine's vDSO image (before the processes). */
void live__vdso(struct ljs_pipe *pipe, const struct vdso_image *vdso);

/* Run the pipeline on a sample of a live process: the sample's windows,
 * then its live memory (process_vm_readv).  0 or negative errno. */
int live__sample(struct ljs_pipe *pipe, const struct ljs_proc *proc, const struct ljs_sample *s,
		 const char *comm, struct ljs_pipe_out *out);

/* A short burst of BPF samples of one process's threads (dump_live.c):
 * the program from daemon/bpfload.h configured with lj, each sample of pid
 * handed to cb until cb returns nonzero or `seconds` pass.  errbuf says
 * what failed.  0 or negative errno. */
int live__burst(uint32_t pid, const struct live_lj *lj, uint32_t freq_hz, double seconds,
		int (*cb)(void *arg, const struct ljs_sample *s), void *arg, char *errbuf,
		size_t errlen);

/* A LuaJIT VM of a live process, read from memory alone (dump_mem.c). */
struct live_vm {
	uint64_t g, L;		/* global_State and its cur_L */
	uint64_t cframe;	/* cur_L's L->cframe (lj_frame.h), 0: not inside Lua */
	int32_t vmstate;	/* g->vmstate */
	uint32_t tid;		/* the thread whose stack holds cframe (the only thread
				 * of a process with one); 0 unknown */
};

/* Find the VMs of pd's process from memory, without registers: the g's of
 * known (0 entries skipped) and those lua_State pointers on its blocked
 * threads' stacks lead to, each checked against GG_State's self-references.
 * Nothing stops the target.  At most max into out, *n of them.  0 or
 * negative errno (the process's threads cannot be listed, -ENOMEM). */
int live__vms(const struct lj_proc_detect *pd, const struct lj_layout *lay, const uint64_t *known,
	      size_t nknown, struct live_vm *out, size_t max, size_t *n);

#endif
