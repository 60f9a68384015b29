/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pipeline.c -- one sample to one stack of named frames: kernel frames,
 * native frames unwound with DWARF CFI, Lua frames walked, stitched and
 * named (see pipeline.h).
 *
 * The native unwinder (unwind/native.c) gives the user stack as the CPU saw
 * it: each entry into the LuaJIT VM (lj_vm_call, lj_vm_pcall, lj_vm_resume,
 * lj_vm_cpcall, or the trace code running in such an activation) is one
 * native frame.  The walker (unwind/ljwalk.c) gives the Lua frames, each
 * tagged with the C frame of the entry that runs it (ljw_frame.cframe, a
 * native stack address), which split into activations at every change of
 * it, every entry from C (FRAME_C/FRAME_CP links) and every coroutine
 * boundary.  Each activation goes at the native frame that holds its C
 * frame, replacing it when it is a VM frame; entries without Lua frames
 * (lj_vm_cpcall running the parser or the trace recorder) keep theirs; a
 * Lua-side C-function frame is dropped when its native frames are already
 * there.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/buildid.h"
#include "symtab/intmap.h"
#include "symtab/ksyms.h"
#include "symtab/objfile.h"
#include "symtab/procmap.h"
#include "symtab/symbolize.h"
#include "unwind/frame_name.h"
#include "unwind/pipeline.h"
#include "unwind/native.h"

#define FFNAME_CACHE	64	/* builtin names remembered (ff_name), a power of 2 */

struct ljs_pipe {
	unsigned flags;			/* LJS_PIPE_* */
	struct objcache *oc;
	struct symbolizer *sym;
	struct native_unw *u;
	struct ljw *w;
	struct ksyms *ks;
	int ks_done;
	struct ljs_pipe_stats st;
	struct ljs_walk_stats walk;
	struct ljw_stack lst;		/* the last sample's Lua walk */
	struct ljs_stack *out;		/* the stack being built, innermost first */
	int last_native;		/* the frame pushed last was native */
	struct intmap vm_exit;		/* VM range -> its exit handler's return address
					 * (native_lj__exit_ret), 1 when it has none */
	struct ffname_slot {		/* builtin names by symbol name (ff_name) */
		const char *raw;
		int ok;
		char name[128];
	} ffc[FFNAME_CACHE];
};

/* Create a pipeline. */
struct ljs_pipe *ljs_pipe__new(unsigned flags, const struct buildid_opts *files)
{
	struct ljs_pipe *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->flags = flags;
	r->oc = objcache__new(files);
	r->sym = symbolizer__new(NULL);
	r->u = native_unw__new(NULL);
	r->w = ljw__new();
	r->ks = ksyms__new();
	if (!r->oc || !r->sym || !r->u || !r->w || !r->ks) {
		ljs_pipe__delete(r);
		return NULL;
	}
	return r;
}

/* Free it. */
void ljs_pipe__delete(struct ljs_pipe *r)
{
	if (!r)
		return;
	native_unw__delete(r->u);
	symbolizer__delete(r->sym);
	objcache__delete(r->oc);
	ljw__delete(r->w);
	ksyms__delete(r->ks);
	intmap__exit(&r->vm_exit);
	free(r);
}

/* Resolve a process's mappings; see pipeline.h. */
int ljs_pipe__proc(struct ljs_pipe *r, const struct procmap_desc *maps, size_t n,
		   struct ljs_proc *out)
{
	return ljs_proc__maps(out, r->oc, maps, n);
}

/* A copy of a mapped file; see pipeline.h. */
int ljs_pipe__copy(struct ljs_pipe *r, const uint8_t *id, size_t idlen, struct elfcopy *copy)
{
	return objcache__add_copy(r->oc, id, idlen, copy);
}

/* An in-memory image; see pipeline.h. */
int ljs_pipe__image(struct ljs_pipe *r, const char *path, const uint8_t *id, size_t idlen,
		    const uint8_t *data, size_t len)
{
	return objcache__add_image(r->oc, path, id, idlen, data, len);
}

