/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljwalk.h -- the offline LuaJIT frame walker.
 *
 * Given one sample (registers + byte windows), the build's layout and a
 * memory source, produce the Lua frames innermost first, named the way
 * LuaJIT's own debug.traceback() names them (from the call site) and, where
 * the parent prototype is reachable, by their definition.  A pure library: no syscalls,
 * no globals; every byte comes through the memsrc, every loop is bounded by
 * the data, and anything unresolvable becomes a counted [unknown: reason]
 * frame.  Strings in the result are owned by the walker until the next walk.
 */
#ifndef LJSNAP_LJWALK_H
#define LJSNAP_LJWALK_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/ljlayout.h"
#include "unwind/memsrc.h"
#include "unwind/sample.h"

enum ljw_kind {
	LJW_FRAME_LUA = 0,	/* Lua function */
	LJW_FRAME_C,		/* lua_CFunction (ffid 1) */
	LJW_FRAME_FF,		/* builtin ("fast function", ffid >= 2) */
	LJW_FRAME_PSEUDO,	/* VM state with no frame: [GC], [trace exit], [JIT compiler] */
	LJW_FRAME_UNKNOWN,	/* could not be resolved: see reason */
};

#define LJW_F_VARARG		0x001	/* reached through a FRAME_VARG link (shown once) */
#define LJW_F_TAILCALL		0x002	/* continuation with LJ_CONT_TAILCALL */
#define LJW_F_COROUTINE_BOUNDARY 0x004	/* first frame of a resumer thread */
#define LJW_F_TRACE		0x008	/* frame the running trace is positioned in */
#define LJW_F_INLINED		0x010	/* frame inlined into the running trace (not on the
					 * Lua stack: from the trace's snapshot) */
#define LJW_F_MAIN		0x020	/* a main chunk (LuaJIT what == "main") */
#define LJW_F_NOPC		0x040	/* Lua frame without a usable PC: line is -1 */
#define LJW_F_PCALL		0x080	/* called by pcall/xpcall (FRAME_PCALL link) */
#define LJW_F_CCALL		0x100	/* entered from C (FRAME_C / FRAME_CP link) */
#define LJW_F_CONT		0x200	/* called as a metamethod / continuation (FRAME_CONT) */
#define LJW_F_BUILTIN_LUA	0x400	/* bytecode builtin (firstline == -1) */

/* Why a frame could not be resolved.  Every value has a name for report. */
enum ljw_reason {
	LJW_R_NONE = 0,
	LJW_R_NO_G,		/* the sample carries no global_State */
	LJW_R_G_UNREADABLE,	/* g fields not in any source */
	LJW_R_BAD_G,		/* g failed its self-reference checks */
	LJW_R_L_UNREADABLE,	/* lua_State fields not in any source */
	LJW_R_BAD_L,		/* cur_L is not a thread of this g */
	LJW_R_NO_BASE,		/* no BASE candidate validated */
	LJW_R_STACK_CUT,	/* Lua stack slots missing (copy cut, no fallback) */
	LJW_R_BAD_FUNC,		/* frame slot does not hold a function */
	LJW_R_FUNC_UNREADABLE,	/* function object not in any source */
	LJW_R_PROTO_UNREADABLE,	/* GCproto not in any source */
	LJW_R_BAD_PROTO,	/* GCproto header inconsistent */
	LJW_R_BAD_LINK,		/* frame link leaves the stack or does not descend */
	LJW_R_BAD_CALL,		/* Lua link whose pc[-1] is not a call instruction */
	LJW_R_CALLER_MISMATCH,	/* return PC is not inside the caller's bytecode */
	LJW_R_BAD_RESUMER,	/* resumer lua_State unreadable or not a thread */
	LJW_R_TRACE_UNREADABLE,	/* GCtrace of vmstate unreadable or inconsistent */
	LJW_R_BAD_VMSTATE,	/* vmstate value outside every known state */
	LJW_R_FRAME_LIMIT,	/* ljw_opts.max_frames reached */
	LJW_R_NOMEM,		/* out of memory while walking */
	LJW_R_CALL_FRAMES,	/* the frames a trace had inlined at a call it made are not
				 * known (trace.src LJW_TS_SNAP_CALL_UNSURE) */
	LJW_R__MAX
};

