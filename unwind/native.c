/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * native.c -- DWARF CFI unwinding of a sample with libdw (see native.h).
 *
 * libdw's Dwfl unwinder runs over a Dwfl whose modules are the mapped ELF
 * files (dwfl_report_elf at each file's load bias) and whose "thread" is our
 * sample: set_initial_registers hands it the sampled registers, memory_read
 * the stack copy (then the caller's memory source).  Every frame libdw
 * produces passes through native__on_frame, which records it, checks that sp
 * grows and that the pc is plausible, and stops before libdw steps from a pc
 * that no module covers when a step_unknown hook is set: the walk then
 * continues from the hook's registers in a new dwfl_getthread_frames call
 * (a "segment").  libdw keeps no state between segments except its per-module
 * CFI caches, which is what makes one Dwfl per mapping set cheap to reuse.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/vec.h"
#include "unwind/native_int.h"

static const char *const native_end_names[NATIVE_END__MAX] = {
	"none", "complete", "truncated", "no_unwind_info", "bad_pc", "bad_sp", "bad_read",
	"hook_failed", "frame_limit", "no_regs", "error", "return_address_0",
};

/* -- Small helpers -------------------------------------------------------- */

/* Name of an end reason. */
const char *native_end__name(enum native_end e)
{
	return (unsigned)e < NATIVE_END__MAX ? native_end_names[e] : "?";
}

/* Name of a step method. */
const char *native_how__name(enum native_how h)
{
	static const char *const names[] = { "regs", "cfi", "fp", "hook" };

	return (unsigned)h < sizeof(names) / sizeof(names[0]) ? names[h] : "?";
}

/* Registers of a sample in DWARF order. */
void native_regs__from_ljs(struct native_regs *out, const struct ljs_regs *r)
{
	out->r[NATIVE_RAX] = r->ax;
	out->r[NATIVE_RDX] = r->dx;
	out->r[NATIVE_RCX] = r->cx;
	out->r[NATIVE_RBX] = r->bx;
	out->r[NATIVE_RSI] = r->si;
	out->r[NATIVE_RDI] = r->di;
	out->r[NATIVE_RBP] = r->bp;
	out->r[NATIVE_RSP] = r->sp;
	out->r[NATIVE_R8] = r->r8;
	out->r[NATIVE_R9] = r->r9;
	out->r[NATIVE_R10] = r->r10;
	out->r[NATIVE_R11] = r->r11;
	out->r[NATIVE_R12] = r->r12;
	out->r[NATIVE_R13] = r->r13;
	out->r[NATIVE_R14] = r->r14;
	out->r[NATIVE_R15] = r->r15;
	out->r[NATIVE_RIP] = r->ip;
	out->valid = NATIVE_ALL_REGS;
}

/* A frame's registers as struct ljs_regs (unknown ones 0). */
void native_frame__to_ljs_regs(const struct native_frame *f, struct ljs_regs *o)
{
	const struct native_regs *g = &f->regs;
#define R(i) ((g->valid >> (i)) & 1 ? g->r[i] : 0)
	memset(o, 0, sizeof(*o));
	o->ax = R(NATIVE_RAX);
	o->dx = R(NATIVE_RDX);
	o->cx = R(NATIVE_RCX);
	o->bx = R(NATIVE_RBX);
	o->si = R(NATIVE_RSI);
	o->di = R(NATIVE_RDI);
	o->bp = R(NATIVE_RBP);
	o->sp = f->sp;
	o->r8 = R(NATIVE_R8);
	o->r9 = R(NATIVE_R9);
	o->r10 = R(NATIVE_R10);
	o->r11 = R(NATIVE_R11);
	o->r12 = R(NATIVE_R12);
	o->r13 = R(NATIVE_R13);
	o->r14 = R(NATIVE_R14);
	o->r15 = R(NATIVE_R15);
	o->ip = f->pc;
#undef R
}

/* Index of the innermost frame whose pc is in [lo, hi). */
long native_stack__find(const struct native_stack *st, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; st && i < st->nframes; i++)
		if (st->frames[i].pc >= lo && st->frames[i].pc < hi)
			return (long)i;
	return -1;
}

/* -- libdw's thread callbacks ------------------------------------------------ */

static bool native__mem_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg);
static bool native__set_initial_registers(Dwfl_Thread *thread, void *arg);

/* The only thread of our "process" is the sample being unwound. */
static pid_t native__next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return 1;
}

/* Any tid names the sample being unwound. */
static bool native__get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