/* Add kernel symbols. */
int ljs_pipe__ksyms(struct ljs_pipe *r, const struct ksym *v, size_t n)
{
	return ksyms__add_records(r->ks, v, n);
}

/* Sort the kernel symbols for lookups. */
int ljs_pipe__ksyms_done(struct ljs_pipe *r)
{
	r->ks_done = 1;
	return ksyms__finish(r->ks);
}

/* Counters. */
const struct ljs_pipe_stats *ljs_pipe__stats(const struct ljs_pipe *r)
{
	return &r->st;
}

/* Walk statistics of every sample so far. */
const struct ljs_walk_stats *ljs_pipe__walk_stats(const struct ljs_pipe *r)
{
	return &r->walk;
}

/* The native unwinder's counters. */
const struct native_unw_stats *ljs_pipe__native_stats(const struct ljs_pipe *r)
{
	return native_unw__stats(r->u);
}

/* Append a frame (innermost first). */
static int put_src(struct ljs_pipe *r, const char *name, size_t len, enum ljs_fkind kind,
		   const struct ljs_frame_src *src)
{
	int err = (r->flags & LJS_PIPE_DETAILS) && src ?
		  ljs_stack__push_src(r->out, name, len, kind, src) :
		  ljs_stack__push(r->out, name, len, kind);

	r->last_native = kind == LJS_FK_NATIVE || kind == LJS_FK_NATIVE_INLINED ||
			 kind == LJS_FK_KERNEL;
	return err;
}

/* Append a frame without a source. */
static int put(struct ljs_pipe *r, const char *name, size_t len, enum ljs_fkind kind)
{
	return put_src(r, name, len, kind, NULL);
}

/* Where a native frame comes from: its mapping, the recorded build id (hex
 * into hex), the pc looked up. */
static void native_src(const struct ljs_proc *p, const struct native_frame *f,
		       const struct sym_info *si, char *hex, size_t hexsize,
		       struct ljs_frame_src *src)
{
	const struct procmap_ent *e = p->pm ? procmap__find(p->pm, f->pc) : NULL;

	memset(src, 0, sizeof(*src));
	src->addr = f->activation || !f->pc ? f->pc : f->pc - 1;
	if (e) {
		src->module = e->path[0] ? e->path : NULL;
		src->map_start = e->start;
		src->map_limit = e->end;
		src->map_offset = e->offset;
		if (e->obj && e->obj->build_id_len)
			src->build_id = buildid__hex(e->obj->build_id, e->obj->build_id_len, hex,
						     hexsize);
	}
	if (si && si->name)
		src->func = si->name;
}

/* Kernel frames of the sample, innermost first, as "name_[k]". */
static int put_kernel(struct ljs_pipe *r, const struct ljs_sample *s)
{
	struct ljs_frame_src src = { 0 };
	const struct ljs_section *k = ljs_sample__section(s, LJS_SEC_KSTACK, -1);
	char name[LJS_NAME_MAX];
	uint32_t i;
	int n, err;

	if (!k || k->len < 8)
		return 0;
	r->st.kernel++;
	for (i = 0; i + 8 <= k->len; i += 8) {
		const struct ksym *ks = NULL;
		uint64_t ip, off;

		memcpy(&ip, k->data + i, 8);
		if (!ip)
			continue;
		if (r->ks_done)
			ks = ksyms__find(r->ks, ip, &off);
		if (ks)
			n = snprintf(name, sizeof(name), "%s_[k]", ks->name);
		else {
			r->st.ksym_missing++;
			n = snprintf(name, sizeof(name), "0x%" PRIx64 "_[k]", ip);
		}
		src.func = ks ? ks->name : NULL;
		src.module = ks && ks->module && ks->module[0] ? ks->module : "[kernel.kallsyms]";
		src.addr = ip;
		err = put_src(r, name, (size_t)n < sizeof(name) ? (size_t)n : sizeof(name) - 1,
			      LJS_FK_KERNEL, &src);
		if (err)
			return err;
	}
	return 0;
}