/* How the walk ended. */
enum ljw_end {
	LJW_END_NONE = 0,
	LJW_END_COMPLETE,	/* reached the bottom of the main thread's stack */
	LJW_END_COROUTINE,	/* bottom of a coroutine whose resumer is not in the sample
				 * (resumed from C, or beyond the captured resumers) */
	LJW_END_NOT_IN_LUA,	/* L->cframe == NULL: the thread is not inside Lua */
	LJW_END_NO_LUA,		/* no LuaJIT state in the sample */
	LJW_END_ERROR,		/* stopped at an [unknown] frame */
	LJW_END_C_RESUME,	/* bottom of a coroutine resumed from C (lua_resume, as
				 * OpenResty runs every request): complete */
	LJW_END_OTHER_THREAD,	/* the running lua_State's C frame is not on the sampled
				 * thread's stack (ljw_opts.stack_lo/hi): a VM another
				 * thread (or fiber) runs; no frames */
	LJW__END_MAX
};

/* Where the top frame's BASE and PC came from. */
enum ljw_src {
	LJW_SRC_NONE = 0,
	LJW_SRC_REGS,		/* BASE = rdx, PC = rbx (RIP in the VM) */
	LJW_SRC_VM_REGS,	/* unwound rbp/rbx of the innermost VM frame */
	LJW_SRC_L_BASE,		/* L->base */
	LJW_SRC_JIT_BASE,	/* g->jit_base (on trace) */
	LJW_SRC_SAVE_PC,	/* SAVE_PC of L->cframe */
	LJW_SRC_TRACE_START,	/* GCtrace startpc */
	LJW_SRC_SNAPSHOT,	/* the trace snapshot covering the sampled machine code */
	LJW_SRC_RETURN,		/* the caller of the frame at rdx, at PC = rbx: a
				 * return or a call in progress (ret__caller) */
	LJW__SRC_MAX
};

/* How the position inside a trace was found (ljw_stack.trace.src).  Every
 * value but NONE and SNAP* is a fallback to the trace's start function. */
enum ljw_tsrc {
	LJW_TS_NONE = 0,	/* not attributed to a trace */
	LJW_TS_SNAP,		/* snapshot covering the sampled RIP (exact) */
	LJW_TS_SNAP_CALL,	/* snapshot covering the call the trace made (RIP in C code
				 * called from the trace: FFI, IR helpers) */
	LJW_TS_START,		/* start function: RIP outside the trace (exit stub, VM
				 * helper) and no return address into it */
	LJW_TS_NOSNAP,		/* start function: the build has no SnapShot.mcofs */
	LJW_TS_STALE,		/* start function: the sample's GCtrace header differs from
				 * the trace in memory (flushed, number or memory reused) */
	LJW_TS_BADSNAP,		/* start function: snapshot data unreadable or inconsistent */
	LJW_TS_NOHDR,		/* no usable GCtrace header: jit_base frame without a PC */
	LJW_TS_EXIT,		/* EXIT state: the exiting trace (J->parent) */
	LJW_TS_SNAP_CALL_UNSURE, /* RIP in C code the trace called, whose inlined frames
				 * no snapshot gives (ljt__snap_call): the covering
				 * snapshot's frames under an [unknown: call_frames] */
	LJW_TS_SNAP_CALL_PRIOR,	/* RIP in C code the trace called without side effects
				 * (IR CALLN, CALLL, CALLA, or code the backend calls): the
				 * covering snapshot's frames, taken before the call, which
				 * the next snapshot has too (Lua functions inlined and left
				 * between the two are in neither) */
	LJW_TS_SNAP_CALL_SPLIT,	/* the same kind of call, where the snapshots before and
				 * after it have different frames: the frames both have,
				 * under an [unknown: call_frames] */
	LJW_TS_SNAP_CALL_UNSEEN, /* the same kind of call, where the snapshots before
				 * and after it have the same frames but the trace
				 * inlines a Lua function that no snapshot shows: the
				 * call may have been made from it, so the frames under
				 * an [unknown: call_frames] */
	LJW_TS_SNAP_CALL_ALIKE,	/* RIP in C code the trace called, one of several
				 * side-effecting calls the sample cannot tell apart
				 * (f:write(s); f:flush() in a loop) whose snapshots all
				 * have the same frames, with each call on the same line:
				 * those frames */
	LJW__TS_MAX
};

