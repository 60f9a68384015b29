/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljwalk_int.h -- internals shared by the walker's files (ljwalk.c: frame
 * loop; ljwalk_proto.c: prototypes, lines, strings, result arena;
 * ljwalk_name.c: name inference; ljwalk_def.c: names by definition;
 * ljwalk_trace.c: JIT traces; ljwalk_cframe.c: C frames of the VM
 * entries; ljwalk_base.c: BASE checks and the top frame's BASE and PC;
 * ljwalk_fmt.c: traceback formatting).  Not a public interface.
 *
 * The files depend one way: ljwalk.c calls the others, ljwalk_trace.c
 * calls ljwalk_proto.c and ljwalk_name.c, ljwalk_def.c and ljwalk_name.c
 * call ljwalk_proto.c, ljwalk_def.c calls ljwalk_name.c, ljwalk_base.c
 * calls ljwalk_proto.c.  Only ljwalk.c appends to the result (ljw__frame_push);
 * ljwalk_trace.c hands its frames back instead.
 */
#ifndef LJSNAP_LJWALK_INT_H
#define LJSNAP_LJWALK_INT_H

#include "symtab/intmap.h"
#include "unwind/ljdecode.h"
#include "unwind/ljtrace.h"
#include "unwind/ljwalk.h"

/* Bytecode opcodes that are the same in every tree. */
enum {
	LJW_BC_MOV = 18, LJW_BC_KSTR = 39, LJW_BC_KNIL = 44, LJW_BC_UGET = 45, LJW_BC_GGET = 54,
	LJW_BC_USETV = 46, LJW_BC_FNEW = 51, LJW_BC_GSET = 55,
	LJW_BC_TGETS = 57, LJW_BC_TSETS = 61, LJW_BC_CALLM = 65, LJW_BC_CALL = 66, LJW_BC_ITERC = 69,
	LJW_BC_ITERN = 70, LJW_BC_RETM = 73, LJW_BC_RET1 = 76, LJW_BC_JFORL = 81,
	LJW_BC_JITERL = 84, LJW_BC_JLOOP = 87, LJW_BC_JMP = 88,
};

/* The trace the running thread is in, as found before the walk (ljwalk_trace.c). */
struct ljw_tstate {
	int traceno;		/* -1: none */
	int have_hdr;		/* h is usable */
	int stale;		/* the sample's header disagrees with memory */
	struct ljt_hdr h;
	uint64_t ip;		/* address looked up in the trace's machine code, 0 none */
	int ip_call;		/* ip is a return address (look up ip - 1) */
};

/* One block of the result arena. */
struct ljw_blk {
	struct ljw_blk *next;
	size_t used, cap;
	unsigned char data[];
};

/* A prototype read during this walk. */
struct ljw_proto {
	uint64_t pt;
	enum ljw_reason err;	/* LJW_R_NONE when the header is usable */
	uint32_t sizebc, sizept, sizekgc;
	int32_t firstline, numline;
	uint8_t numparams, flags, sizeuv;
	uint8_t defscan;	/* its children are in ljw.defs (ljwalk_def.c) */
	uint64_t k, lineinfo, uvinfo, varinfo, chunkname_ref;
	const uint8_t *mem;	/* [pt, pt + memlen) when read in one piece */
	uint32_t memlen;
	const char *chunkname;	/* raw, NUL-terminated, or NULL */
	uint32_t chunkname_len;
};

/* A definition name found by an earlier walk (ljwalk_def.c). */
struct ljw_defname {
	uint64_t pt, chunkname_ref;	/* the prototype, and what identifies it */
	int32_t firstline;
	uint32_t sizebc, chunk_len;
	char *name;			/* malloc'd, with the chunkname's bytes after it */
	const char *chunk;		/* in name's allocation; NULL if unread */
	const char *what;		/* static */
};

/* A function header this walk read (ljw__fn_read), in a slot by address:
 * the walk's memory does not change while it runs. */
#define LJW_FNC_SLOTS	16
struct ljw_fnc {
	uint64_t fn, pc, cfn;
	uint32_t walk;		/* ljw.walkno when read */
	uint8_t gct, ffid;
};

/* A string this walk read (ljw__gcstr), in a slot by address: the copy in
 * the arena serves the walk's later reads of it. */
#define LJW_STRC_SLOTS	16
struct ljw_strc {
	uint64_t str;
	uint32_t cap, len;
	uint32_t walk;		/* ljw.walkno when read */
	const char *s;
};

/* A prototype's variable list (GCproto.varinfo, lj_debug.c
 * debug_varname) decoded once by ljwalk_name.c and kept across walks with
 * the bytes it was decoded from: it stands for a walk's prototype only
 * when that prototype's bytes are the same. */