/* "func", or with LJS_PIPE_LINES and a known line "func file.c:123", then
 * suffix; the length written (truncated to fit). */
static int native_name(const struct ljs_pipe *r, const char *func, const struct sym_line *ln,
		       const char *suffix, char *buf, size_t size)
{
	const char *file = ln && ln->file ? strrchr(ln->file, '/') : NULL;
	int n;

	size_t a, b;

	file = file ? file + 1 : ln ? ln->file : NULL;
	if ((r->flags & LJS_PIPE_LINES) && file && ln->line > 0) {
		n = snprintf(buf, size, "%s %s:%d%s", func, file, ln->line, suffix);
		return n < 0 ? 0 : (size_t)n < size ? n : (int)size - 1;
	}
	/* snprintf(buf, size, "%s%s", func, suffix), without the format engine */
	a = strnlen(func, size - 1);
	memcpy(buf, func, a);
	b = strnlen(suffix, size - 1 - a);
	memcpy(buf + a, suffix, b);
	buf[a + b] = '\0';
	return (int)(a + b);
}

#define PIPE_IN_VM	"[LuaJIT interpreter]"
#define PIPE_JIT_CODE	"[JIT code]"

/* Name a native frame: its symbol (after the functions inlined there, as
 * "name_[i]", where DWARF tells), else module+0xoffset, else a class. */
static int put_native(struct ljs_pipe *r, const struct ljs_proc *p,
		      const struct native_frame *f)
{
	const struct sym_info *si = NULL;
	struct ljs_frame_src src, *srcp = NULL;
	char name[LJS_NAME_MAX], hex[2 * BUILDID_MAX + 1];
	int in_vm = f->pc >= p->vm_lo && f->pc < p->vm_hi;
	int have = p->pm && symbolizer__pc(r->sym, p->pm, f->pc, !f->activation, &si) == 0;
	int n, err;
	uint32_t k;

	if (r->flags & LJS_PIPE_DETAILS) {
		native_src(p, f, have ? si : NULL, hex, sizeof(hex), &src);
		srcp = &src;
	}
	if (have && si->name) {
		/* Functions the compiler inlined here, innermost first (DWARF). */
		for (k = 0; k + 1 < si->nlines; k++) {
			n = native_name(r, si->lines[k].func ? si->lines[k].func : "[inlined]",
					&si->lines[k], "_[i]", name, sizeof(name));
			if (srcp) {
				src.func = si->lines[k].func;
				src.file = si->lines[k].file;
				src.line = si->lines[k].line;
			}
			err = put_src(r, name, (size_t)n, LJS_FK_NATIVE_INLINED, srcp);
			if (err)
				return err;
		}
		n = native_name(r, si->name, si->nlines ? &si->lines[si->nlines - 1] : NULL, "",
				name, sizeof(name));
		if (srcp) {
			src.func = si->name;
			src.file = si->nlines ? si->lines[si->nlines - 1].file : NULL;
			src.line = si->nlines ? si->lines[si->nlines - 1].line : 0;
		}
		return put_src(r, name, (size_t)n, LJS_FK_NATIVE, srcp);
	}
	if (in_vm)
		return put_src(r, PIPE_IN_VM, sizeof(PIPE_IN_VM) - 1, LJS_FK_NATIVE, srcp);
	if (f->map_flags & NATIVE_MAP_ANON)
		return put_src(r, PIPE_JIT_CODE, sizeof(PIPE_JIT_CODE) - 1, LJS_FK_NATIVE, srcp);
	if (si)
		n = sym_info__format(si, name, sizeof(name));
	else
		n = snprintf(name, sizeof(name), "0x%" PRIx64, f->pc);
	if (n < 0)
		return -EINVAL;
	return put_src(r, name, (size_t)n < sizeof(name) ? (size_t)n : sizeof(name) - 1,
		       LJS_FK_NATIVE, srcp);
}

