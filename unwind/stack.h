/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stack.h -- one sample's stack of named frames: what the pipeline
 * (unwind/pipeline.h) produces and every output consumes.
 *
 * A frame is a name and a kind.  The names follow the rules users see
 * (docs/architecture.md, "Frames as users see them"):
 *   Lua function      name chunk:linedefined     hot_a cpu.lua:12
 *                     (LJS_NAME_LINES: name chunk:currentline)
 *   unnamed function  function <chunk:linedefined>
 *   main chunk        main chunk                 main cpu.lua
 *   builtin           library name or builtin#N  string.gsub
 *   C function        its symbol, module+0xOFFSET, or C:0xADDRESS
 *   pseudo frames     [GC] [JIT compiler] [trace exit]
 *   unresolved        [unknown: reason]
 *   native            symbol, module+0xoffset, [LuaJIT interpreter], [JIT code]
 *   kernel            symbol_[k]
 * Frames of a JIT trace end in "_[j]", frames inlined into one (and C
 * functions the compiler inlined) in "_[i]"; the kind says the same.
 *
 * Also here: the walk statistics and trace attribution of the samples,
 * in the terms the outputs print them.
 */
#ifndef LJSNAP_UNWIND_STACK_H
#define LJSNAP_UNWIND_STACK_H

#include <stddef.h>
#include <stdint.h>

#define LJS_NAME_MAX	512	/* longest frame name kept (bytes) */

/* What a frame is. */
enum ljs_fkind {
	LJS_FK_ROOT = 0,	/* the process name at the root of every stack */
	LJS_FK_LUA,		/* Lua function or main chunk, interpreted */
	LJS_FK_LUA_TRACE,	/* ... running in a JIT trace ("_[j]") */
	LJS_FK_LUA_INLINED,	/* ... inlined into a JIT trace ("_[i]") */
	LJS_FK_C,		/* lua_CFunction */
	LJS_FK_BUILTIN,		/* LuaJIT builtin (fast function) */
	LJS_FK_PSEUDO,		/* VM state: [GC], [JIT compiler], [trace exit] */
	LJS_FK_UNKNOWN,		/* [unknown: reason] */
	LJS_FK_NATIVE,		/* native code, or [native] / [not in Lua] placeholders */
	LJS_FK_NATIVE_INLINED,	/* a C function the compiler inlined ("_[i]", DWARF) */
	LJS_FK_KERNEL,		/* kernel frame ("_[k]") */
	LJS_FK__MAX
};

/* "lua", "lua-trace", ... */
const char *ljs_fkind__name(enum ljs_fkind k);

/* Is it a frame of Lua code (any of the three Lua kinds)? */
static inline int ljs_fkind__is_lua(enum ljs_fkind k)
{
	return k == LJS_FK_LUA || k == LJS_FK_LUA_TRACE || k == LJS_FK_LUA_INLINED;
}

/*
 * What a frame is beyond its name, for the outputs that keep files, lines
 * and addresses (pprof, speedscope, html).  Filled by the pipeline with
 * LJS_PIPE_DETAILS; every field may be unknown (NULL / 0).
 */
struct ljs_frame_src {
	const char *func;	/* the function alone: "hot_a", "main chunk", a symbol */
	const char *file;	/* Lua chunk ("x.lua", no '@') or C source file */
	int line;		/* Lua: current line (--lines) or linedefined; C: DWARF line */
	int start_line;		/* Lua: linedefined */
	const char *module;	/* native: the mapped file as recorded; kernel: its module */
	const char *build_id;	/* native: the mapped file's build id, hex */
	uint64_t addr;		/* native and kernel: the pc (a return address minus 1) */
	uint64_t map_start, map_limit, map_offset;	/* native: its mapping */
};

#define LJS_NOSTR	UINT64_MAX	/* a string of struct ljs_src_ref that is unknown */

/* A frame's source kept beside a text (a stack's, the profile's): its
 * strings as offsets into that text. */
struct ljs_src_ref {
	uint64_t func, file, module, build_id;	/* offsets, or LJS_NOSTR */
	int line, start_line;
	uint64_t addr, map_start, map_limit, map_offset;
};

/* Keep src in r, each string copied by put (which stores its offset in *off
 * and returns 0, or -ENOMEM).  0 or -ENOMEM. */
int ljs_src_ref__set(struct ljs_src_ref *r, const struct ljs_frame_src *src,
		     int (*put)(void *ctx, const char *s, uint64_t *off), void *ctx);

/* The source r keeps beside text (pointers into it). */
void ljs_src_ref__get(const struct ljs_src_ref *r, const char *text, struct ljs_frame_src *out);