/* How the trace was found (ljw_stack.trace.found). */
enum ljw_tfound {
	LJW_TF_NONE = 0,
	LJW_TF_VMSTATE,		/* g->vmstate holds its number */
	LJW_TF_LINK,		/* RIP in the trace vmstate's trace links to (head not yet run) */
	LJW_TF_JLOOP,		/* vmstate INTERP, RIP in the trace the JLOOP/JFORL/... at the
				 * PC register enters (before the trace stores its number) */
	LJW_TF_SCAN,		/* RIP found by scanning J->trace[] (ljw_opts.trace_scan) */
	LJW_TF_PARENT,		/* EXIT state: J->parent */
	LJW__TF_MAX
};

/* The trace a sample is attributed to.  TRACE_<traceno>::chunk:startline
 * names it the way LuaJIT's -jv/-jdump and perf maps do. */
struct ljw_trace {
	int traceno;		/* -1 when the sample is not attributed to a trace */
	int root;		/* its root trace (== traceno for a root trace), -1 unknown */
	int parent, exitno;	/* EXIT state: J->parent / J->exitno, else -1 */
	int snapno;		/* snapshot used (src SNAP*), else -1 */
	enum ljw_tsrc src;
	enum ljw_tfound found;
	uint64_t T, mcode;	/* GCtrace and its machine code */
	uint32_t szmcode;
	uint64_t mcofs;		/* machine-code offset looked up (src SNAP*) */
	uint32_t ninlined;	/* LJW_F_INLINED frames emitted */
	uint64_t startpt;	/* GCproto where recording started (0 unknown) */
	const char *chunkname;	/* its raw chunkname, or NULL */
	const char *chunk;	/* without the leading '@' / '=' */
	int linedefined;	/* its firstline */
	int startline;		/* line of startpc, -1 unknown */
};

struct ljw_frame {
	enum ljw_kind kind;
	uint32_t flags;		/* LJW_F_* */
	uint64_t fn;		/* GCfunc address (0 for pseudo/unknown) */
	uint64_t pt;		/* GCproto of a Lua function */
	uint64_t pc;		/* the saved PC (after the current instruction), 0 if none */
	int32_t pos;		/* bytecode index of the current instruction, -1 if none */
	uint64_t cfunc;		/* C entry of a C function or builtin */
	uint64_t L;		/* thread the frame lives in */
	uint64_t frame;		/* frame slot address (BASE - 8) */
	uint64_t cframe;	/* the C frame of the VM entry running this frame (L->cframe
				 * chain, lj_frame.h CFRAME_*): a native stack address,
				 * inside the native frame of that entry; 0 unknown */
	int ffid;		/* 0 Lua, 1 C, >= 2 builtin */
	int line;		/* current line, -1 unknown, 0 no line info */
	int linedefined;	/* GCproto.firstline (0 main chunk, -1 builtin bytecode) */
	int traceno;		/* trace number (LJW_F_TRACE, LJW_F_INLINED, and the
				 * [trace exit] / [JIT compiler] pseudo frames when known) */
	const char *name;	/* name as LuaJIT infers it from the caller, or NULL */
	const char *what;	/* "global", "local", "method", "field", "upvalue",
				 * "metamethod", or NULL (LuaJIT's namewhat) */
	const char *defname;	/* name where the function is defined ("g", "M.h",
				 * "M:m"), or NULL when its parent prototype was not
				 * reachable or the definition stores it nowhere */
	const char *defwhat;	/* "local", "global", "field", "method", "upvalue",
				 * or NULL */
	const char *ffname;	/* builtin's library name ("string.gsub"), or NULL */
	const char *chunkname;	/* raw chunkname of a Lua function ("@x.lua", "=stdin") */
	const char *chunk;	/* chunkname without the leading '@' or '=' */
	const char *pseudo;	/* PSEUDO: "[GC]", "[trace exit]", "[JIT compiler]" */
	enum ljw_reason reason;	/* UNKNOWN: why */
};

