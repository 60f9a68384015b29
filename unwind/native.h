/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * native.h -- native (DWARF CFI) unwinding of one sample, offline.
 *
 * Input: the user registers of a sample, its copy of the user stack (bytes
 * from regs.sp upward) and the process's file mappings with their load
 * biases.  The CFI (.eh_frame, .debug_frame) of every mapped ELF file is read
 * by libdw (elfutils Dwfl with custom thread callbacks): memory reads are
 * served from the stack copy first, then from an optional memory source
 * (the pipeline gives none: unwind/pipeline.c native_unwind).  Where a
 * pc has no CFI, libdw falls back to frame pointers; code that has neither
 * (LuaJIT traces in anonymous mappings) is stepped by a caller-supplied hook,
 * for which native__step_lj (native_lj.c) implements LuaJIT's rule from plain
 * numbers.
 *
 * One Dwfl ("address space") is kept per distinct mapping set and reused for
 * every sample of every process with that set (forked workers share one);
 * at most native_unw_opts.max_spaces are open at once, least recently used
 * evicted.  Not thread-safe: one struct native_unw per thread.  The only
 * file access in unwind/ is libdw opening the files named by native_map.path.
 *
 * libdw finds the CFI; it does not step every frame.  Its own step re-runs
 * the CIE/FDE programs and evaluates every register's rule as a DWARF
 * expression, with a few mallocs, for every frame (1.1-1.6 us per frame).
 * So the row of each pc is asked of libdw once and kept in the address
 * space as a compact rule (native_cfi.c), and the walk steps frames with
 * those rules in libdw's own order of reads and checks (native_fast.c).
 * A sample that needs more (libdw's frame-pointer step at a pc without
 * CFI, a CFI expression the rule does not keep, libdw's error message) is
 * unwound again by libdw itself, so the frames are the same either way
 * (native_unw_opts.no_rule_cache turns the rules off).
 *
 * tests/native/bench_native.c shows the wiring for `ljsnap report`: an
 * objcache, a symbolizer and a native_unw per report, a procmap per PROCESS
 * record (its nmaps are this unwinder's input, procmap__memsrc_init its extra
 * memory), LuaJIT's rule from the sample's L window and trace header.
 */
#ifndef LJSNAP_UNWIND_NATIVE_H
#define LJSNAP_UNWIND_NATIVE_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/ljsnap.h"
#include "unwind/memsrc.h"
#include "unwind/sample.h"

/* x86_64 DWARF register numbers (the index into native_regs.r). */
enum native_reg {
	NATIVE_RAX = 0, NATIVE_RDX, NATIVE_RCX, NATIVE_RBX, NATIVE_RSI, NATIVE_RDI,
	NATIVE_RBP, NATIVE_RSP, NATIVE_R8, NATIVE_R9, NATIVE_R10, NATIVE_R11,
	NATIVE_R12, NATIVE_R13, NATIVE_R14, NATIVE_R15, NATIVE_RIP,
	NATIVE_NREGS
};

/* A register set; bit i of valid says r[i] is known. */
struct native_regs {
	uint64_t r[NATIVE_NREGS];
	uint32_t valid;
};

/* One mapping of the process, as the unwinder needs it. */
#define NATIVE_MAP_EXEC		0x1	/* executable mapping */
#define NATIVE_MAP_CFI		0x2	/* report path to libdw for its CFI (file found, bias known) */
#define NATIVE_MAP_STACK	0x4	/* a thread stack ([stack]) */
#define NATIVE_MAP_ANON		0x8	/* anonymous (no file): JIT code lives here */

struct native_map {
	uint64_t start, end;	/* [start, end) */
	uint64_t bias;		/* runtime = bias + link-time vaddr (NATIVE_MAP_CFI) */
	const char *path;	/* file to read the CFI from (NATIVE_MAP_CFI), else any */
	uint32_t flags;		/* NATIVE_MAP_* */
};

/* The caller's mapping set.  key must be equal for equal contents (then
 * they share one address space); native_maps__init computes one.  Sets are
 * compared in full on a key match (once per array: the same v pointer with
 * the same key is taken as the same set, so recompute the key after changing
 * v in place), so a collision costs nothing but speed. */
struct native_maps {
	const struct native_map *v;
	size_t n;
	uint64_t key;
};

/* How a frame was reached. */
enum native_how {
	NATIVE_HOW_REGS = 0,	/* the sampled registers */
	NATIVE_HOW_CFI,		/* libdw stepped from a frame inside a module it has (CFI, or
				 * its frame-pointer fallback where the CFI has no entry) */
	NATIVE_HOW_FP,		/* libdw stepped from a pc in no module: frame pointers */
	NATIVE_HOW_HOOK,	/* the step_unknown hook stepped from the previous frame */
};

struct native_frame {
	uint64_t pc;		/* exact pc (activation) or return address */
	uint64_t sp;		/* rsp while this frame runs (= the callee's CFA) */
	uint64_t cfa;		/* this frame's CFA (= caller's sp), 0 for the last frame */
	int map;		/* index into the caller's native_maps.v, -1 if none */
	uint32_t map_flags;	/* that mapping's NATIVE_MAP_* (0 if none) */
	uint8_t how;		/* enum native_how */
	uint8_t activation;	/* 1: pc is exact (first or signal frame); 0: pc is a
				 * return address (look up pc - 1) */
	uint8_t in_module;	/* libdw has the file (and its CFI) for this pc */
	struct native_regs regs;	/* registers as this frame sees them (rsp, rip always) */
};

/* How the unwind ended. */
enum native_end {
	NATIVE_END_NONE = 0,
	NATIVE_END_COMPLETE,	/* outermost frame reached: its CFI says it has no caller */
	NATIVE_END_TRUNCATED,	/* needed stack bytes beyond the copy */
	NATIVE_END_NO_INFO,	/* no CFI and no frame pointer chain at a pc */
	NATIVE_END_BAD_PC,	/* a pc outside every executable mapping (garbage) */
	NATIVE_END_BAD_SP,	/* sp did not increase */
	NATIVE_END_BAD_READ,	/* a read outside the stack copy and every other source */
	NATIVE_END_HOOK,	/* the step_unknown hook failed */
	NATIVE_END_LIMIT,	/* max_frames reached */
	NATIVE_END_NO_REGS,	/* the sample has no user registers */
	NATIVE_END_ERROR,	/* libdw error (see native_stack.msg) */
	NATIVE_END_RA_ZERO,	/* the next return address read 0 but the CFI does not mark
				 * the frame outermost: the end of a thread whose start code
				 * lacks that mark, or a wrong CFA (e.g. a VM subroutine) */
	NATIVE_END__MAX
};

struct native_stack {
	struct native_frame *frames;	/* innermost first; owned by the unwinder */
	size_t nframes;
	enum native_end end;
	int complete;			/* end == NATIVE_END_COMPLETE */
	int truncated;			/* end == NATIVE_END_TRUNCATED */
	uint32_t nhook;			/* frames stepped by the hook */
	uint64_t fault_addr;		/* the memory read that ended the walk, if any */
	const char *msg;		/* libdw's message when end == ERROR/NO_INFO, else "" */
};

/* Step over a frame that no CFI covers (pc in no module, or in
 * [hook_lo, hook_hi)).  f is that frame;
 * mem reads the stack copy (then native_opts.mem).  Fill out with the
 * caller's registers (rip and rsp at least, valid bits set).  Return 0 when
 * stepped, -ENOENT to let libdw try frame pointers, any other negative errno
 * to stop the walk with NATIVE_END_HOOK. */
typedef int (*native_step_fn)(void *arg, const struct native_frame *f, const struct memsrc *mem,
			      struct native_regs *out);

struct native_opts {
	uint32_t max_frames;		/* 0 = NATIVE_MAX_FRAMES */
	const struct memsrc *mem;	/* memory beyond the stack copy, or NULL */
	native_step_fn step_unknown;	/* or NULL: libdw's frame-pointer fallback only */
	void *step_arg;
	uint64_t hook_lo, hook_hi;	/* pcs here go to step_unknown first even inside a
					 * module (it declines with -ENOENT to let the CFI
					 * step), e.g. LuaJIT's VM, whose one FDE is only
					 * right at the interpreter's resting rsp */
};

#define NATIVE_MAX_FRAMES	1024

/* Unwinder-wide options. */
struct native_unw_opts {
	uint32_t max_spaces;		/* open Dwfl address spaces kept; 0 = 32 */
	int debuginfo;			/* 1: let libdw look for separate debug files
					 * (.debug_frame); 0 (default): only the mapped files */
	int no_rule_cache;		/* 1: every step by libdw itself, no CFI rules
					 * cached per pc (native_cfi.c; for comparisons) */
};

/* Counters over the life of the unwinder. */
struct native_unw_stats {
	uint64_t unwinds, frames, restarts, hook_steps;
	uint64_t end[NATIVE_END__MAX];
	uint64_t spaces_created, spaces_evicted;
	uint64_t modules_reported, modules_failed;	/* dwfl_report_elf results */
	uint64_t fast_bails;		/* unwinds the cached rules left to libdw */
};

struct native_unw;

/* Allocate / free an unwinder (NULL opts = defaults).  NULL on -ENOMEM. */
struct native_unw *native_unw__new(const struct native_unw_opts *o);
void native_unw__delete(struct native_unw *u);

/* Compute m->key from the contents of m->v (start, end, bias, path, flags). */
void native_maps__init(struct native_maps *m, const struct native_map *v, size_t n);

/* Unwind one stack.  regs: the user registers at the sample; ustack: the
 * stack copy (its addr is where data[0] was copied from; NULL = no copy).
 * out is always filled (frames up to the failure, and the end reason);
 * returns 0, -EINVAL on bad arguments, or -ENOMEM.  Frames stay valid until
 * the next call or native_unw__delete. */
int native__unwind(struct native_unw *u, const struct native_maps *m, const struct ljs_regs *regs,
		   const struct ljs_section *ustack, const struct native_opts *o,
		   struct native_stack *out);

/* Same, from a decoded sample (its LJS_SEC_USTACK section and regs). */
int native__unwind_sample(struct native_unw *u, const struct native_maps *m,
			  const struct ljs_sample *s, const struct native_opts *o,
			  struct native_stack *out);

/* Index of the innermost frame whose pc lies in [lo, hi), or -1. */
long native_stack__find(const struct native_stack *st, uint64_t lo, uint64_t hi);

/* A frame's registers as a struct ljs_regs (unknown ones read as 0), e.g. for
 * ljw_opts.vm_regs at the frame that returns into the VM. */
void native_frame__to_ljs_regs(const struct native_frame *f, struct ljs_regs *out);

/* Registers of a sample in DWARF order (all valid). */
void native_regs__from_ljs(struct native_regs *out, const struct ljs_regs *r);

const struct native_unw_stats *native_unw__stats(const struct native_unw *u);
const char *native_end__name(enum native_end e);
const char *native_how__name(enum native_how h);

/* -- LuaJIT's rule for code without CFI (native_lj.c) --------------------- */

/* Everything the rule needs, as numbers (no LuaJIT structs).  A trace runs in
 * the interpreter activation that entered it, with rsp = cframe - jloop_adjust
 * - spadjust: CFA = cframe + cf_size, return address at CFA - 8, rbp, rbx,
 * r15, r14 at CFA + off_rbp/off_rbx/off_r15/off_r14 (-16, -24, -32, -40 in
 * every known build).  In the interpreter [vm_lo, vm_hi): a frame at or
 * below the cframe belongs to the innermost activation, so CFA = cframe +
 * cf_size wherever rsp is (inside a VM subroutine too, where the VM's FDE is
 * wrong); a frame above it is an older activation at its resting rsp, left to
 * the CFI (-ENOENT), or when the VM's file is missing, CFA = rsp + cf_size.
 * Pass [vm_lo, vm_hi) as native_opts.hook_lo/hook_hi too.
 *
 * One VM frame above the cframe is no resting activation: the trace exit
 * handler (vm_x64.dasc ->vm_exit_handler) at its call of lj_trace_exit,
 * while a C frame inside that call (lj_vm_cpcall of lj_snap_restore or of
 * the trace compiler, lj_trace.c) is L->cframe.  There rsp is the ExitState
 * (lj_target_x86.h) the handler pushed, whose saved rsp, exit_size bytes up
 * (ExitState.spill), is the trace's: the frame is stepped as that trace,
 * in the activation whose C frame is the innermost one of L->cframe's chain
 * (cf_prev) at or above it. */
struct native_lj_rule {
	uint64_t trace_lo, trace_hi;	/* the running trace's mcode [lo, hi), or 0, 0 */
	int32_t any_unknown;		/* 1: also apply the trace rule to any other pc in an
					 * anonymous mapping or in none (exit stubs, linked
					 * traces of the mcode area; never [vdso]) */
	uint64_t vm_lo, vm_hi;		/* interpreter code, used when its file is missing; 0 = none */
	uint64_t cframe;		/* L->cframe & ~3; 0 = derive from rsp */
	uint32_t cf_size;		/* CFRAME_SIZE: 80, 96, ... */
	uint32_t spadjust;		/* GCtrace.spadjust */
	uint32_t jloop_adjust;		/* 16 on x86_64 (BC_JLOOP's extra push area) */
	int32_t off_rbp, off_rbx, off_r15, off_r14;	/* from the CFA */
	int32_t jit_save;		/* 1: r12, r13 at cframe + off_r12_cf / off_r13_cf */
	int32_t off_r12_cf, off_r13_cf;	/* (BC_JLOOP: GC64 0 / -8, non-GC64 0 / +8) */
	uint64_t exit_ret;		/* return address of the exit handler's call of
					 * lj_trace_exit (native_lj__exit_ret), or 0 */
	uint32_t exit_size;		/* sizeof(ExitState) without its spill slots: 256 */
	uint32_t exit_rsp_off;		/* ExitState.gpr[RID_ESP]: 128 + 4 * 8 */
	uint32_t cf_prev;		/* CFRAME_OFS_PREV (lj_frame.h): 32 */
};

/* Fill the x86_64 defaults: jloop_adjust 16, offsets -16, -24, -32, -40,
 * r12/r13 where BC_JLOOP of a GC64 (gc64 != 0) or non-GC64 build saves them. */
void native_lj_rule__init(struct native_lj_rule *r, uint32_t cf_size, int gc64);

struct lj_layout;

/* Build LuaJIT's rule for one sample of a process running the build `lay`
 * with its interpreter at [vm_lo, vm_hi): cframe from the sample's lua_State
 * window, the trace's code range and spadjust from its GCtrace header.
 * Returns 1 when a rule applies (a trace, or a known VM range), else 0. */
int native_lj_rule__from_sample(struct native_lj_rule *r, const struct lj_layout *lay,
				const struct ljs_sample *s, uint64_t vm_lo, uint64_t vm_hi);

/* The return address of the exit handler's `call extern lj_trace_exit` in
 * the interpreter code [code, code + len) that starts at address addr, or 0
 * when the code holds no exit handler (a build without the JIT).
 * native_lj.c says how it is found. */
uint64_t native_lj__exit_ret(const uint8_t *code, size_t len, uint64_t addr);

/* A native_step_fn: arg is a const struct native_lj_rule *. */
int native__step_lj(void *arg, const struct native_frame *f, const struct memsrc *mem,
		    struct native_regs *out);

#endif /* LJSNAP_UNWIND_NATIVE_H */