struct ljs_frame {
	uint32_t off;		/* name at ljs_stack.text + off, NUL-terminated */
	uint32_t len;
	enum ljs_fkind kind;
	int has_src;		/* src was set (ljs_stack__push_src) */
	struct ljs_src_ref src;	/* offsets into the stack's text */
};

/* A stack of named frames, root (index 0) first once finished. */
struct ljs_stack {
	struct ljs_frame *f;
	size_t n, cap;
	char *text;		/* the names, back to back */
	size_t tlen, tcap;
};

/* Empty the stack (keeps its memory). */
void ljs_stack__reset(struct ljs_stack *st);
void ljs_stack__exit(struct ljs_stack *st);

/* Append a frame (name cut at LJS_NAME_MAX - 1 bytes).  0 or -ENOMEM. */
int ljs_stack__push(struct ljs_stack *st, const char *name, size_t len, enum ljs_fkind kind);

/* Append a frame with what is known of its source (strings copied).
 * 0 or -ENOMEM. */
int ljs_stack__push_src(struct ljs_stack *st, const char *name, size_t len, enum ljs_fkind kind,
			const struct ljs_frame_src *src);

/* The source of frame i (pointers into the stack): 1, or 0 when none was set. */
int ljs_stack__src(const struct ljs_stack *st, size_t i, struct ljs_frame_src *out);

/* Reverse the order of the frames (builders push innermost first). */
void ljs_stack__reverse(struct ljs_stack *st);

/* The name of frame i. */
static inline const char *ljs_stack__name(const struct ljs_stack *st, size_t i)
{
	return st->text + st->f[i].off;
}

/* -- Walk statistics ------------------------------------------------------------ */

/* VM state of a sample, as the text report groups them. */
enum ljs_vm {
	LJS_VM_INTERP = 0,	/* interpreter */
	LJS_VM_C,		/* C function or C code called from Lua */
	LJS_VM_GC,		/* garbage collector */
	LJS_VM_TRACE,		/* JIT-compiled code */
	LJS_VM_COMPILER,	/* JIT compiler (record, optimize, assemble) */
	LJS_VM_EXIT,		/* trace exit handling */
	LJS_VM_OTHER,		/* a vmstate value no state of the build matches */
	LJS_VM__MAX
};

const char *ljs_vm__name(enum ljs_vm v);

#define LJS_REASONS_MAX	32	/* [unknown] reasons counted (the walker's, see ljw_reason) */

/* Walk statistics over samples. */
struct ljs_walk_stats {
	uint64_t samples;		/* every sample counted */
	uint64_t no_luajit;		/* of processes without (usable) LuaJIT */
	uint64_t no_state;		/* of LuaJIT processes, no LuaJIT state found */
	uint64_t lua_state;		/* with LuaJIT state (the walk found g) */
	uint64_t clean;			/* reached the bottom with no unknown frame */
	uint64_t to_main;		/* clean, and a main chunk is on the stack */
	uint64_t end_coroutine;		/* ended in a coroutine without resumer */
	uint64_t end_c_resume;		/* ... resumed from C (lua_resume): complete */
	uint64_t end_not_in_lua;	/* the thread is not inside Lua */
	uint64_t other_thread;		/* the VM found is another thread's (not in lua_state) */
	uint64_t end_error;		/* stopped at an unknown frame */
	uint64_t with_unknown;		/* at least one [unknown] frame */
	uint64_t truncated;		/* the Lua stack copy ran out */
	uint64_t unknown[LJS_REASONS_MAX];	/* [unknown] frames by reason (0: none) */
	uint64_t vm[LJS_VM__MAX];	/* samples with LuaJIT state by VM state */
	uint64_t frames;		/* Lua-side frames over all walks */
	uint32_t max_depth;		/* deepest walk (frames) */
};

/* Name of [unknown] reason r (1 .. LJS_REASONS_MAX - 1), NULL past the last. */
const char *ljs_walk__reason_name(unsigned r);

/* -- JIT trace attribution --------------------------------------------------------- */

#define LJS_TRACE_SRC_MAX	16	/* ways of attributing a sample to a trace */

/* The trace a sample ran in, when the walk attributed it to one. */
struct ljs_trace_hit {
	int traceno;		/* -1: none */
	int root;		/* root trace, -1 unknown */
	int startline;		/* line where recording started, -1 unknown */
	int linedefined;	/* of the function it started in */
	const char *chunk;	/* that function's chunk (no '@'), or NULL */
	const char *start_fn;	/* its name when its frame is in the walk, or NULL */
	unsigned src;		/* how: 1 .. LJS_TRACE_SRC_MAX - 1 */
};

/* Name of attribution src ("snap", ...), NULL past the last. */
const char *ljs_trace__src_name(unsigned src);

#endif /* LJSNAP_UNWIND_STACK_H */