/*
 * The name of a lua_CFunction: its symbol when the function starts there,
 * else module+0xoffset of its entry in the file (the same in every run,
 * unlike the address); NULL where its mapping is unknown (C:0xADDRESS).
 */
static const char *c_name(struct ljs_pipe *r, const struct ljs_proc *p, uint64_t cfunc,
			  char *buf, size_t size)
{
	const struct sym_info *si;

	if (!cfunc || !p->pm || symbolizer__pc(r->sym, p->pm, cfunc, 0, &si) != 0)
		return NULL;
	if (si->name && si->offset == 0)
		return si->name;
	if (si->status == SYM_NO_MAPPING || si->status == SYM_ANON || !si->module || !si->module[0])
		return NULL;
	snprintf(buf, size, "%s+0x%" PRIx64, si->module, si->file_off);
	return buf;
}

/*
 * A VM state with no frame ([GC]: a GC step inside a C function's
 * allocation, lj_gc.h's lj_gc_check) at the top of an activation whose C
 * function has its native frames above: the state goes above that function's
 * entry frame (the native frame pushed last, called from the VM), so the
 * function keeps one name and one place in every sample, and its Lua-side
 * frame is dropped as without the state.  1 when it did so.
 */
static int put_state_in_c(struct ljs_pipe *r, const struct ljw_stack *ls, size_t i, size_t to,
			  int *err)
{
	struct ljs_frame tmp;
	struct ljs_stack *st = r->out;
	char name[LJS_NAME_MAX];
	size_t n;

	if (ls->frames[i].kind != LJW_FRAME_PSEUDO || i + 1 >= to ||
	    ls->frames[i + 1].kind != LJW_FRAME_C || !r->last_native || st->n < 1)
		return 0;
	n = ljs_name__lua_as(&ls->frames[i], NULL, 0, name, sizeof(name));
	*err = put(r, name, n, ljs_name__lua_kind(&ls->frames[i]));
	if (*err)
		return 1;
	tmp = st->f[st->n - 1];
	st->f[st->n - 1] = st->f[st->n - 2];
	st->f[st->n - 2] = tmp;
	r->last_native = 1;
	return 1;
}

/* A builtin's name from its C function's symbol (ljs_name__ffsym), or NULL
 * when the symbol is not one: remembered by the symbol name's address,
 * which lives as long as the symbolizer (every sample of a builtin-heavy
 * profile asks for the same few). */
static const char *ff_name(struct ljs_pipe *r, const char *raw)
{
	/* Two ways, the one used last first: a profile alternating between two
	 * builtins of one set keeps both. */
	size_t slot = (size_t)(((uint64_t)(uintptr_t)raw * 0x9e3779b97f4a7c15ull) >> 58) &
		      (FFNAME_CACHE - 2);
	struct ffname_slot *a = &r->ffc[slot], *b = a + 1, t;

	if (a->raw != raw) {
		if (b->raw == raw) {
			t = *a;
			*a = *b;
			*b = t;
		} else {
			*b = *a;
			a->raw = raw;
			a->ok = ljs_name__ffsym(raw, a->name, sizeof(a->name));
		}
	}
	return a->ok ? a->name : NULL;
}