const Dwfl_Thread_Callbacks native__thread_cb = {
	.next_thread = native__next_thread,
	.get_thread = native__get_thread,
	.memory_read = native__mem_read,
	.set_initial_registers = native__set_initial_registers,
};

/* Read a word: the stack copy first, then the caller's memory source. */
int native__read_word(struct native_unw *u, uint64_t addr, uint64_t *result)
{
	struct native_walk *w = &u->w;
	uint64_t v;

	if (addr >= w->stk_lo && addr < w->stk_hi && w->stk_hi - addr >= 8) {
		memcpy(result, w->stk + (addr - w->stk_lo), 8);
		return 0;
	}
	if (w->o->mem && memsrc__read(w->o->mem, addr, &v, 8) == 0) {
		*result = v;
		return 0;
	}
	w->faulted = 1;
	w->fault_addr = addr;
	w->fault_beyond |= addr + 8 > w->stk_hi && addr < w->beyond_hi && addr >= w->stk_lo;
	return -1;
}

/* libdw's memory callback. */
static bool native__mem_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	uint64_t v;

	(void)dwfl;
	if (native__read_word(arg, addr, &v) != 0)
		return false;
	*result = v;
	return true;
}

/* Hand libdw the registers the current segment starts from. */
static bool native__set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct native_unw *u = arg;
	struct native_walk *w = &u->w;
	Dwarf_Word regs[NATIVE_NREGS];
	unsigned i = 0, j;

	memcpy(regs, w->init.r, sizeof(regs));
	/* libdw looks up the CFI of its initial frame at the pc itself: for a
	 * return address that must be pc - 1 (the call), as for its own frames. */
	regs[NATIVE_RIP] = w->init_act ? w->init_pc : w->init_pc - 1;
	while (i < NATIVE_NREGS) {	/* one call per run of known registers */
		if (!(w->init.valid >> i & 1) && i != NATIVE_RIP) {
			i++;
			continue;
		}
		for (j = i; j < NATIVE_NREGS && (j == NATIVE_RIP || (w->init.valid >> j & 1)); j++)
			;
		if (!dwfl_thread_state_registers(thread, (int)i, j - i, regs + i))
			return false;
		i = j;
	}
	dwfl_thread_state_register_pc(thread, regs[NATIVE_RIP]);
	return true;
}

/* Append a frame to the result (growing the arena). */
static int native__push(struct native_unw *u, const struct native_frame *f)
{
	int err = VEC_GROW(u->frames, &u->cap, u->nframes + 1);

	if (err)
		return err;
	if (u->nframes)
		u->frames[u->nframes - 1].cfa = f->sp;
	u->frames[u->nframes++] = *f;
	return 0;
}

/* Fill a frame from libdw's state (or from the segment start). */
static int native__read_frame(struct native_walk *w, Dwfl_Frame *state, struct native_frame *f)
{
	Dwarf_Addr pc;
	Dwarf_Word v;
	bool act = false;
	unsigned i;

	memset(f, 0, sizeof(*f));
	if (w->seg_frames == 0) {
		f->regs = w->init;
		f->pc = w->init_pc;
		f->activation = w->init_act;
		f->how = w->init_how;
	} else {
		if (!dwfl_frame_pc(state, &pc, &act))
			return -EINVAL;
		for (i = 0; i < NATIVE_NREGS; i++)
			if (dwfl_frame_reg(state, i, &v) == 0) {
				f->regs.r[i] = v;
				f->regs.valid |= 1u << i;
			}
		f->pc = pc;
		f->activation = act;
		f->how = w->prev_in_mod ? NATIVE_HOW_CFI : NATIVE_HOW_FP;
	}
	f->regs.r[NATIVE_RIP] = f->pc;
	f->regs.valid |= 1u << NATIVE_RIP;
	f->sp = f->regs.r[NATIVE_RSP];
	return (f->regs.valid >> NATIVE_RSP) & 1 ? 0 : -ENOENT;
}

/* Stop the walk from inside the frame callback. */
int native__frame_stop(struct native_walk *w, enum native_end why)
{
	w->end = why;
	return NATIVE_CB_STOP;
}

/* libdw's per-frame callback: record, check, maybe hand over to the hook.
 * Faults seen so far belong to the step that produced this frame; asking
 * libdw whether the frame is an activation makes it take the next step at
 * once, so the flags are checked and cleared before that. */