struct ljw_var {
	uint32_t startpc, endpc;
	uint32_t name;		/* offset of its NUL-terminated name in bytes, or
				 * LJW_VAR_SPECIAL | VARNAMEDEF index */
};
#define LJW_VAR_SPECIAL	0x80000000u
struct ljw_vars {
	uint8_t *bytes;		/* [varinfo, end of the allocation) */
	size_t len;
	struct ljw_var *v;
	size_t n;
};

#define LJW_UNSEEN_SLOTS	16	/* traces whose unseen Lua functions are remembered */

struct ljw {
	/* result */
	struct ljw_frame *frames;
	size_t nframes, capframes;
	struct ljw_blk *blk;	/* arena blocks, reused across walks */
	/* per-walk prototype cache */
	struct ljw_proto *protos;
	size_t nprotos, capprotos;
	struct intmap byaddr;	/* prototype address -> index into protos[] */
	struct intmap defs;	/* child prototype -> parent index << 32 | FNEW index
				 * (ljwalk_def.c), per walk */
	struct ljw_defname *known;	/* definition names of earlier walks */
	size_t nknown, capknown;
	struct intmap byknown;	/* prototype address -> index into known[] */
	struct intmap uvwant, uvseen;	/* per walk: functions to name, objects read */
	struct ljw_vars *vars;		/* decoded variable lists of earlier walks */
	size_t nvars, capvars, varbytes;
	struct intmap byvars;		/* varinfo address -> index into vars[] */
	uint32_t walkno;		/* walks so far (wrapping past 0 to 1) */
	struct ljw_fnc fnc[LJW_FNC_SLOTS];
	struct ljw_strc strc[LJW_STRC_SLOTS];
	int nomem;
	/* per-walk context */
	struct ljd d;
	const struct ljs_sample *s;
	const struct ljw_opts *o;
	uint64_t g, mainL;
	uint64_t cf_now;	/* the walked thread's current C frame: stamps pushed frames */
	/* traces: decoder buffers (kept across walks) and this walk's trace */
	const struct memsrc *ms_mem;	/* trace memory without the sample windows */
	struct ljt tr;
	struct ljt_snap *snap;
	struct ljt_snap *snap_next;	/* the snapshot after a call (snap__split) */
	struct ljw_unseen {		/* trace__unseen_lua's answers, by trace */
		uint64_t T, mcode;
		uint32_t traceno, pid;
		int val;		/* 0 or 1; slot empty while T is 0 */
	} unseen[LJW_UNSEEN_SLOTS];
	struct ljw_frame *inl;	/* LJT_MAX_FRAMES: the frames inlined into it */
	struct ljw_tstate ts;
	/* walks remembered across samples (ljwalk_memo.c), or NULL */
	struct ljw_memo *memo;
	uint64_t known_gen;	/* changes of known[] so far (in the memo key) */
	uint64_t regs_used;	/* registers this walk read (1 << LJW_REG_*) */
	int mem_apart;		/* ms_mem is not the walk's chain itself */
};

/* -- What a walk reads besides its memory source, noted for the memo
 *    (ljwalk_memo.c) -- */
/* The registers a walk may read: the sample's by x86 number (0 rax .. 15
 * r15), the trace frame's (ljw_opts.trace_regs) from LJW_REG_TRACE, the VM
 * frame's (ljw_opts.vm_regs) rbp and rbx. */
enum {
	LJW_REG_DX = 2, LJW_REG_BX = 3, LJW_REG_SP = 4, LJW_REG_BP = 5, LJW_REG_R14 = 14,
	LJW_REG_TRACE = 16, LJW_REG_VM_BP = 32, LJW_REG_VM_BX = 33, LJW_REG_N = 34
};
/* Register r (LJW_REG_*), noted in w->regs_used; 0 when the walk has none. */
uint64_t ljw__reg(struct ljw *w, unsigned r);
/* Read from the sample's own windows only (no memory behind them). */
int ljw__read_own(struct ljw *w, uint64_t addr, void *buf, size_t len);
/* The walk decodes the bytes of section i of its sample itself. */
void ljw__memo_section(struct ljw *w, uint32_t i);

/* -- Walks remembered across samples (ljwalk_memo.c) -- */
/* 1 when an earlier walk with this sample's key reads the same registers
 * and the same bytes through ms and ms_mem (its trace memory) now: out and
 * w->frames are its result. */
int ljw__memo_hit(struct ljw *w, const struct lj_layout *lay, const struct ljs_sample *s,
		  const struct memsrc *ms, const struct memsrc *ms_mem,
		  const struct ljw_opts *o, struct ljw_stack *out);
/* The source the walk reads through (ms, its reads logged) after a miss;
 * w->ms_mem becomes ms_mem, its reads logged too. */