/* Lua frames [from, to) of the walk, innermost first. */
static int put_lua(struct ljs_pipe *r, const struct ljs_proc *p, const struct ljw_stack *ls,
		   size_t from, size_t to)
{
	char name[LJS_NAME_MAX], cbuf[LJS_NAME_MAX];
	unsigned nflags = (r->flags & LJS_PIPE_LINES ? LJS_NAME_LINES : 0) |
			  (r->flags & LJS_PIPE_CALLSITE ? LJS_NAME_CALLSITE : 0);
	size_t i, n;
	int err;

	for (i = from; i < to; i++) {
		const struct ljw_frame *f = &ls->frames[i];
		const struct sym_info *si;
		struct ljw_frame named;
		const char *cname = NULL, *ffn;

		/* A C function's own native frames are already above it. */
		if (f->kind == LJW_FRAME_C && r->last_native && i == from)
			continue;
		if (i == from && put_state_in_c(r, ls, i, to, &err)) {
			if (err)
				return err;
			i++;	/* the C function: its native frames are there */
			continue;
		}
		/*
		 * Builtins: the build's own symbol, when it kept one, beats the
		 * per-family ffid table (LUA52COMPAT and Tarantool add functions
		 * and renumber the rest).
		 */
		if (f->kind == LJW_FRAME_FF && f->cfunc && p->pm &&
		    symbolizer__pc(r->sym, p->pm, f->cfunc, 0, &si) == 0 && si->raw_name &&
		    si->offset == 0 && (ffn = ff_name(r, si->raw_name)) != NULL) {
			named = *f;
			named.ffname = ffn;
			f = &named;
		}
		if (f->kind == LJW_FRAME_C)
			cname = c_name(r, p, f->cfunc, cbuf, sizeof(cbuf));
		n = ljs_name__lua_as(f, cname, nflags, name, sizeof(name));
		if (r->flags & LJS_PIPE_DETAILS) {
			struct ljs_frame_src src = { 0 };

			src.func = f->kind == LJW_FRAME_FF ? f->ffname : ljs_name__func(f, nflags);
			src.file = f->chunk;
			src.start_line = f->linedefined > 0 ? f->linedefined : 0;
			src.line = (r->flags & LJS_PIPE_LINES) && f->line > 0 ? f->line : src.start_line;
			src.addr = f->kind == LJW_FRAME_C || f->kind == LJW_FRAME_FF ? f->cfunc : 0;
			err = put_src(r, name, n, ljs_name__lua_kind(f), &src);
		} else {
			err = put(r, name, n, ljs_name__lua_kind(f));
		}
		if (err)
			return err;
	}
	return 0;
}

/* End of the Lua activation that starts at frame i (exclusive): its frames
 * share one C frame (ljw_frame.cframe); it also ends at an entry from C and
 * at a coroutine boundary. */
static size_t activation_end(const struct ljw_stack *ls, size_t i)
{
	uint64_t cf = ls->frames[i].cframe;

	for (; i < ls->nframes; i++) {
		if (ls->frames[i].flags & LJW_F_CCALL)
			return i + 1;	/* entered from C: the bottom of this activation */
		if (i + 1 < ls->nframes && (ls->frames[i + 1].flags & LJW_F_COROUTINE_BOUNDARY))
			return i + 1;	/* the resumer's frames run in another activation */
		if (i + 1 < ls->nframes && ls->frames[i + 1].cframe != cf)
			return i + 1;	/* run by another VM entry */
	}
	return ls->nframes;
}

/*
 * Is this native frame an activation of the VM: the interpreter, or trace
 * machine code (an anonymous mapping, or one created after the process was
 * described, so in no recorded mapping at all)?
 */
static int is_vm_frame(const struct ljs_proc *p, const struct native_frame *f)
{
	if (f->pc >= p->vm_lo && f->pc < p->vm_hi)
		return 1;
	return (f->map_flags & NATIVE_MAP_ANON) || f->map < 0;
}

/*
 * Does the Lua activation with C frame cf go at native frame f, or at one
 * inside it?  Every entry into the VM (vm_x64.dasc: lj_vm_call, lj_vm_pcall,
 * lj_vm_cpcall, lj_vm_resume, the FFI callback entry) saves its registers
 * and sets L->cframe to its rsp, where the interpreter then rests, so the C
 * frame lies in [sp, cfa) of the native frame running that entry; trace code
 * runs in the activation that entered it, below its C frame, with the same
 * CFA (native_lj.c).  A C frame below f's CFA is f's or that of a frame
 * inside it the unwinder passed without matching (placed here, late rather
 * than below its callers).  The last frame unwound has no CFA: what is left
 * goes there when it is a VM frame, else below it (put_stitched).
 */