static int native__on_frame(Dwfl_Frame *state, void *arg)
{
	struct native_unw *u = arg;
	struct native_walk *w = &u->w;
	struct native_frame f;

	/* A read above the copy while stepping here: whatever libdw then made of
	 * it (frame pointers) is not this frame; the copy was too short. */
	if (w->seg_frames && w->fault_beyond)
		return native__frame_stop(w, NATIVE_END_TRUNCATED);
	w->faulted = 0;
	w->fault_beyond = 0;
	if (native__read_frame(w, state, &f) != 0)
		return native__frame_stop(w, NATIVE_END_NO_INFO);
	return native__frame_check(u, &f);
}

/* Check and record a frame (see native_int.h). */
int native__frame_check(struct native_unw *u, struct native_frame *fp)
{
	struct native_walk *w = &u->w;
	const struct native_smap *m;
	int first = w->seg_frames == 0, same = first && w->resume_same, in_mod;

	w->seg_frames++;
	if (fp->pc == 0)
		return native__frame_stop(w, NATIVE_END_RA_ZERO);
	/* No code lives in the first page or above the user half of the
	 * address space (57 bits with 5-level paging): a caller's pc there is
	 * garbage read where the stack holds none, whoever stepped to it. */
	if (u->nframes && (fp->pc < 4096 || fp->pc >= (1ull << 56)))
		return native__frame_stop(w, NATIVE_END_BAD_PC);
	if (!same && u->nframes && fp->sp <= u->frames[u->nframes - 1].sp)
		return native__frame_stop(w, NATIVE_END_BAD_SP);
	m = native_space__find(w->sp, fp->activation ? fp->pc : fp->pc - 1);
	fp->map = m ? (int)m->idx : -1;
	fp->map_flags = m ? m->flags : 0;
	in_mod = m && m->has_mod && (m->flags & NATIVE_MAP_EXEC);
	fp->in_module = (uint8_t)in_mod;
	/* A caller's pc outside every executable mapping is garbage (the sampled
	 * pc is real even then: code mapped after the mappings were read). */
	if (!same && u->nframes && w->sp->n && !(m && (m->flags & NATIVE_MAP_EXEC)) &&
	    !(w->o->step_unknown && !in_mod))
		return native__frame_stop(w, NATIVE_END_BAD_PC);
	if (!same) {
		if (u->nframes >= w->max_frames)
			return native__frame_stop(w, NATIVE_END_LIMIT);
		if (native__push(u, fp) != 0)
			return native__frame_stop(w, NATIVE_END_ERROR);
	}
	w->prev_in_mod = (uint8_t)in_mod;
	if (w->o->step_unknown && !(first && w->skip_hook) &&
	    (!in_mod || (fp->pc >= w->o->hook_lo && fp->pc < w->o->hook_hi)))
		return NATIVE_CB_HOOK;
	return DWARF_CB_OK;
}

/* -- The walk ------------------------------------------------------------------ */

/* A memsrc over the stack copy (for the hook). */
static int native__stk_read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	const struct native_walk *w = ms->ctx;

	if (addr < w->stk_lo || addr >= w->stk_hi || w->stk_hi - addr < len)
		return -EFAULT;
	memcpy(buf, w->stk + (addr - w->stk_lo), len);
	return 0;
}

/* Prepare the per-walk state from the stack copy. */
static void native__walk_init(struct native_unw *u, struct native_space *s,
			      const struct ljs_regs *regs, const struct ljs_section *ustack,
			      const struct native_opts *o)
{
	struct native_walk *w = &u->w;
	const struct native_smap *sm;

	memset(w, 0, sizeof(*w));
	w->sp = s;
	w->o = o;
	w->max_frames = o->max_frames ? o->max_frames : NATIVE_MAX_FRAMES;
	if (ustack && ustack->data && ustack->len) {
		w->stk = ustack->data;
		w->stk_lo = ustack->addr;
		w->stk_hi = ustack->addr + ustack->len;
		if (w->stk_hi < w->stk_lo)
			w->stk_hi = w->stk_lo;	/* wraps: treat as empty */
	}
	/* Bytes above the copy exist unless the copy stopped at the stack's end. */
	sm = native_space__find(s, regs->sp);
	if (ustack && ustack->status == LJS_ST_PARTIAL)
		w->beyond_hi = w->stk_hi;
	else if (sm && !(sm->flags & NATIVE_MAP_EXEC))
		w->beyond_hi = sm->end;
	else
		w->beyond_hi = w->stk_hi + NATIVE_STACK_GUESS;
	w->stk_ms.read = native__stk_read;
	w->stk_ms.ctx = w;
	w->stk_ms.next = o->mem;
	native_regs__from_ljs(&w->init, regs);
	w->init_pc = regs->ip;
	w->init_act = 1;
	w->init_how = NATIVE_HOW_REGS;
}

