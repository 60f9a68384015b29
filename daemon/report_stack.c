/*
 * report_stack.c -- kernel + native + Lua frames of one sample, stitched.
 *
 * The native unwinder (unwind/native.c) gives the user stack as the CPU saw
 * it: each entry into the LuaJIT VM (lj_vm_call, lj_vm_pcall, lj_vm_resume,
 * lj_vm_cpcall, or the trace code running in such an activation) is one
 * native frame.  The walker (unwind/ljwalk.c) gives the Lua frames, which
 * split into activations at every entry from C (FRAME_C/FRAME_CP links) and
 * at every coroutine boundary.  Innermost first, the n-th VM frame is
 * replaced by the n-th Lua activation; a Lua-side C-function frame is
 * dropped when its native frames are already there.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/report_stack.h"
#include "symtab/buildid.h"
#include "symtab/ksyms.h"
#include "symtab/objfile.h"
#include "symtab/symbolize.h"
#include "symtab/vec.h"
#include "unwind/native.h"

struct rstack {
	unsigned flags;
	struct objcache *oc;
	struct symbolizer *sym;
	struct native_unw *u;
	struct ksyms *ks;
	int ks_done;
	struct rstack_stats st;
	uint32_t *ids;		/* the sample's frames, innermost first */
	size_t nids, cap;
	int last_native;	/* the frame pushed last was native */
};

/* Create a stack builder. */
struct rstack *rstack__new(unsigned flags)
{
	struct rstack *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->flags = flags;
	r->oc = objcache__new(NULL);
	r->sym = symbolizer__new(NULL);
	r->u = native_unw__new(NULL);
	r->ks = ksyms__new();
	if (!r->oc || !r->sym || !r->u || !r->ks) {
		rstack__delete(r);
		return NULL;
	}
	return r;
}

/* Free it. */
void rstack__delete(struct rstack *r)
{
	if (!r)
		return;
	native_unw__delete(r->u);
	symbolizer__delete(r->sym);
	objcache__delete(r->oc);
	ksyms__delete(r->ks);
	free(r->ids);
	free(r);
}

/* Resolve a PROCESS record's mappings. */
int rstack__procmap(struct rstack *r, const struct snapfile_process *sp, struct procmap **out)
{
	*out = NULL;
	if (!sp->nmaps)
		return 0;
	return procmap__new(r->oc, sp->maps, sp->nmaps, out);
}

/* An in-memory image; see report_stack.h. */
int rstack__image(struct rstack *r, const struct snapfile_object *o)
{
	return objcache__add_image(r->oc, o->path, o->build_id, o->build_id_len, o->data, o->len);
}

/* Free a procmap. */
void rstack__procmap_free(struct procmap *pm)
{
	procmap__delete(pm);
}

/* Add the symbols of a KSYMS record. */
int rstack__ksyms(struct rstack *r, const struct snapfile_ksyms *k)
{
	return ksyms__add_records(r->ks, k->syms, k->n);
}

/* Sort the kernel symbols for lookups. */
int rstack__ksyms_done(struct rstack *r)
{
	r->ks_done = 1;
	return ksyms__finish(r->ks);
}

/* Counters. */
const struct rstack_stats *rstack__stats(const struct rstack *r)
{
	return &r->st;
}

/* Append an interned frame (innermost first). */
static int put(struct rstack *r, struct agg *agg, const char *name, size_t len, enum agg_cls cls)
{
	long id = agg__frame(agg, name, len, cls);
	int err;

	if (id < 0)
		return (int)id;
	if ((err = VEC_GROW(r->ids, &r->cap, r->nids + 1)) != 0)
		return err;
	r->ids[r->nids++] = (uint32_t)id;
	r->last_native = cls == AGG_NATIVE || cls == AGG_KERNEL;
	return 0;
}

/* Kernel frames of the sample, innermost first, as "name_[k]". */
static int put_kernel(struct rstack *r, struct agg *agg, const struct ljs_sample *s)
{
	const struct ljs_section *k = ljs_sample__section(s, LJS_SEC_KSTACK, -1);
	char name[AGG_NAME_MAX];
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
		err = put(r, agg, name, (size_t)n < sizeof(name) ? (size_t)n : sizeof(name) - 1,
			  AGG_KERNEL);
		if (err)
			return err;
	}
	return 0;
}

/* "func", or with RSTACK_LINES and a known line "func file.c:123", then
 * suffix; the length written (truncated to fit). */
static int native_name(const struct rstack *r, const char *func, const struct sym_line *ln,
		       const char *suffix, char *buf, size_t size)
{
	const char *file = ln && ln->file ? strrchr(ln->file, '/') : NULL;
	int n;

	file = file ? file + 1 : ln ? ln->file : NULL;
	if ((r->flags & RSTACK_LINES) && file && ln->line > 0)
		n = snprintf(buf, size, "%s %s:%d%s", func, file, ln->line, suffix);
	else
		n = snprintf(buf, size, "%s%s", func, suffix);
	return n < 0 ? 0 : (size_t)n < size ? n : (int)size - 1;
}