static int cframe_at(const struct native_frame *f, int vm, uint64_t cf)
{
	return f->cfa ? cf < f->cfa : vm;
}

/*
 * Native frames with the Lua activations spliced in, innermost first: each
 * activation at the native frame that holds its C frame (cframe_at),
 * replacing that frame when it is a VM frame.  A VM entry that pushed no Lua
 * frame (lj_vm_cpcall running the parser for lua_loadx or the trace
 * recorder) keeps its native frame.  An activation whose C frame is unknown
 * takes the next VM frame.
 */
static int put_stitched(struct ljs_pipe *r, const struct ljs_proc *p,
			const struct native_stack *ns, const struct ljw_stack *ls)
{
	int splice = ls && ls->nframes && !(r->flags & LJS_PIPE_NATIVE_ONLY);
	size_t i, end, next = 0;
	int err = 0, used = 0;

	for (i = 0; i < ns->nframes && !err; i++) {
		const struct native_frame *f = &ns->frames[i];
		int vm = is_vm_frame(p, f), placed = 0;

		while (splice && next < ls->nframes && !err &&
		       (ls->frames[next].cframe ? cframe_at(f, vm, ls->frames[next].cframe) :
			vm && !placed)) {
			end = activation_end(ls, next);
			err = put_lua(r, p, ls, next, end);
			next = end;
			placed = used = 1;
		}
		if (!err && !(placed && vm))
			err = put_native(r, p, f);
	}
	if (!err && splice && next < ls->nframes) {
		/* The native unwind stopped above some VM entry: keep the Lua
		 * frames, below what was unwound. */
		r->st.lua_unplaced++;
		err = put_lua(r, p, ls, next, ls->nframes);
	}
	r->st.spliced += used;
	return err;
}

/*
 * Where p's trace exit handler returns from lj_trace_exit (native_lj.c), or
 * 0: as the recorder found it in the interpreter's code (a capture's copy of
 * the file holds no code), else (a capture from before ljsnap recorded it)
 * found in the code of the mapped file, read once per VM range (forked
 * workers share theirs).
 */
static uint64_t vm_exit_ret(struct ljs_pipe *r, const struct ljs_proc *p,
			    const struct memsrc *files)
{
	uint64_t len = p->vm_hi - p->vm_lo, *v, ret;
	uint8_t *code;
	int had;

	if (p->vm_exit_ret)
		return p->vm_exit_ret;
	if (!p->vm_lo || p->vm_hi <= p->vm_lo || len > (4u << 20))
		return 0;
	had = intmap__slot(&r->vm_exit, p->vm_lo ^ (len << 44), &v);
	if (had < 0)
		return 0;
	if (!had) {
		*v = 1;
		code = malloc(len);
		if (code && memsrc__read(files, p->vm_lo, code, len) == 0) {
			ret = native_lj__exit_ret(code, len, p->vm_lo);
			*v = ret ? ret : 1;
		}
		free(code);
	}
	return *v > 1 ? *v : 0;
}

/* Unwind the sample natively into ns: 1 when it gave frames, else 0. */
static int native_unwind(struct ljs_pipe *r, const struct ljs_proc *p, const struct ljs_sample *s,
			 struct native_stack *ns)
{
	struct native_opts no = { 0 };
	struct native_lj_rule rule;
	struct memsrc files;