/* Run the hook on the last frame; 0 = continue from its registers. */
static int native__hook(struct native_unw *u)
{
	struct native_walk *w = &u->w;
	const struct native_frame *f = &u->frames[u->nframes - 1];
	struct native_regs nr;
	int err;

	memset(&nr, 0, sizeof(nr));
	err = w->o->step_unknown(w->o->step_arg, f, &w->stk_ms, &nr);
	if (err == -ENOENT) {	/* not its code: let libdw try frame pointers */
		w->init = f->regs;
		w->init_pc = f->pc;
		w->init_act = f->activation;
		w->resume_same = 1;
		w->skip_hook = 1;
		return 0;
	}
	if (err || !((nr.valid >> NATIVE_RSP) & 1) || !((nr.valid >> NATIVE_RIP) & 1) ||
	    nr.r[NATIVE_RSP] <= f->sp) {
		w->end = NATIVE_END_HOOK;
		return -1;
	}
	u->st.hook_steps++;
	w->init = nr;
	w->init_pc = nr.r[NATIVE_RIP];
	w->init_act = 0;
	w->init_how = NATIVE_HOW_HOOK;
	w->resume_same = 0;
	w->skip_hook = 0;
	return 0;
}

/* Map libdw's return value and our flags to an end reason.  libdw ends a
 * walk "normally" also when it could not read the return address, or read
 * 0 there (a wrong CFA does that), or when frame pointers ran out: only the
 * CFI of the last frame saying "no caller" is a complete stack. */
static enum native_end native__classify(struct native_unw *u, int rc)
{
	struct native_walk *w = &u->w;

	if (w->faulted && w->fault_beyond)
		return NATIVE_END_TRUNCATED;
	if (w->faulted)
		return NATIVE_END_BAD_READ;
	if (rc != 0)
		return NATIVE_END_NO_INFO;
	if (u->nframes && native__outermost(w->sp, &u->frames[u->nframes - 1]))
		return NATIVE_END_COMPLETE;
	return NATIVE_END_RA_ZERO;
}

/* The segments of one walk, each run by libdw or, with fast, by the cached
 * rules: 0, or NATIVE_FAST_BAIL when the cached rules cannot do it. */
static int native__walk(struct native_unw *u, int fast)
{
	struct native_walk *w = &u->w;
	unsigned seg;
	int rc = 0;

	for (seg = 0; seg < NATIVE_MAX_SEGMENTS; seg++) {
		w->seg_frames = 0;
		w->end = NATIVE_END_NONE;
		w->faulted = 0;
		w->fault_beyond = 0;
		if (!fast)
			rc = dwfl_getthread_frames(w->sp->dwfl, 1, native__on_frame, u);
		else if (native_fast__segment(u, &rc) == NATIVE_FAST_BAIL)
			return NATIVE_FAST_BAIL;
		if (seg)
			u->st.restarts++;
		if (rc != NATIVE_CB_HOOK)
			break;
		if (native__hook(u) != 0 || (fast && w->probe_unknown && w->resume_same))
			break;
	}
	if (fast && w->probe_unknown && rc == NATIVE_CB_HOOK)
		return NATIVE_FAST_BAIL;	/* the hook did not step that frame: libdw would */
	if (seg == NATIVE_MAX_SEGMENTS)
		w->end = NATIVE_END_LIMIT;
	else if (w->end == NATIVE_END_NONE)
		w->end = native__classify(u, rc);
	if (fast && (w->end == NATIVE_END_NO_INFO || w->end == NATIVE_END_ERROR))
		return NATIVE_FAST_BAIL;	/* libdw's message goes with these */
	return 0;
}

/*
 * rbx through frames that leave it alone.  elfutils' x86-64 ABI defaults
 * (backends/x86_64_cfi.c) give the same-value rule meant for rbx to DWARF
 * register 0, rax, so after every frame whose CFI does not mention rbx --
 * a callee that never touches it, like lj_tab_getinth -- libdw takes rbx
 * as undefined, and native_fast.c, which gives what libdw gives, too.  The
 * psABI makes rbx callee-saved, and the interpreter keeps its PC there
 * (vm_x64.dasc), so the Lua walk needs it at the frame that returns into
 * the VM: after either walk, a frame stepped by a CFI rule that leaves rbx
 * unmentioned (undefined here) has its callee's rbx.
 */