/* Name a native frame: its symbol (after the functions inlined there, as
 * "name_[i]", where DWARF tells), else module+0xoffset, else a class. */
static int put_native(struct rstack *r, struct agg *agg, const struct rstack_proc *p,
		      const struct native_frame *f)
{
	const struct sym_info *si = NULL;
	char name[AGG_NAME_MAX];
	int in_vm = f->pc >= p->vm_lo && f->pc < p->vm_hi;
	int n, err;
	uint32_t k;

	if (p->pm && symbolizer__pc(r->sym, p->pm, f->pc, !f->activation, &si) == 0 && si->name) {
		/* Functions the compiler inlined here, innermost first (DWARF). */
		for (k = 0; k + 1 < si->nlines; k++) {
			n = native_name(r, si->lines[k].func ? si->lines[k].func : "[inlined]",
					&si->lines[k], "_[i]", name, sizeof(name));
			err = put(r, agg, name, (size_t)n, AGG_NATIVE);
			if (err)
				return err;
		}
		n = native_name(r, si->name, si->nlines ? &si->lines[si->nlines - 1] : NULL, "",
				name, sizeof(name));
		return put(r, agg, name, (size_t)n, AGG_NATIVE);
	}
	if (in_vm)
		n = snprintf(name, sizeof(name), "[LuaJIT interpreter]");
	else if (f->map_flags & NATIVE_MAP_ANON)
		n = snprintf(name, sizeof(name), "[JIT code]");
	else if (si)
		n = sym_info__format(si, name, sizeof(name));
	else
		n = snprintf(name, sizeof(name), "0x%" PRIx64, f->pc);
	if (n < 0)
		return -EINVAL;
	return put(r, agg, name, (size_t)n < sizeof(name) ? (size_t)n : sizeof(name) - 1,
		   AGG_NATIVE);
}

/*
 * A builtin's library name from the symbol of its C function, as LuaJIT's
 * buildvm names them (lj_cf_os_clock -> os.clock, lj_ffh_string_byte ->
 * string.byte, lj_cf_ffi_meta___call -> ffi.meta.__call, lj_ffh_assert ->
 * assert).  0 when the symbol is not such a name.
 */
static int ffname_from_symbol(const char *sym, char *buf, size_t size)
{
	static const char *const libs[] = {	/* longest first where one prefixes another */
		"io_method_", "ffi_meta_", "ffi_clib_", "jit_util_", "jit_opt_", "jit_profile_",
		"buffer_method_", "string_", "table_", "math_", "os_", "io_", "coroutine_",
		"debug_", "jit_", "bit_", "ffi_", "package_", "buffer_", "misc_",
	};
	const char *rest;
	size_t i, k, n;

	if (!strncmp(sym, "lj_cf_", 6))
		rest = sym + 6;
	else if (!strncmp(sym, "lj_ffh_", 7))
		rest = sym + 7;
	else
		return 0;
	if (!*rest)
		return 0;
	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		n = strlen(libs[i]);
		if (strncmp(rest, libs[i], n) || !rest[n])
			continue;
		/* "io_method_" -> "io.method.": each '_' of the prefix becomes '.' */
		for (k = 0; k < n && k + 1 < size; k++)
			buf[k] = libs[i][k] == '_' ? '.' : libs[i][k];
		snprintf(buf + k, size - k, "%s", rest + n);
		return 1;
	}
	snprintf(buf, size, "%s", rest);
	return 1;
}

/* Lua frames [from, to) of the walk, innermost first. */
static int put_lua(struct rstack *r, struct agg *agg, const struct rstack_proc *p,
		   const struct ljw_stack *ls, size_t from, size_t to)
{
	char name[AGG_NAME_MAX], ffn[128];
	size_t i, n;
	int err;

	for (i = from; i < to; i++) {
		const struct ljw_frame *f = &ls->frames[i];
		const struct sym_info *si;
		struct ljw_frame named;

		/* A C function's own native frames are already above it. */
		if (f->kind == LJW_FRAME_C && r->last_native && i == from)
			continue;
		/*
		 * Builtins: the build's own symbol, when it kept one, beats the
		 * per-family ffid table (LUA52COMPAT and Tarantool add functions
		 * and renumber the rest).
		 */
		if (f->kind == LJW_FRAME_FF && f->cfunc && p->pm &&
		    symbolizer__pc(r->sym, p->pm, f->cfunc, 0, &si) == 0 && si->raw_name &&
		    si->offset == 0 && ffname_from_symbol(si->raw_name, ffn, sizeof(ffn))) {
			named = *f;
			named.ffname = ffn;
			f = &named;
		}
		n = agg__ljw_name(f, agg__flags(agg), name, sizeof(name));
		err = put(r, agg, name, n, agg__ljw_cls(f));
		if (err)
			return err;
	}
	return 0;
}

/* End of the Lua activation that starts at frame i (exclusive). */
static size_t activation_end(const struct ljw_stack *ls, size_t i)
{
	for (; i < ls->nframes; i++) {
		if (ls->frames[i].flags & LJW_F_CCALL)
			return i + 1;	/* entered from C: the bottom of this activation */
		if (i + 1 < ls->nframes && (ls->frames[i + 1].flags & LJW_F_COROUTINE_BOUNDARY))
			return i + 1;	/* the resumer's frames run in another activation */
	}
	return ls->nframes;
}