	if ((r->flags & LJS_PIPE_LUA_ONLY) || !p->pm || !(s->flags & LJS_SAMPLE_F_REGS_VALID))
		return 0;
	/* Frames are read from the stack copy only (no.mem stays NULL): a saved
	 * register is never in a file's read-only bytes, and what a wild
	 * pointer reads there would differ between the file at the path and a
	 * capture's copy of it, which holds no code (symtab/elfcopy.h). */
	memsrc__init_procmap(&files, p->pm, NULL);
	if (p->has_luajit && native_lj_rule__from_sample(&rule, &p->layout, s, p->vm_lo, p->vm_hi)) {
		rule.exit_ret = vm_exit_ret(r, p, &files);
		no.step_unknown = native__step_lj;
		no.step_arg = &rule;
		no.hook_lo = rule.vm_lo;
		no.hook_hi = rule.vm_hi;
	}
	if (native__unwind_sample(r->u, &p->nmaps, s, &no, ns) != 0 || !ns->nframes)
		return 0;
	r->st.native++;
	r->st.native_complete += ns->complete;
	return 1;
}

/*
 * The sampled thread's stack, for the walker's check that the VM it finds
 * runs on this thread (ljw_opts.stack_lo/hi): the anonymous mapping that
 * holds the sample's SP, else (a thread created after the process was
 * described) the sample's copy of its user stack; 0, 0 when neither is
 * known.
 */
static void thread_stack(const struct ljs_proc *p, const struct ljs_sample *s,
			 struct ljw_opts *wo)
{
	const struct procmap_ent *e = p->pm && (s->flags & LJS_SAMPLE_F_REGS_VALID) ?
				      procmap__find(p->pm, s->regs.sp) : NULL;
	const struct ljs_section *us = ljs_sample__section(s, LJS_SEC_USTACK, -1);

	if (e && !e->obj && e->start <= s->regs.sp && s->regs.sp < e->end) {
		wo->stack_lo = e->start;
		wo->stack_hi = e->end;
	} else if (us && us->len) {
		wo->stack_lo = us->addr;
		wo->stack_hi = us->addr + us->len;
	}
}

/* Walk the sample's Lua frames (from the innermost VM frame's registers when
 * the native unwind found one): the walk, or NULL when there is none. */
static const struct ljw_stack *lua_walk(struct ljs_pipe *r, const struct ljs_proc *p,
					const struct ljs_sample *s, const struct memsrc *ms,
					const struct native_stack *ns)
{
	struct ljw_opts wo = { .vm_lo = p->vm_lo, .vm_hi = p->vm_hi,
			       .memo = !!(r->flags & LJS_PIPE_MEMO) };
	struct ljs_regs vmr, trr;
	long vm;
	size_t i;
	int err;

	if (!p->has_luajit || !(s->flags & LJS_SAMPLE_F_LUAJIT))
		return NULL;
	thread_stack(p, s, &wo);
	vm = ns ? native_stack__find(ns, p->vm_lo, p->vm_hi) : -1;
	if (vm >= 0) {
		native_frame__to_ljs_regs(&ns->frames[vm], &vmr);
		wo.vm_regs = &vmr;
	}
	/* The innermost return address into anonymous code (a trace, which
	 * the walker checks) and the registers there. */
	for (i = 0; ns && i < ns->nframes; i++) {
		const struct native_frame *f = &ns->frames[i];

		if (!f->activation && (f->map_flags & NATIVE_MAP_ANON) &&
		    (f->pc < p->vm_lo || f->pc >= p->vm_hi)) {
			native_frame__to_ljs_regs(f, &trr);
			wo.trace_ip = f->pc;
			wo.trace_regs = &trr;
			break;
		}
	}
	/* -EINVAL: the layout is unusable, so the sample counts as no LuaJIT. */
	r->st.lua_walks++;
	err = ljw__walk(r->w, &p->layout, s, ms, &wo, &r->lst);
	r->st.lua_remembered = ljw__memo_hits(r->w);
	if (err == -EINVAL)
		return NULL;
	return &r->lst;
}