static void native__rbx_through(struct native_unw *u, struct native_space *s)
{
	const uint32_t rbx = 1u << 3;
	size_t i;

	for (i = 1; i < u->nframes; i++) {
		const struct native_frame *c = &u->frames[i - 1];
		struct native_frame *f = &u->frames[i];
		const struct native_rule *r;

		if (f->how != NATIVE_HOW_CFI || (f->regs.valid & rbx) || !(c->regs.valid & rbx))
			continue;
		r = native_space__rule(s, c->activation ? c->pc : c->pc - 1);
		if (r && r->status == NATIVE_RULE_OK && r->kind[3] == NATIVE_RULE_UNDEF) {
			f->regs.r[3] = c->regs.r[3];
			f->regs.valid |= rbx;
		}
	}
}

/* Unwind one stack (see native.h). */
int native__unwind(struct native_unw *u, const struct native_maps *m, const struct ljs_regs *regs,
		   const struct ljs_section *ustack, const struct native_opts *o,
		   struct native_stack *out)
{
	static const struct native_opts defaults;
	struct native_walk *w = &u->w;
	struct native_space *s = NULL;
	struct native_unw_stats st;
	int err;

	if (!u || !m || !out || (m->n && !m->v))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->msg = "";
	u->nframes = 0;
	if (!o)
		o = &defaults;
	if (!regs) {
		out->end = NATIVE_END_NO_REGS;
		return 0;
	}
	err = native__space(u, m, &s);
	if (err)
		return err;
	native__walk_init(u, s, regs, ustack, o);
	u->st.unwinds++;
	st = u->st;
	if (u->opts.no_rule_cache || native__walk(u, 1) == NATIVE_FAST_BAIL) {
		if (!u->opts.no_rule_cache) {
			u->st = st;
			u->st.fast_bails++;
			u->nframes = 0;
			native__walk_init(u, s, regs, ustack, o);
		}
		native__walk(u, 0);
	}
	native__rbx_through(u, s);
	if (w->end == NATIVE_END_NO_INFO || w->end == NATIVE_END_ERROR)
		out->msg = dwfl_errmsg(-1);
	out->frames = u->frames;
	out->nframes = u->nframes;
	out->end = w->end;
	out->complete = w->end == NATIVE_END_COMPLETE;
	out->truncated = w->end == NATIVE_END_TRUNCATED;
	out->fault_addr = w->faulted ? w->fault_addr : 0;
	for (size_t i = 0; i < u->nframes; i++)
		out->nhook += u->frames[i].how == NATIVE_HOW_HOOK;
	u->st.frames += u->nframes;
	u->st.end[w->end]++;
	return 0;
}

/* Unwind a decoded sample. */
int native__unwind_sample(struct native_unw *u, const struct native_maps *m,
			  const struct ljs_sample *s, const struct native_opts *o,
			  struct native_stack *out)
{
	if (!s)
		return -EINVAL;
	if (!(s->flags & LJS_SAMPLE_F_REGS_VALID)) {
		if (!out)
			return -EINVAL;
		memset(out, 0, sizeof(*out));
		out->msg = "";
		out->end = NATIVE_END_NO_REGS;
		if (u)
			u->st.end[NATIVE_END_NO_REGS]++;
		return 0;
	}
	return native__unwind(u, m, &s->regs, ljs_sample__section(s, LJS_SEC_USTACK, -1), o, out);
}

/* -- Lifetime ------------------------------------------------------------------ */

/* Allocate an unwinder. */
struct native_unw *native_unw__new(const struct native_unw_opts *o)
{
	struct native_unw *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	if (o)
		u->opts = *o;
	if (!u->opts.max_spaces)
		u->opts.max_spaces = NATIVE_MAX_SPACES;
	u->spaces = calloc(u->opts.max_spaces, sizeof(*u->spaces));
	if (!u->spaces) {
		free(u);
		return NULL;
	}
	return u;
}

/* Free an unwinder and every address space it holds. */
void native_unw__delete(struct native_unw *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->nspaces; i++)
		native_space__delete(u->spaces[i]);
	free(u->spaces);
	free(u->frames);
	free(u);
}

/* Counters. */
const struct native_unw_stats *native_unw__stats(const struct native_unw *u)
{
	return &u->st;
}
