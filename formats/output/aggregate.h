/*
 * aggregate.h -- stacks aggregated for the output formats.
 *
 * A stack is a list of frame names, root first.  Names are interned once
 * (frame ids), stacks are interned as id sequences with a sample count, so
 * a report over millions of samples holds one copy of each distinct name and
 * stack.  Names are made safe for the folded format when interned: ';' and
 * control characters never appear in a frame name.
 *
 * The walker's frames (unwind/ljwalk.h) are named here, by the rules users
 * see (ARCHITECTURE "Frames as users see them"):
 *   Lua function      name chunk:linedefined     hot_a cpu.lua:12
 *                     (AGG_LINES: name chunk:currentline)
 *   unnamed function  function <chunk:linedefined>
 *   main chunk        main chunk                 main cpu.lua
 *   builtin           library name or builtin#N  string.gsub
 *   C function        C:0xADDRESS
 *   pseudo frames     [GC] [JIT compiler] [trace exit]
 *   unresolved        [unknown: reason]
 * Frames of a JIT trace get "_[j]", frames inlined into one "_[i]".  A
 * native unwinder adds its frames with agg__push (AGG_NATIVE, AGG_KERNEL).
 *
 * Also kept: per-sample walk statistics for the text report.  A plain
 * library: no globals, no I/O.
 */
#ifndef LJSNAP_AGGREGATE_H
#define LJSNAP_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/ljwalk.h"

#define AGG_LINES	0x1	/* name Lua frames by current line, not by function */

#define AGG_NAME_MAX	512	/* longest frame name kept (bytes) */

/* What a frame is (for the text report; folded output ignores it). */
enum agg_cls {
	AGG_ROOT = 0,		/* the process name at the root of every stack */
	AGG_LUA,		/* Lua function or main chunk */
	AGG_C,			/* lua_CFunction */
	AGG_BUILTIN,		/* LuaJIT builtin (fast function) */
	AGG_PSEUDO,		/* VM state: [GC], [JIT compiler], [trace exit] */
	AGG_UNKNOWN,		/* [unknown: reason] */
	AGG_NATIVE,		/* native code, or [native] / [not in Lua] placeholders */
	AGG_KERNEL,		/* kernel frame */
	AGG__CLS_MAX
};

/* VM state of a sample, as the text report groups them. */
enum agg_vm {
	AGG_VM_INTERP = 0,	/* interpreter */
	AGG_VM_C,		/* C function or C code called from Lua */
	AGG_VM_GC,		/* garbage collector */
	AGG_VM_TRACE,		/* JIT-compiled code */
	AGG_VM_COMPILER,	/* JIT compiler (record, optimize, assemble) */
	AGG_VM_EXIT,		/* trace exit handling */
	AGG_VM_OTHER,		/* a vmstate value no state of the build matches */
	AGG_VM__MAX
};

/* Walk statistics over the samples counted with agg__count. */
struct agg_stats {
	uint64_t samples;		/* every sample counted */
	uint64_t no_luajit;		/* of processes without (usable) LuaJIT */
	uint64_t no_state;		/* of LuaJIT processes, no LuaJIT state found */
	uint64_t lua_state;		/* with LuaJIT state (the walk found g) */
	uint64_t clean;			/* end COMPLETE with no unknown frame */
	uint64_t to_main;		/* clean, and a main chunk is on the stack */
	uint64_t with_unknown;		/* at least one [unknown] frame */
	uint64_t truncated;		/* the Lua stack copy ran out */
	uint64_t ends[LJW__END_MAX];	/* by how the walk ended */
	uint64_t unknown[LJW_R__MAX];	/* [unknown] frames by reason */
	uint64_t vm[AGG_VM__MAX];	/* samples with LuaJIT state by VM state */
	uint64_t frames;		/* Lua-side frames over all walks */
	uint32_t max_depth;		/* deepest walk (frames) */
};

/* A stack being built, root first (ids from agg__frame). */
struct agg_stack {
	uint32_t *ids;
	size_t n, cap;
};

struct agg;

/* Allocate (flags: AGG_*) / free. */
struct agg *agg__new(unsigned flags);
void agg__delete(struct agg *a);

/* Intern a frame name (made folded-safe, cut at AGG_NAME_MAX): its id, or
 * -ENOMEM.  The same name with another class is another frame. */
long agg__frame(struct agg *a, const char *name, size_t len, enum agg_cls cls);

/* Name a walker frame (rules above; flags: AGG_*) into buf, NUL-terminated
 * and folded-safe.  Returns the length (cut to size - 1). */
size_t agg__ljw_name(const struct ljw_frame *f, unsigned flags, char *buf, size_t size);

/* Class of a walker frame. */
enum agg_cls agg__ljw_cls(const struct ljw_frame *f);

/* Building a stack: reset, then push frames root first.  0 or -ENOMEM. */
void agg_stack__reset(struct agg_stack *sb);
void agg_stack__exit(struct agg_stack *sb);
int agg__push(struct agg *a, struct agg_stack *sb, const char *name, size_t len,
	      enum agg_cls cls);
/* Push a walk's frames, outermost first (the walker lists innermost first). */
int agg__push_ljw(struct agg *a, struct agg_stack *sb, const struct ljw_stack *st);
/* Append an id from agg__frame (callers that build a stack out of order). */
int agg_stack__push_id(struct agg_stack *sb, uint32_t id);

/* Add count samples of a stack.  0, -EINVAL (empty stack, bad id), -ENOMEM. */
int agg__add(struct agg *a, const struct agg_stack *sb, uint64_t count);

/* Count one sample's walk in the statistics (st NULL: the process has no
 * usable LuaJIT). */
void agg__count(struct agg *a, const struct ljw_stack *st);

/* VM state group of a walk. */
enum agg_vm agg__vm(const struct ljw_stack *st);
const char *agg_vm__name(enum agg_vm v);

/* -- Reading the aggregate (for the printers) ------------------------------ */

unsigned agg__flags(const struct agg *a);
uint64_t agg__total(const struct agg *a);		/* samples added */
const struct agg_stats *agg__stats(const struct agg *a);

size_t agg__nframes(const struct agg *a);
const char *agg__frame_name(const struct agg *a, uint32_t id, size_t *len);
enum agg_cls agg__frame_cls(const struct agg *a, uint32_t id);
/* The id of the same name without its "_[j]" / "_[i]" / "_[k]" suffix. */
uint32_t agg__frame_base(const struct agg *a, uint32_t id);

size_t agg__nstacks(const struct agg *a);
/* Stack i: its ids (root first) and count.  -EINVAL if i is out of range. */
int agg__stack(const struct agg *a, size_t i, const uint32_t **ids, size_t *n, uint64_t *count);

#endif /* LJSNAP_AGGREGATE_H */