const struct memsrc *ljw__memo_begin(struct ljw *w, const struct memsrc *ms,
				     const struct memsrc *ms_mem);
/* The walk is not to be remembered: its reads go on unlogged, straight
 * through the source it was given (no function may hold w->d.ms then). */
void ljw__memo_stop(struct ljw *w);
/* After the walk: remember it when ok (and its log is whole). */
void ljw__memo_end(struct ljw *w, int ok, const struct ljw_stack *out);
void ljw__memo_exit(struct ljw *w);

/* -- Variable lists (ljwalk_name.c) -- */
void ljw__vars_exit(struct ljw *w);

/* -- Result (ljwalk.c) -- */
/* Append a zeroed frame; NULL when out of memory. */
struct ljw_frame *ljw__frame_push(struct ljw *w);

/* -- Coroutines (ljwalk_resume.c) -- */
/* The resumer thread the sample carries at a depth (LJS_SEC_RES_L), or 0. */
uint64_t ljw__resumer(const struct ljs_sample *s, uint32_t depth);
/* 1 when coroutine L was resumed from C (see ljwalk_resume.c), else 0. */
int ljw__resumed_from_c(struct ljw *w, uint64_t L);

/* -- C frames (ljwalk_cframe.c) -- */
/* 1 when the VM entry of C frame cf (L's innermost) has not linked its first
 * frame yet, so the top frame at base belongs to the entry before. */
int ljw__cf_unlinked(struct ljw *w, uint64_t cf, uint64_t L, uint64_t base, uint64_t Lbase);
/* 1 when the sampled thread runs L now (its C frame on ljw_opts' stack), or
 * nothing can be checked; 0 when L is another thread's. */
int ljw__on_stack(struct ljw *w, uint64_t L);

/* -- Arena (ljwalk_proto.c) -- */
void ljw__arena_reset(struct ljw *w);
void *ljw__alloc(struct ljw *w, size_t size);
const char *ljw__strndup(struct ljw *w, const char *s, size_t n);

/* -- The top frame (ljwalk_base.c) -- */

/* Class of a vmstate value. */
enum vmclass { VC_INTERP, VC_C, VC_GC, VC_EXIT, VC_COMPILER, VC_TRACE, VC_UNKNOWN };

/* One thread's walk context. */
struct thr {
	uint64_t L, stack, end, bot, cf;
	int first;		/* no frame emitted for this thread yet */
	uint32_t entry_flags;	/* flags for the first frame (COROUTINE_BOUNDARY) */
	uint64_t nres_cf;	/* cf__skip read SAVE_NRES of this C frame (0: none): */
	int32_t nres;		/* this (the walk's memory does not change) */
};

/* Is a frame address inside the thread's stack, above the bottom slot? */
int ljw__frame_ok(const struct thr *t, const struct ljd *d, uint64_t f);
/* Check a BASE candidate: a function below it and a sane link. */
int ljw__base_check(struct ljw *w, const struct thr *t, uint64_t base);
/* Bytecode position of pc in the Lua function at base, or -1. */
int32_t ljw__base_pos(struct ljw *w, uint64_t base, uint64_t pc);
/* Choose the top BASE/PC for the running thread per vmstate and RIP: 0, or
 * -1 when no candidate checks out. */
int ljw__top_choose(struct ljw *w, struct ljw_stack *out, struct thr *t, uint64_t Lbase,
		    enum vmclass vc, uint64_t jit_base, uint64_t *base, uint64_t *pc);

/* -- Prototypes (ljwalk_proto.c) -- */
void ljw__protos_reset(struct ljw *w);
/* The prototype at pt (cached per walk); NULL only when out of memory. */
struct ljw_proto *ljw__proto(struct ljw *w, uint64_t pt);
/* Copy bytes of a prototype's allocation (cached) or through the memsrc. */
int ljw__proto_read(struct ljw *w, const struct ljw_proto *p, uint64_t addr,
		    void *buf, size_t len);
/* Bytecode index of the instruction before pc, or -1 if pc is not a saved
 * PC inside p (pc in [bc + 4, bc + 4 * sizebc]); handles the JLOOP quirk. */
int32_t ljw__proto_pos(struct ljw *w, const struct ljw_proto *p, uint64_t pc);
/* Instruction at a bytecode index. */
int ljw__proto_ins(struct ljw *w, const struct ljw_proto *p, uint32_t pos, uint32_t *ins);
/* Line of a bytecode index (LuaJIT lj_debug_line); 0 if no line info. */
int ljw__proto_line(struct ljw *w, const struct ljw_proto *p, uint32_t pos);
/* A GCstr's bytes into the arena (at most cap bytes); NULL if unreadable. */
const char *ljw__gcstr(struct ljw *w, uint64_t str, uint32_t cap, uint32_t *lenp);

