/*
 * ljwalk.h -- the offline LuaJIT frame walker.
 *
 * Given one sample (registers + byte windows), the build's layout and a
 * memory source, produce the Lua frames innermost first, named the way
 * LuaJIT's own debug.traceback() names them.  A pure library: no syscalls,
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
#define LJW_F_INLINED		0x010	/* reserved: frame inlined into a trace */
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
	LJW__SRC_MAX
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
	int ffid;		/* 0 Lua, 1 C, >= 2 builtin */
	int line;		/* current line, -1 unknown, 0 no line info */
	int linedefined;	/* GCproto.firstline (0 main chunk, -1 builtin bytecode) */
	int traceno;		/* trace number when LJW_F_TRACE */
	const char *name;	/* name as LuaJIT infers it from the caller, or NULL */
	const char *what;	/* "global", "local", "method", "field", "upvalue",
				 * "metamethod", or NULL (LuaJIT's namewhat) */
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
	int complete;			/* end == LJW_END_COMPLETE */
	int truncated;			/* data ran out before the bottom */
	uint32_t nunknown;		/* [unknown] frames emitted */
	uint32_t unknown[LJW_R__MAX];	/* per reason */
	int32_t vmstate;		/* g->vmstate at sample time */
	const char *vmstate_name;	/* "interp", "c", "gc", ..., "trace" */
	uint64_t g, L;			/* global_State and the thread walked first */
	uint64_t base, pc;		/* top frame BASE and PC chosen */
	enum ljw_src base_src, pc_src;
	uint32_t nthreads;		/* threads walked (1 + resumers) */
	int traceno;			/* vmstate >= 0: the running trace, else -1 */
};

struct ljw_opts {
	uint64_t vm_lo, vm_hi;		/* interpreter code range [lo, hi); 0 = unknown */
	const struct ljs_regs *vm_regs;	/* registers unwound to the innermost VM
					 * frame (native unwinder), or NULL */
	uint32_t max_frames;		/* 0 = bounded by the data only */
};

struct ljw;

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