/* Count the sample's walk in the statistics, and find its trace. */
static void count_walk(struct ljs_pipe *r, const struct ljs_proc *p,
		       const struct ljw_stack *lua, struct ljs_pipe_out *out)
{
	if (!lua && p->has_luajit) {
		/* Taken before the recorder configured the process (BPF copied no
		 * LuaJIT state) or an unusable layout: nothing to walk. */
		struct ljw_stack none;

		memset(&none, 0, sizeof(none));
		none.end = LJW_END_NO_LUA;
		ljs_walk_stats__count(&r->walk, &none);
	} else {
		ljs_walk_stats__count(&r->walk, lua);
	}
	out->has_trace = lua && ljs_trace_hit__from_walk(&out->trace, lua);
}

/* One sample to one named stack; see pipeline.h. */
int ljs_pipe__sample(struct ljs_pipe *r, const struct ljs_proc *p, const struct ljs_sample *s,
		     const struct memsrc *ms, const char *comm, struct ljs_pipe_out *out)
{
	struct native_stack ns;
	const struct ljw_stack *lua;
	int have_ns, err = 0;

	ljs_stack__reset(&out->stack);
	out->has_trace = 0;
	r->out = &out->stack;
	r->last_native = 0;
	have_ns = native_unwind(r, p, s, &ns);
	lua = lua_walk(r, p, s, ms, have_ns ? &ns : NULL);
	out->lua = lua;
	out->vm = lua && lua->end != LJW_END_NO_LUA && lua->end != LJW_END_OTHER_THREAD ?
		  (int)ljs_walk__vm(lua) : -1;
	count_walk(r, p, lua, out);

	if (!(r->flags & (LJS_PIPE_LUA_ONLY | LJS_PIPE_NO_KERNEL)))
		err = put_kernel(r, s);
	if (!err && have_ns)
		err = put_stitched(r, p, &ns, lua);
	else if (!err && lua && !(r->flags & LJS_PIPE_NATIVE_ONLY))
		err = put_lua(r, p, lua, 0, lua->nframes);
	if (!err && !out->stack.n) {
		const char *ph = lua && lua->end == LJW_END_NOT_IN_LUA ? "[not in Lua]" : "[native]";

		err = put(r, ph, strlen(ph), LJS_FK_NATIVE);
	}
	if (!err)
		err = put(r, comm, strlen(comm), LJS_FK_ROOT);
	ljs_stack__reverse(&out->stack);
	r->out = NULL;
	return err;
}

struct missing_ctx {
	void (*cb)(void *arg, const char *line);
	void *arg;
	size_t n;
};

/* objcache__foreach callback: one line per file that was needed but not usable. */
static int missing_one(struct objfile *obj, void *arg)
{
	struct missing_ctx *m = arg;
	char hex[2 * BUILDID_MAX + 1], line[1024];

	if (obj->hits && obj->from_copy) {
		snprintf(line, sizeof(line), "%s: %s (build id %s): used the copy in the capture, "
			 "%llu frame lookups", obj->path, objfile_status__name(obj->file_status),
			 buildid__hex(obj->build_id, obj->build_id_len, hex, sizeof(hex)),
			 (unsigned long long)obj->hits);
		m->cb(m->arg, line);
		m->n++;
		return 0;
	}
	if (!obj->hits || (obj->status == OBJFILE_OK && obj->verified))
		return 0;
	if (obj->status == OBJFILE_OK)
		return 0;	/* found, build id not recorded: used as is */
	snprintf(line, sizeof(line), "%s: %s (build id %s), %llu frame lookups",
		 obj->path, objfile_status__name(obj->status),
		 obj->build_id_len ? buildid__hex(obj->build_id, obj->build_id_len, hex, sizeof(hex))
				   : "not recorded",
		 (unsigned long long)obj->hits);
	m->cb(m->arg, line);
	m->n++;
	return 0;
}

/* Report files that native frames needed but could not use. */
size_t ljs_pipe__missing(struct ljs_pipe *r, void (*cb)(void *arg, const char *line), void *arg)
{
	struct missing_ctx m = { cb, arg, 0 };

	objcache__foreach(r->oc, missing_one, &m);
	return m.n;
}