/* A function object's gct, ffid, pc (prototype ref, or the C entry's for
 * builtins) and C entry f, from one read of its header when possible, so
 * that every use of a function reads (and a recorder stores) one range;
 * 0 or -EFAULT. */
int ljw__fn_read(struct ljw *w, uint64_t fn, uint8_t *gct, uint8_t *ffid, uint64_t *pc,
		 uint64_t *cfn);
/* Fill a frame from a function object (kind, ffid, C entry, prototype,
 * chunk, line at pc); returns the prototype of a Lua function, else NULL
 * with *err set when the object is unusable. */
struct ljw_proto *ljw__frame_fill(struct ljw *w, struct ljw_frame *o, uint64_t fn, uint64_t pc,
				  enum ljw_reason *err);
/* Same for a Lua function known only by its prototype (fn stays 0). */
struct ljw_proto *ljw__frame_fill_proto(struct ljw *w, struct ljw_frame *o, uint64_t pt,
					uint64_t pc, enum ljw_reason *err);

/* -- Names (ljwalk_name.c) -- */
/* LuaJIT's lj_debug_funcname for a callee called from caller p at pos. */
const char *ljw__funcname(struct ljw *w, const struct ljw_proto *p, int32_t pos,
			  const char **name);

/* Name of the local in slot at bytecode index pc (lj_debug.c debug_varname). */
const char *ljw__varname(struct ljw *w, const struct ljw_proto *p, uint32_t pc, uint32_t slot);
/* Name of upvalue idx (lj_debug_uvname): "" when there is no uvinfo. */
const char *ljw__uvname(struct ljw *w, const struct ljw_proto *p, uint32_t idx);
/* String constant idx of a prototype (proto_kgc(pt, ~idx)), or NULL. */
const char *ljw__kgc_str(struct ljw *w, const struct ljw_proto *p, uint32_t idx);
/* What the value in slot at pos is (lj_debug_slotname): "local", "global",
 * "field", "method", "upvalue" with *name, or NULL. */
const char *ljw__slotname(struct ljw *w, const struct ljw_proto *p, uint32_t pos,
			  uint32_t slot, const char **name);

/* -- Names by definition (ljwalk_def.c) -- */
/* Name every Lua frame of the walk by its definition where the parent
 * prototype is reachable (sets defname / defwhat). */
void ljw__defnames(struct ljw *w);
/* Free the names remembered across walks. */
void ljw__defnames_exit(struct ljw *w);

/* -- Traces (ljwalk_trace.c) -- */
/* Find the trace the sample runs in (vmstate, RIP, the JLOOP race, links,
 * an optional scan) and check its header against memory; fills w->ts and
 * out->trace.  Returns the trace number or -1. */
int ljw__trace_which(struct ljw *w, struct ljw_stack *out, int32_t vmstate, uint64_t jit_base,
		     int in_vm);
/* For the frame at base (jit_base) of the running trace: choose its PC
 * (saved-PC style, 0 if none) and, when the trace tail-called, its function
 * (*fn, else 0).  Returns the number of frames inlined into the trace above
 * it, named and innermost first, at *inl (owned by the walker, valid until
 * the next walk) for the caller to append; it pushes no frame itself. */
size_t ljw__trace_top(struct ljw *w, struct ljw_stack *out, uint64_t L, uint64_t base,
		      uint64_t *pc, uint64_t *fn, const struct ljw_frame **inl);
/* The Lua function in the frame at base (its GCfunc), or 0. */
uint64_t ljw__base_fn(struct ljw *w, uint64_t base);
/* The frames of snapshot s above the frame at base, innermost first, into
 * w->inl[0 .. *n); the base frame's PC and (tail call) function.  0, or -1
 * when the snapshot does not fit the stack (the caller drops the frames). */
int ljw__inline_emit(struct ljw *w, struct ljw_stack *out, uint64_t L, uint64_t base,
		     const struct ljt_snap *s, uint64_t *pc, uint64_t *fn, size_t *n);
/* -- Calls the running trace made (ljwalk_tcall.c) -- */
/* The inlined frames at machine-code offset ofs (into w->inl, *n of them)
 * and the base frame's PC and function, for w->tr bound to the trace: the
 * trace source (enum ljw_tsrc), or -1. */
int ljw__snap_frames(struct ljw *w, struct ljw_stack *out, uint64_t L, uint64_t base,
		     uint64_t ofs, uint64_t *pc, uint64_t *fn, size_t *n, uint32_t *snapno);
/* EXIT / compiler states: the trace numbers J holds (pseudo frame f). */
void ljw__trace_pseudo(struct ljw *w, struct ljw_stack *out, struct ljw_frame *f, int exit,
		       int32_t vmstate);

#endif /* LJSNAP_LJWALK_INT_H */