/*
 * Is this native frame an activation of the VM: the interpreter, or trace
 * machine code (an anonymous mapping, or one created after the process was
 * described, so in no recorded mapping at all)?
 */
static int is_vm_frame(const struct rstack_proc *p, const struct native_frame *f)
{
	if (f->pc >= p->vm_lo && f->pc < p->vm_hi)
		return 1;
	return (f->map_flags & NATIVE_MAP_ANON) || f->map < 0;
}

/* Native frames with the Lua activations spliced in. */
static int put_stitched(struct rstack *r, struct agg *agg, const struct rstack_proc *p,
			const struct native_stack *ns, const struct ljw_stack *ls)
{
	int splice = ls && ls->nframes && !(r->flags & RSTACK_NATIVE_ONLY);
	size_t i, next = 0;
	int err = 0, used = 0;

	for (i = 0; i < ns->nframes && !err; i++) {
		const struct native_frame *f = &ns->frames[i];

		if (splice && next < ls->nframes && is_vm_frame(p, f)) {
			size_t end = activation_end(ls, next);

			err = put_lua(r, agg, p, ls, next, end);
			next = end;
			used = 1;
			continue;
		}
		err = put_native(r, agg, p, f);
	}
	if (!err && splice && next < ls->nframes) {
		/* The native unwind stopped above some VM entry: keep the Lua
		 * frames, below what was unwound. */
		r->st.lua_unplaced++;
		err = put_lua(r, agg, p, ls, next, ls->nframes);
	}
	r->st.spliced += used;
	return err;
}

/* Build and push the whole stack of one sample; see report_stack.h. */
int rstack__build(struct rstack *r, struct agg *agg, struct agg_stack *sb, const char *comm,
		  const struct ljs_sample *s, const struct rstack_proc *p, struct ljw *w,
		  const struct memsrc *ms, struct ljw_stack *lst, const struct ljw_stack **lua)
{
	struct ljw_opts wo = { .vm_lo = p->vm_lo, .vm_hi = p->vm_hi };
	struct native_stack ns;
	struct native_lj_rule rule;
	struct ljs_regs vmr;
	int have_ns = 0, err = 0;
	size_t i;

	r->nids = 0;
	r->last_native = 0;
	*lua = NULL;
	if (!(r->flags & RSTACK_LUA_ONLY) && p->pm && (s->flags & LJS_SAMPLE_F_REGS_VALID)) {
		struct native_opts no = { 0 };
		struct memsrc files;

		procmap__memsrc_init(&files, p->pm, NULL);
		no.mem = &files;
		if (p->has_luajit &&
		    native_lj_rule__from_sample(&rule, p->layout, s, p->vm_lo, p->vm_hi)) {
			no.step_unknown = native__step_lj;
			no.step_arg = &rule;
			no.hook_lo = rule.vm_lo;
			no.hook_hi = rule.vm_hi;
		}
		if (native__unwind_sample(r->u, &p->pm->nmaps, s, &no, &ns) == 0 && ns.nframes) {
			have_ns = 1;
			r->st.native++;
			r->st.native_complete += ns.complete;
		}
	}
	if (p->has_luajit && (s->flags & LJS_SAMPLE_F_LUAJIT)) {
		long vm = have_ns ? native_stack__find(&ns, p->vm_lo, p->vm_hi) : -1;

		if (vm >= 0) {
			native_frame__to_ljs_regs(&ns.frames[vm], &vmr);
			wo.vm_regs = &vmr;
		}
		/* -EINVAL: the layout is unusable, so the sample counts as no LuaJIT. */
		if (ljw__walk(w, p->layout, s, ms, &wo, lst) != -EINVAL)
			*lua = lst;
	}

	if (!(r->flags & (RSTACK_LUA_ONLY | RSTACK_NO_KERNEL)))
		err = put_kernel(r, agg, s);
	if (!err && have_ns)
		err = put_stitched(r, agg, p, &ns, *lua);
	else if (!err && *lua && !(r->flags & RSTACK_NATIVE_ONLY))
		err = put_lua(r, agg, p, *lua, 0, (*lua)->nframes);
	if (!err && !r->nids) {
		const char *ph = *lua && (*lua)->end == LJW_END_NOT_IN_LUA ? "[not in Lua]" : "[native]";

		err = put(r, agg, ph, strlen(ph), AGG_NATIVE);
	}
	if (!err)
		err = agg__push(agg, sb, comm, strlen(comm), AGG_ROOT);
	for (i = r->nids; !err && i > 0; i--)
		err = agg_stack__push_id(sb, r->ids[i - 1]);
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
size_t rstack__missing(struct rstack *r, void (*cb)(void *arg, const char *line), void *arg)
{
	struct missing_ctx m = { cb, arg, 0 };

	objcache__foreach(r->oc, missing_one, &m);
	return m.n;
}
