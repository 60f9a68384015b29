/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pipeline.h -- the one way from a sample to a stack of named frames.
 *
 *   sample (bpf/ljsnap.h, unwind/sample.h)
 *   + memory (a memsrc chain: the sample's windows, the capture's memory
 *     table, or the live process)
 *   + process description (struct ljs_proc: mappings resolved on this
 *     machine, where LuaJIT runs and its layout)
 *   -> kernel frames (the capture's kernel symbols), native frames unwound
 *      with DWARF CFI (unwind/native.h) and symbolized (symtab/), the Lua
 *      frames walked (unwind/ljwalk.h) and spliced in where the VM runs them,
 *      every frame named (unwind/stack.h).
 *
 * report, doctor, the benchmarks and the live views all build their stacks
 * here; nothing else wires the unwinders and the symbolizer together.
 * A pipeline owns its object cache, symbolizer, native unwinder and walker:
 * one per thread, reused for every sample.  No I/O but reading the recorded
 * files (binaries, debug files) on this machine.
 */
#ifndef LJSNAP_UNWIND_PIPELINE_H
#define LJSNAP_UNWIND_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "symtab/buildid.h"
#include "symtab/ksyms.h"
#include "unwind/ljwalk.h"
#include "unwind/memsrc.h"
#include "unwind/proc.h"
#include "unwind/sample.h"
#include "unwind/stack.h"

#define LJS_PIPE_LUA_ONLY	0x1	/* only Lua frames and pseudo frames */
#define LJS_PIPE_NATIVE_ONLY	0x2	/* no Lua frames: VM activations as native symbols */
#define LJS_PIPE_NO_KERNEL	0x4	/* no kernel frames */
#define LJS_PIPE_LINES		0x8	/* Lua frames by current line, native frames with
					 * their file:line (DWARF) */
#define LJS_PIPE_DETAILS	0x10	/* frames carry their source (struct ljs_frame_src) */
#define LJS_PIPE_MEMO		0x40	/* Lua walks remembered across samples (ljw_opts.memo):
					 * for a capture's memory */
#define LJS_PIPE_CALLSITE	0x20	/* Lua functions by call-site name, not by where
					 * they are defined (frame_name.h) */

struct ljs_pipe;

struct ljs_pipe_stats {
	uint64_t native;		/* samples unwound natively */
	uint64_t native_complete;	/* ... down to the outermost frame */
	uint64_t spliced;		/* samples whose Lua frames went to VM frames */
	uint64_t lua_unplaced;		/* ... with Lua activations left over (no VM frame) */
	uint64_t kernel;		/* samples with kernel frames */
	uint64_t ksym_missing;		/* kernel frames without a symbol */
	uint64_t lua_walks;		/* samples given to the Lua walker */
	uint64_t lua_remembered;	/* ... answered by an earlier walk (LJS_PIPE_MEMO) */
};

/* What one sample gave. */
struct ljs_pipe_out {
	struct ljs_stack stack;		/* root (the process name) first */
	int has_trace;			/* the sample ran in a JIT trace: */
	struct ljs_trace_hit trace;	/* which (pointers valid until the next sample) */
	const struct ljw_stack *lua;	/* the Lua walk, or NULL (valid until the next sample) */
	int vm;				/* enum ljs_vm of the sample, -1: no LuaJIT state */
};

/* Create (files: where the recorded files are looked up, NULL: this
 * machine's /) and free.  NULL on -ENOMEM. */
struct ljs_pipe *ljs_pipe__new(unsigned flags, const struct buildid_opts *files);
void ljs_pipe__delete(struct ljs_pipe *p);

/* Resolve a process's recorded mappings into out (its LuaJIT fields are
 * the caller's to set); ljs_proc__exit frees them.  0, -EINVAL, -ENOMEM. */
int ljs_pipe__proc(struct ljs_pipe *p, const struct procmap_desc *maps, size_t n,
		   struct ljs_proc *out);

/* An ELF image that exists only in memory (the vDSO, carried by the
 * capture): names the frames in the mappings of its path.  Before the
 * processes that map it.  0, -EINVAL or -ENOMEM. */
int ljs_pipe__image(struct ljs_pipe *p, const char *path, const uint8_t *id, size_t idlen,
		    const uint8_t *data, size_t len);

/* A copy of a mapped file carried by the capture (symtab/elfcopy.h; *copy
 * is taken over and emptied): used for the objects of build id (id, idlen)
 * whose file is missing or another build.  Before the processes that map
 * it.  0, -EINVAL or -ENOMEM. */
struct elfcopy;
int ljs_pipe__copy(struct ljs_pipe *p, const uint8_t *id, size_t idlen, struct elfcopy *copy);

/* Kernel symbols (they accumulate); call __ksyms_done after the last. */
int ljs_pipe__ksyms(struct ljs_pipe *p, const struct ksym *v, size_t n);
int ljs_pipe__ksyms_done(struct ljs_pipe *p);

/*
 * Unwind the sample natively (when proc has mappings), walk its Lua frames
 * with ms (when proc runs LuaJIT), name every frame, and fill out (its
 * stack is reused: zero it once, ljs_stack__exit it at the end).  Counts
 * the walk in the statistics.  0 or negative errno.
 */
int ljs_pipe__sample(struct ljs_pipe *p, const struct ljs_proc *proc, const struct ljs_sample *s,
		     const struct memsrc *ms, const char *comm, struct ljs_pipe_out *out);

const struct ljs_pipe_stats *ljs_pipe__stats(const struct ljs_pipe *p);
const struct ljs_walk_stats *ljs_pipe__walk_stats(const struct ljs_pipe *p);
const struct native_unw_stats *ljs_pipe__native_stats(const struct ljs_pipe *p);

/* Files needed for native frames that were missing or of another build,
 * and whether the capture's copy stood in for them: one line each via cb.
 * Returns how many. */
size_t ljs_pipe__missing(struct ljs_pipe *p, void (*cb)(void *arg, const char *line), void *arg);

/* -- The walk in the terms of stack.h (also for callers that walk alone) -- */

/* Count one sample's walk (st NULL: the process has no usable LuaJIT). */
void ljs_walk_stats__count(struct ljs_walk_stats *s, const struct ljw_stack *st);

/* The VM state group of a walk. */
enum ljs_vm ljs_walk__vm(const struct ljw_stack *st);

/* The trace a walk attributed its sample to: 1 (hit filled) or 0. */
int ljs_trace_hit__from_walk(struct ljs_trace_hit *hit, const struct ljw_stack *ls);

#endif /* LJSNAP_UNWIND_PIPELINE_H */