struct ljw_stack {
	struct ljw_frame *frames;	/* innermost first; owned by the walker */
	size_t nframes;
	enum ljw_end end;
	int complete;			/* end == LJW_END_COMPLETE or LJW_END_C_RESUME */
	int truncated;			/* data ran out before the bottom */
	uint32_t nunknown;		/* [unknown] frames emitted */
	uint32_t unknown[LJW_R__MAX];	/* per reason */
	int32_t vmstate;		/* g->vmstate at sample time */
	const char *vmstate_name;	/* "interp", "c", "gc", ..., "trace" */
	uint64_t g, L;			/* global_State and the thread walked first */
	uint64_t base, pc;		/* top frame BASE and PC chosen */
	enum ljw_src base_src, pc_src;
	uint32_t nthreads;		/* threads walked (1 + resumers) */
	int traceno;			/* == trace.traceno */
	struct ljw_trace trace;		/* trace attribution */
};

struct ljw_opts {
	uint64_t vm_lo, vm_hi;		/* interpreter code range [lo, hi); 0 = unknown */
	const struct ljs_regs *vm_regs;	/* registers unwound to the innermost VM
					 * frame (native unwinder), or NULL */
	uint32_t max_frames;		/* 0 = bounded by the data only */
	/* Trace snapshots and IR are read through ms_mem: the same chain without
	 * the sample's own windows, so that the sample's GCtrace header can be
	 * checked against the trace in memory (a flushed trace whose number or
	 * memory was reused).  NULL: if ms is a memsrc__init_sample source of
	 * this sample, its next; else ms (no check possible). */
	const struct memsrc *ms_mem;
	/* An address inside trace machine code the sample returns to (found by
	 * the native unwinder: RIP in C code called from a trace), or 0.  The
	 * walker also reads the trace's call slot below L->cframe itself. */
	uint64_t trace_ip;
	/* The registers the native unwinder found at trace_ip's frame (a call
	 * through a register, lj_emit_x86.h, names its function there), or NULL. */
	const struct ljs_regs *trace_regs;
	/* Scan up to this many J->trace[] entries for the trace containing RIP
	 * when vmstate does not name it (arm64-style builds, RIP known to be in
	 * an anonymous executable mapping); 0 = never scan. */
	uint32_t trace_scan;
	/* The sampled thread's stack [stack_lo, stack_hi): the mapping that holds
	 * regs.sp.  The running lua_State's L->cframe, a native stack address
	 * (vm_x64.dasc), must lie there, else the VM is another thread's (a g
	 * the BPF program took from its per-thread cache or the process's hint)
	 * and the walk ends with LJW_END_OTHER_THREAD.  0, 0: no check. */
	uint64_t stack_lo, stack_hi;
	/* Remember walks across samples and give a sample the frames of an
	 * earlier one when every register, field and byte it reads is the same
	 * (ljwalk_memo.c).  For a capture's memory, which only time changes;
	 * not for the recorder, whose reads decide what the capture keeps. */
	int memo;
};

struct ljw;

/* Walks answered by an earlier walk (ljw_opts.memo) so far. */
uint64_t ljw__memo_hits(const struct ljw *w);

/* Allocate / free a walker (it owns the result arena). */
struct ljw *ljw__new(void);
void ljw__delete(struct ljw *w);

/* Walk one sample.  out is filled even on failure (with [unknown] frames and
 * the end reason); returns 0, or -EINVAL for bad arguments / layout, or
 * -ENOMEM.  Results stay valid until the next walk or ljw__delete. */
int ljw__walk(struct ljw *w, const struct lj_layout *lay, const struct ljs_sample *s,
	      const struct memsrc *ms, const struct ljw_opts *o, struct ljw_stack *out);

/* Names for report and debugging. */
const char *ljw_reason__name(enum ljw_reason r);
const char *ljw_end__name(enum ljw_end e);
const char *ljw_src__name(enum ljw_src s);
const char *ljw_tsrc__name(enum ljw_tsrc s);
const char *ljw_tfound__name(enum ljw_tfound f);

/* Builtin name for an ffid of a build family ("string.gsub"), or NULL. */
const char *ljw_ffname(enum lj_family family, int ffid);

/* LuaJIT's short_src for a frame ("x.lua", "[string \"...\"]", "[C]"),
 * written into buf (LUA_IDSIZE = 60 bytes are enough).  Returns buf. */
char *ljw_frame__short_src(const struct ljw_frame *f, char *buf, size_t size);

/* Format a frame exactly like one line of luaL_traceback (without the
 * leading "\n\t"), e.g. "x.lua:12: in function 'foo'".  Returns the length
 * snprintf would have written. */
int ljw_frame__format(const struct ljw_frame *f, char *buf, size_t size);

#endif /* LJSNAP_LJWALK_H */
