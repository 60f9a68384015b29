/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_native.c -- native unwinding (unwind/native.c) and symbolization
 * (symtab/symbolize.c) of this very process, offline.
 *
 * main -> a -> b -> c (tests/native/chain.c) takes two snapshots the way the
 * BPF program does: inline-asm registers plus a stack copy, and a SIGPROF
 * interrupt at an arbitrary instruction of c's spin loop.  After the chain
 * returned, each snapshot is unwound with /proc/self/maps as the mapping list
 * (build ids read from the files, as `ljsnap record` does) and checked
 * against the compiler's ground truth: the return addresses each function
 * saw, the source lines of the calls, and the names c, b, a, main, then libc,
 * then _start, ending "complete".  Then: every cut of the stack copy gives a
 * prefix of the frames and says "truncated"; garbage stacks and registers
 * stay bounded; a JIT frame in an anonymous mapping is stepped by the
 * LuaJIT rule hook; a wrong build id is reported and falls back.
 * Built three times: with and without frame pointers (TEST_NATIVE_FP says
 * which), and with .debug_frame only (no .eh_frame entries for our code).
 * TEST_NATIVE_BENCH=N unwinds + symbolizes the snapshot N times and prints
 * the rate.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "symtab/elf.h"
#include "symtab/objfile.h"
#include "symtab/symbolize.h"
#include "tests/native/chain.h"
#include "unwind/native.h"
#include "unwind/proc.h"
#include "tests/unit/check.h"

#define MAX_MAPS	512

#ifndef TEST_NATIVE_FP
#define TEST_NATIVE_FP 0	/* set by the build: 1 = built with frame pointers */
#endif

int failures, checks;

/* Our mappings, as a PROCESS record carries them. */
struct maps {
	struct procmap_desc v[MAX_MAPS];
	char paths[MAX_MAPS][512];
	uint8_t ids[MAX_MAPS][BUILDID_MAX];
	size_t n;
};

static struct maps maps;

/* Read /proc/self/maps with each file's build id; *stack_hi is the end of
 * the mapping holding sp_probe (under valgrind, not "[stack]").  0 or -1. */
static int maps__read(struct maps *m, uint64_t sp_probe, uint64_t *stack_hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];

	if (!f)
		return -1;
	m->n = 0;
	while (fgets(line, sizeof(line), f) && m->n < MAX_MAPS) {
		unsigned long long lo, hi, off;
		char prot[8] = "", path[512] = "";
		struct procmap_desc *e = &m->v[m->n];
		struct elf_file *ef;
		int len;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %511[^\n]", &lo, &hi, prot, &off,
			   path) < 4)
			continue;
		memset(e, 0, sizeof(*e));
		e->start = lo;
		e->end = hi;
		e->offset = off;
		e->prot = (prot[0] == 'r' ? PROCMAP_PROT_READ : 0) |
			  (prot[1] == 'w' ? PROCMAP_PROT_WRITE : 0) |
			  (prot[2] == 'x' ? PROCMAP_PROT_EXEC : 0) |
			  (prot[3] == 's' ? PROCMAP_PROT_SHARED : 0);
		snprintf(m->paths[m->n], sizeof(m->paths[0]), "%s", path);
		e->path = m->paths[m->n];
		if (lo <= sp_probe && sp_probe < hi)
			*stack_hi = hi;
		if (path[0] == '/' && elf_file__open(path, &ef) == 0) {
			len = elf_file__build_id(ef, m->ids[m->n], BUILDID_MAX);
			if (len > 0) {
				e->build_id = m->ids[m->n];
				e->build_id_len = (uint32_t)len;
			}
			elf_file__delete(ef);
		}
		m->n++;
	}
	fclose(f);
	return 0;
}

/* Everything one unwind + symbolization needs. */
struct env {
	struct objcache *oc;
	struct ljs_proc proc;
	struct procmap *pm;	/* proc.pm */
	struct native_unw *u;
	struct native_unw *ref;	/* libdw's own walk, no cached rules: the same frames */
	struct symbolizer *sym;
	struct memsrc files;
};

/* Build the environment from the current maps. */
static int env__init(struct env *e)
{
	struct native_unw_opts ro = { .no_rule_cache = 1 };

	memset(e, 0, sizeof(*e));
	e->oc = objcache__new(NULL);
	e->u = native_unw__new(NULL);
	e->ref = native_unw__new(&ro);
	e->sym = symbolizer__new(NULL);
	if (!e->oc || !e->u || !e->ref || !e->sym ||
	    ljs_proc__maps(&e->proc, e->oc, maps.v, maps.n) != 0)
		return -1;
	e->pm = e->proc.pm;
	memsrc__init_procmap(&e->files, e->pm, NULL);
	return 0;
}

/* Free the environment. */
static void env__exit(struct env *e)
{
	symbolizer__delete(e->sym);
	native_unw__delete(e->u);
	native_unw__delete(e->ref);
	ljs_proc__exit(&e->proc);
	objcache__delete(e->oc);
}

/* A stack section over a snapshot, cut to len bytes. */
static struct ljs_section snap__section(const struct chain_snap *s, uint32_t len)
{
	struct ljs_section sec;

	memset(&sec, 0, sizeof(sec));
	sec.kind = LJS_SEC_USTACK;
	sec.status = len < s->len ? LJS_ST_TRUNCATED : LJS_ST_PARTIAL;
	sec.len = len < s->len ? len : s->len;
	sec.want = s->len;
	sec.addr = s->regs.sp;
	sec.data = s->stack;
	return sec;
}

/* The cached-rule walk (native_fast.c) gives what libdw's own walk gives:
 * every frame field, every valid register, the end and the fault. */
static void same_as_libdw(struct env *e, const struct ljs_regs *regs,
			  const struct ljs_section *sec, const struct native_opts *o,
			  const struct native_stack *st)
{
	struct native_stack ref;
	size_t i;
	int k;

	CHECKF(native__unwind(e->ref, &e->proc.nmaps, regs, sec, o, &ref) == 0, "libdw unwind");
	CHECKF(ref.nframes == st->nframes && ref.end == st->end && ref.nhook == st->nhook &&
	       ref.fault_addr == st->fault_addr, "libdw: %zu frames, end %s; rules: %zu, %s",
	       ref.nframes, native_end__name(ref.end), st->nframes, native_end__name(st->end));
	for (i = 0; i < ref.nframes && i < st->nframes; i++) {
		const struct native_frame *a = &ref.frames[i], *b = &st->frames[i];
		int same = a->pc == b->pc && a->sp == b->sp && a->cfa == b->cfa &&
			   a->map == b->map && a->map_flags == b->map_flags && a->how == b->how &&
			   a->activation == b->activation && a->in_module == b->in_module &&
			   a->regs.valid == b->regs.valid;

		for (k = 0; k < NATIVE_NREGS; k++)
			same &= !((a->regs.valid >> k) & 1) || a->regs.r[k] == b->regs.r[k];
		CHECKF(same, "frame %zu differs from libdw's (pc %#llx / %#llx)", i,
		       (unsigned long long)a->pc, (unsigned long long)b->pc);
	}
}

/* Unwind a snapshot (opts may be NULL). */
static void unwind(struct env *e, const struct ljs_regs *regs, const struct ljs_section *sec,
		   struct native_opts *o, struct native_stack *st)
{
	struct native_opts def = { .mem = &e->files };
	int err;

	if (!o)
		o = &def;
	err = native__unwind(e->u, &e->proc.nmaps, regs, sec, o, st);
	CHECKF(err == 0, "native__unwind: %s", strerror(-err));
	same_as_libdw(e, regs, sec, o, st);
}

/* Symbol name of a frame ("" if none). */
static const struct sym_info *sym_of(struct env *e, const struct native_frame *f)
{
	const struct sym_info *si = NULL;
	int err = symbolizer__pc(e->sym, e->pm, f->pc, !f->activation, &si);

	CHECKF(err == 0 && si, "symbolizer__pc(%#llx): %d", (unsigned long long)f->pc, err);
	return si;
}

/* Print a stack (on failure, for the log). */
static void stack__dump(struct env *e, const char *what, const struct native_stack *st)
{
	size_t i;

	fprintf(stderr, "  %s: %zu frames, end %s %s (fault at %#llx)\n", what, st->nframes,
		native_end__name(st->end), st->msg, (unsigned long long)st->fault_addr);
	for (i = 0; i < st->nframes; i++) {
		const struct sym_info *si = sym_of(e, &st->frames[i]);
		char buf[256];

		sym_info__format(si, buf, sizeof(buf));
		fprintf(stderr, "   #%zu %#llx sp %#llx %-4s %s (%s:%d)\n", i,
			(unsigned long long)st->frames[i].pc, (unsigned long long)st->frames[i].sp,
			native_how__name(st->frames[i].how), buf,
			si->nlines ? si->lines[0].file : "?", si->nlines ? si->lines[0].line : 0);
	}
}

/* Name of a frame's symbol, or "". */
static const char *name_of(struct env *e, const struct native_frame *f)
{
	const struct sym_info *si = sym_of(e, f);

	return si && si->raw_name ? si->raw_name : "";
}

/* The full check of one snapshot: pcs, names, lines, libc, _start, complete. */
static void check_chain(struct env *e, const char *what, const struct chain_snap *s, int in_spin)
{
	struct ljs_section sec = snap__section(s, s->len);
	struct native_stack st;
	const struct sym_info *si;
	int before = failures;
	size_t i;

	unwind(e, &s->regs, &sec, NULL, &st);
	CHECKF(st.nframes >= 6, "%s: %zu frames", what, st.nframes);
	if (st.nframes < 6)
		goto out;
	CHECKF(st.frames[0].pc == s->regs.ip && st.frames[0].activation, "%s: frame 0", what);
	CHECKF(st.frames[1].pc == chain_truth.ra_c, "%s: frame 1 pc %#llx, ra into b %#llx", what,
	      (unsigned long long)st.frames[1].pc, (unsigned long long)chain_truth.ra_c);
	CHECKF(st.frames[2].pc == chain_truth.ra_b, "%s: frame 2 pc != ra into a", what);
	CHECKF(st.frames[3].pc == chain_truth.ra_a, "%s: frame 3 pc != ra into main", what);
	CHECKF(strcmp(name_of(e, &st.frames[0]), "c") == 0, "%s: #0 is %s", what, name_of(e, &st.frames[0]));
	CHECKF(strcmp(name_of(e, &st.frames[1]), "b") == 0, "%s: #1 is %s", what, name_of(e, &st.frames[1]));
	CHECKF(strcmp(name_of(e, &st.frames[2]), "a") == 0, "%s: #2 is %s", what, name_of(e, &st.frames[2]));
	CHECKF(strcmp(name_of(e, &st.frames[3]), "main") == 0, "%s: #3 is %s", what,
	      name_of(e, &st.frames[3]));
	for (i = 1; i < st.nframes; i++)
		CHECKF(st.frames[i].sp > st.frames[i - 1].sp && st.frames[i - 1].cfa == st.frames[i].sp,
		      "%s: sp/cfa of frame %zu", what, i);
	/* Lines: the asm snapshot is in c itself; the signal one in the spin
	 * loop inlined into c; callers at the lines of their calls. */
	si = sym_of(e, &st.frames[0]);
	if (!in_spin) {
		CHECKF(si->nlines == 1 && si->lines[0].func && strcmp(si->lines[0].func, "c") == 0 &&
		      si->lines[0].line == chain_truth.line_capture, "%s: #0 at %s:%d, not c:%d", what,
		      si->nlines ? si->lines[0].func : "-", si->nlines ? si->lines[0].line : -1,
		      chain_truth.line_capture);
	} else {
		CHECKF(si->nlines == 2, "%s: #0 has %u line levels (spin inlined into c)", what,
		      si->nlines);
	}
	if (in_spin && si->nlines == 2) {
		CHECKF(si->lines[0].func && strcmp(si->lines[0].func, "spin") == 0, "%s: inner %s", what,
		      si->lines[0].func);
		CHECKF(si->lines[0].line >= chain_truth.line_spin - 2 &&
		      si->lines[0].line <= chain_truth.line_spin + 1, "%s: spin line %d (loop %d)",
		      what, si->lines[0].line, chain_truth.line_spin);
		CHECKF(si->lines[1].func && strcmp(si->lines[1].func, "c") == 0 &&
		      si->lines[1].line == chain_truth.line_c_spin, "%s: c calls spin at %s:%d, not %d",
		      what, si->lines[1].func, si->lines[1].line, chain_truth.line_c_spin);
		CHECKF(si->lines[0].file && strstr(si->lines[0].file, "chain.c"), "%s: file %s", what,
		      si->lines[0].file);
	}
	si = sym_of(e, &st.frames[1]);
	CHECKF(si->nlines >= 1 && si->lines[si->nlines - 1].line == chain_truth.line_b_call,
	      "%s: b's call line %d != %d", what, si->nlines ? si->lines[0].line : -1,
	      chain_truth.line_b_call);
	si = sym_of(e, &st.frames[2]);
	CHECKF(si->nlines >= 1 && si->lines[si->nlines - 1].line == chain_truth.line_a_call,
	      "%s: a's call line", what);
	si = sym_of(e, &st.frames[3]);
	CHECKF(si->nlines >= 1 && si->lines[si->nlines - 1].line == chain_truth.line_main_call,
	      "%s: main's call line %d != %d", what, si->nlines ? si->lines[si->nlines - 1].line : -1,
	      chain_truth.line_main_call);
	/* Below main: libc (start code), then _start of this program. */
	si = sym_of(e, &st.frames[4]);
	CHECKF(strncmp(si->module, "libc.so", 7) == 0, "%s: #4 in %s", what, si->module);
	/* glibc 2.34+: main is called by a local function only libc6-dbg names */
	if (si->obj && si->obj->debug)
		CHECKF(strcmp(name_of(e, &st.frames[4]), "__libc_start_call_main") == 0 &&
		      (strcmp(name_of(e, &st.frames[5]), "__libc_start_main_impl") == 0 ||
		       strcmp(name_of(e, &st.frames[5]), "__libc_start_main") == 0),
		      "%s: libc frames %s, %s", what, name_of(e, &st.frames[4]),
		      name_of(e, &st.frames[5]));
	CHECKF(strcmp(name_of(e, &st.frames[st.nframes - 1]), "_start") == 0, "%s: last is %s", what,
	      name_of(e, &st.frames[st.nframes - 1]));
	CHECKF(st.end == NATIVE_END_COMPLETE && st.complete, "%s: end %s", what,
	      native_end__name(st.end));
out:
	if (failures != before)
		stack__dump(e, what, &st);
}

/* Every cut of the copy: a prefix of the full unwind, and "truncated". */
static void check_truncation(struct env *e, const char *what, const struct chain_snap *s)
{
	struct native_frame full[64];
	struct ljs_section sec = snap__section(s, s->len);
	struct native_stack st;
	size_t nfull, i, k, bad = 0;
	uint32_t len;

	unwind(e, &s->regs, &sec, NULL, &st);
	nfull = st.nframes < 64 ? st.nframes : 64;
	memcpy(full, st.frames, nfull * sizeof(full[0]));
	/* Cut right below the return address of frame k + 1: exactly k + 1 frames. */
	for (k = 0; k + 1 < nfull; k++) {
		len = (uint32_t)(full[k].cfa - 8 - s->regs.sp);
		sec = snap__section(s, len);
		unwind(e, &s->regs, &sec, NULL, &st);
		CHECKF(st.nframes == k + 1 && st.end == NATIVE_END_TRUNCATED && st.truncated,
		      "%s: cut at %u (ra of frame %zu): %zu frames, end %s", what, len, k + 1,
		      st.nframes, native_end__name(st.end));
	}
	/* Every 8-byte cut: prefix, and complete only with every frame. */
	for (len = 0; len <= s->len && bad < 5; len += 8) {
		sec = snap__section(s, len);
		unwind(e, &s->regs, &sec, NULL, &st);
		for (i = 0; i < st.nframes && i < nfull; i++)
			if (st.frames[i].pc != full[i].pc || st.frames[i].sp != full[i].sp)
				break;
		if (i != st.nframes || st.nframes > nfull ||
		    (st.end == NATIVE_END_COMPLETE) != (st.nframes == nfull) ||
		    (st.end != NATIVE_END_COMPLETE && st.end != NATIVE_END_TRUNCATED)) {
			bad++;
			CHECKF(0, "%s: cut at %u: %zu frames (full %zu), end %s", what, len, st.nframes,
			      nfull, native_end__name(st.end));
		}
	}
}

/* xorshift64 for reproducible garbage. */
static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A step_unknown hook that takes [sp] as the return address, as a frame
 * without CFI might: on a garbage stack it hands back garbage pcs. */
static int hook_pop(void *arg, const struct native_frame *f, const struct memsrc *mem,
		    struct native_regs *out)
{
	uint64_t sp = f->regs.r[NATIVE_RSP], ra;

	(void)arg;
	if (memsrc__u64(mem, sp, &ra))
		return -EFAULT;
	*out = f->regs;
	out->r[NATIVE_RSP] = sp + 8;
	out->r[NATIVE_RIP] = ra;
	out->valid = (1u << NATIVE_RSP) | (1u << NATIVE_RIP);
	return 0;
}

/* Garbage stacks and registers: bounded, no crash, an end reason; with a
 * hook that steps anything, a caller's pc is never one no code can have
 * (a non-canonical address, the first page): the walk stops there. */
static void check_garbage(struct env *e, const struct chain_snap *s)
{
	static uint8_t junk[8192];
	struct native_opts o = { .mem = &e->files, .max_frames = 64 };
	struct native_stack st;
	struct ljs_section sec;
	struct ljs_regs r;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int iter;
	size_t i;

	for (iter = 0; iter < 6000; iter++) {
		o.step_unknown = iter >= 3000 ? hook_pop : NULL;
		for (i = 0; i < sizeof(junk); i += 8) {
			uint64_t v = rnd(&x);

			/* mix in plausible values: stack and code addresses */
			if ((v & 3) == 0)
				v = s->regs.sp + (v >> 8) % sizeof(junk);
			else if ((v & 3) == 1)
				v = chain_truth.ra_c + (v >> 8) % 4096 - 2048;
			memcpy(junk + i, &v, 8);
		}
		r = s->regs;
		if (iter & 1) {
			r.bp = s->regs.sp + rnd(&x) % sizeof(junk);
			r.ip = iter & 2 ? rnd(&x) : chain_truth.ra_b + rnd(&x) % 64;
		}
		memset(&sec, 0, sizeof(sec));
		sec.kind = LJS_SEC_USTACK;
		sec.addr = r.sp;
		sec.len = sizeof(junk);
		sec.want = sizeof(junk);
		sec.data = junk;
		unwind(e, &r, &sec, &o, &st);
		CHECKF(st.nframes >= 1 && st.nframes <= 64 && st.end != NATIVE_END_NONE,
		      "garbage %d: %zu frames, end %s", iter, st.nframes, native_end__name(st.end));
		for (i = 1; i < st.nframes; i++) {
			CHECKF(st.frames[i].sp > st.frames[i - 1].sp, "garbage %d: sp not growing", iter);
			CHECKF(st.frames[i].pc >= 4096 && st.frames[i].pc < (1ull << 56),
			       "garbage %d: frame %zu has pc %#llx", iter, i,
			       (unsigned long long)st.frames[i].pc);
		}
	}
	/* No stack copy at all. */
	unwind(e, &s->regs, NULL, NULL, &st);
	CHECKF(st.nframes >= 1 && st.end == NATIVE_END_TRUNCATED, "no copy: %zu frames, end %s",
	      st.nframes, native_end__name(st.end));
}

/* Long on purpose: one list of checks, each a variant of the same hook rule. */
/* A JIT frame (anonymous executable page) stepped by the LuaJIT rule. */
static void check_hook(struct env *e, const struct chain_snap *s, void *page)
{
	struct ljs_section sec = snap__section(s, s->len);
	struct native_stack st;
	struct native_lj_rule rule;
	struct native_opts o = { .mem = &e->files, .step_unknown = native__step_lj, .step_arg = &rule };
	struct ljs_regs r = s->regs;
	uint64_t sp_b, cf = 80, mc = (uint64_t)(uintptr_t)page;
	int before = failures;
	size_t i;

	unwind(e, &s->regs, &sec, NULL, &st);
	if (st.nframes < 4)
		return;
	sp_b = st.frames[1].sp;	/* c's CFA: the trace's "VM frame" ends there */
	/* A trace at page+0x40 whose cframe is sp_b - 80, entered from b. */
	native_lj_rule__init(&rule, (uint32_t)cf, 1);
	rule.trace_lo = mc;
	rule.trace_hi = mc + 0x80;
	rule.cframe = sp_b - cf;
	r.ip = mc + 0x40;
	r.sp = rule.cframe - 16;
	unwind(e, &r, &sec, &o, &st);
	CHECKF(st.nframes >= 4 && st.frames[1].pc == chain_truth.ra_c && st.frames[1].how ==
	      NATIVE_HOW_HOOK && st.frames[2].pc == chain_truth.ra_b && st.nhook == 1 &&
	      st.end == NATIVE_END_COMPLETE, "trace rule: %zu frames, end %s", st.nframes,
	      native_end__name(st.end));
	CHECKF(st.frames[0].map >= 0 && (e->proc.nat[st.frames[0].map].flags & NATIVE_MAP_ANON),
	      "trace frame not in the anonymous mapping");
	/* Same, cframe derived from rsp (rsp = cframe - 16 - spadjust). */
	rule.cframe = 0;
	rule.spadjust = 32;
	r.sp = sp_b - cf - 16 - 32;
	unwind(e, &r, &sec, &o, &st);
	CHECKF(st.nframes >= 4 && st.frames[1].pc == chain_truth.ra_c && st.frames[2].pc ==
	      chain_truth.ra_b && st.end == NATIVE_END_COMPLETE, "rsp rule: end %s",
	      native_end__name(st.end));
	/* The interpreter rule (VM file missing): CFA = rsp + CFRAME_SIZE. */
	native_lj_rule__init(&rule, (uint32_t)cf, 1);
	rule.trace_lo = mc;
	rule.trace_hi = mc + 0x20;
	rule.vm_lo = mc + 0x80;
	rule.vm_hi = mc + 0x100;
	r.ip = mc + 0x90;
	r.sp = sp_b - cf;
	unwind(e, &r, &sec, &o, &st);
	CHECKF(st.nframes >= 4 && st.frames[1].pc == chain_truth.ra_c && st.frames[2].pc ==
	      chain_truth.ra_b && st.end == NATIVE_END_COMPLETE, "vm rule: end %s",
	      native_end__name(st.end));
	/* A "VM" pc inside a module (c's code standing in for the interpreter),
	 * sampled below the activation's cframe as in a VM subroutine: the hook
	 * range makes the rule win over the CFI (cframe + 16 = c's CFA here). */
	native_lj_rule__init(&rule, 16, 1);
	rule.vm_lo = s->regs.ip - 1;
	rule.vm_hi = s->regs.ip + 1;
	rule.cframe = sp_b - 16;
	o.hook_lo = rule.vm_lo;
	o.hook_hi = rule.vm_hi;
	unwind(e, &s->regs, &sec, &o, &st);
	CHECKF(st.nframes >= 4 && st.frames[0].in_module && st.frames[1].how == NATIVE_HOW_HOOK &&
	      st.frames[1].pc == chain_truth.ra_c && st.frames[2].pc == chain_truth.ra_b &&
	      st.nhook == 1 && st.end == NATIVE_END_COMPLETE, "vm subroutine: %u hook, end %s",
	      st.nhook, native_end__name(st.end));
	/* The same range around b's pc: b's frame is above the cframe, an older
	 * activation: the rule declines and the CFI steps it, as without a hook. */
	rule.vm_lo = chain_truth.ra_c - 1;
	rule.vm_hi = chain_truth.ra_c + 1;
	rule.cframe = s->regs.sp - 64;
	o.hook_lo = rule.vm_lo;
	o.hook_hi = rule.vm_hi;
	unwind(e, &s->regs, &sec, &o, &st);
	CHECKF(st.nframes >= 4 && st.nhook == 0 && st.frames[2].pc == chain_truth.ra_b &&
	      st.frames[2].how == NATIVE_HOW_CFI && st.frames[3].pc == chain_truth.ra_a &&
	      st.end == NATIVE_END_COMPLETE, "older activation: %u hook, end %s", st.nhook,
	      native_end__name(st.end));
	o.hook_lo = o.hook_hi = 0;
	/* any_unknown: the trace rule for any anonymous pc (another trace, an
	 * exit stub), but never for [vdso], whose CFI lives in memory. */
	native_lj_rule__init(&rule, (uint32_t)cf, 1);
	rule.any_unknown = 1;
	rule.cframe = sp_b - cf;
	r = s->regs;
	r.ip = mc + 0x40;
	r.sp = rule.cframe - 16;
	unwind(e, &r, &sec, &o, &st);
	CHECKF(st.nhook == 1 && st.nframes >= 4 && st.frames[1].pc == chain_truth.ra_c &&
	      st.end == NATIVE_END_COMPLETE, "any_unknown, anonymous: %u hook, end %s", st.nhook,
	      native_end__name(st.end));
	for (i = 0; i < maps.n; i++)
		if (strcmp(maps.v[i].path, "[vdso]") == 0) {
			r.ip = maps.v[i].start + 0x10;
			unwind(e, &r, &sec, &o, &st);
			CHECKF(st.nhook == 0 && st.nframes >= 1 && st.frames[0].map == (int)i,
			      "any_unknown took [vdso]");
		}
	/* A trace frame above its own cframe cannot be on that trace: declined. */
	native_lj_rule__init(&rule, (uint32_t)cf, 1);
	rule.trace_lo = mc;
	rule.trace_hi = mc + 0x80;
	rule.cframe = s->regs.sp - 4096;
	r.ip = mc + 0x40;
	r.sp = s->regs.sp;
	unwind(e, &r, &sec, &o, &st);
	CHECKF(st.nframes >= 1 && st.nhook == 0 && st.end != NATIVE_END_HOOK,
	      "frame above cframe: %u hook, end %s", st.nhook, native_end__name(st.end));
	/* A cframe whose slots are not in the copy: the walk stops, honestly. */
	rule.cframe = sp_b + (1u << 20);
	r.sp = rule.cframe - 16;
	unwind(e, &r, &sec, &o, &st);
	CHECKF(st.nframes == 1 && st.end == NATIVE_END_HOOK, "unreadable cframe: %zu frames, end %s",
	      st.nframes, native_end__name(st.end));
	/* A pc the rule does not cover: the hook declines, libdw tries frame
	 * pointers (which hold here when c keeps one: it is stepped as from c). */
	native_lj_rule__init(&rule, (uint32_t)cf, 1);
	rule.trace_lo = mc;
	rule.trace_hi = mc + 0x20;
	r = s->regs;
	r.ip = mc + 0x40;
	unwind(e, &r, &sec, &o, &st);
	CHECKF(st.nframes >= 1 && st.nhook == 0 && st.end != NATIVE_END_HOOK,
	      "declined: %zu frames, %u by the hook, end %s", st.nframes, st.nhook,
	      native_end__name(st.end));
	if (TEST_NATIVE_FP)
		CHECKF(st.nframes >= 4 && st.frames[1].pc == chain_truth.ra_c &&
		      st.frames[1].how == NATIVE_HOW_FP && st.frames[3].pc == chain_truth.ra_a &&
		      st.end == NATIVE_END_COMPLETE, "declined, frame pointers: end %s",
		      native_end__name(st.end));
	if (failures != before)
		stack__dump(e, "hook", &st);
}

/* A recorded build id that is not the file's: reported, and never used. */
static void check_mismatch(const struct chain_snap *s, int fp)
{
	struct maps *m = &maps;
	struct procmap_desc saved[MAX_MAPS];
	uint8_t wrong[20];
	struct env e;
	struct native_stack st;
	const struct sym_info *si = NULL;
	size_t i, nours = 0;

	memcpy(saved, m->v, m->n * sizeof(saved[0]));
	memset(wrong, 0xab, sizeof(wrong));
	for (i = 0; i < m->n; i++)	/* our own executable */
		if (m->v[i].build_id && m->v[i].start <= chain_truth.ra_c &&
		    chain_truth.ra_c < m->v[i].end) {
			const char *path = m->v[i].path;
			size_t j;

			for (j = 0; j < m->n; j++)
				if (strcmp(m->v[j].path, path) == 0) {
					m->v[j].build_id = wrong;
					m->v[j].build_id_len = sizeof(wrong);
					nours++;
				}
			break;
		}
	CHECKF(nours > 0, "our own mapping not found");
	if (env__init(&e) == 0) {
		struct ljs_section sec = snap__section(s, s->len);

		unwind(&e, &s->regs, &sec, NULL, &st);
		CHECKF(st.nframes >= 1 && symbolizer__pc(e.sym, e.pm, st.frames[0].pc, 0, &si) == 0 &&
		      si->status == SYM_NO_OBJECT && si->obj && si->obj->status == OBJFILE_MISMATCH &&
		      !si->name, "mismatch: status %s", si ? sym_status__name(si->status) : "-");
		/* With frame pointers the chain survives without the file's CFI. */
		if (fp)
			CHECKF(st.nframes >= 4 && st.frames[1].pc == chain_truth.ra_c &&
			      st.frames[2].pc == chain_truth.ra_b && st.frames[3].pc == chain_truth.ra_a,
			      "mismatch, frame pointers: %zu frames, end %s", st.nframes,
			      native_end__name(st.end));
		for (i = 1; i < st.nframes; i++)
			CHECKF(st.frames[i].sp > st.frames[i - 1].sp, "mismatch: sp order");
	} else {
		CHECKF(0, "env for the mismatch test");
	}
	env__exit(&e);
	memcpy(m->v, saved, m->n * sizeof(saved[0]));
}

/* No mappings at all: frame pointers only (they hold with TEST_NATIVE_FP);
 * and two mapping sets through one address-space slot: evicted and rebuilt,
 * same frames every time. */
static void check_spaces(struct env *e, const struct chain_snap *s)
{
	struct native_unw_opts uo = { .max_spaces = 1 };
	struct native_unw *u = native_unw__new(&uo);
	struct ljs_section sec = snap__section(s, s->len);
	struct native_maps none, *sets[3];
	struct ljs_proc p2 = { 0 };
	struct native_stack st;
	uint64_t first[3] = { 0 };
	size_t nfirst = 0, i, k;

	native_maps__init(&none, NULL, 0);
	CHECKF(u && native__unwind(u, &none, &s->regs, &sec, NULL, &st) == 0 && st.nframes >= 1,
	      "no mappings");
	if (u && TEST_NATIVE_FP)
		CHECKF(st.nframes >= 4 && st.frames[1].pc == chain_truth.ra_c &&
		      st.frames[2].pc == chain_truth.ra_b && st.frames[3].pc == chain_truth.ra_a &&
		      st.frames[1].how == NATIVE_HOW_FP, "no mappings, frame pointers: %zu frames",
		      st.nframes);
	if (!u || ljs_proc__maps(&p2, e->oc, maps.v, maps.n - 1) != 0) {
		CHECKF(0, "second mapping set");
		goto out;
	}
	sets[0] = &e->proc.nmaps;
	sets[1] = &p2.nmaps;
	sets[2] = &e->proc.nmaps;
	for (k = 0; k < 3; k++) {
		struct native_opts o = { .mem = &e->files };

		CHECKF(native__unwind(u, sets[k], &s->regs, &sec, &o, &st) == 0, "unwind %zu", k);
		if (k == 0)
			for (nfirst = 0; nfirst < st.nframes && nfirst < 3; nfirst++)
				first[nfirst] = st.frames[nfirst].pc;
		CHECKF(st.end == NATIVE_END_COMPLETE && st.nframes >= nfirst, "set %zu: end %s", k,
		      native_end__name(st.end));
		for (i = 0; i < nfirst && i < st.nframes; i++)
			CHECKF(st.frames[i].pc == first[i], "set %zu frame %zu differs", k, i);
	}
	CHECKF(native_unw__stats(u)->spaces_created == 4 && native_unw__stats(u)->spaces_evicted == 3,
	      "spaces: %llu created, %llu evicted",
	      (unsigned long long)native_unw__stats(u)->spaces_created,
	      (unsigned long long)native_unw__stats(u)->spaces_evicted);
out:
	ljs_proc__exit(&p2);
	native_unw__delete(u);
}

/* Unwind + symbolize the snapshot n times; print the rate. */
static void bench(struct env *e, const struct chain_snap *s, long n)
{
	struct ljs_section sec = snap__section(s, s->len);
	struct native_stack st;
	struct timespec t0, t1;
	double dt, ut;
	size_t frames = 0, i;
	long k;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (k = 0; k < n; k++) {
		unwind(e, &s->regs, &sec, NULL, &st);
		frames += st.nframes;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ut = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	for (k = 0; k < n; k++) {
		unwind(e, &s->regs, &sec, NULL, &st);
		for (i = 0; i < st.nframes; i++)
			sym_of(e, &st.frames[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	dt = (double)(t0.tv_sec - t1.tv_sec) + (double)(t0.tv_nsec - t1.tv_nsec) / 1e9;
	printf("bench: %ld unwinds of %zu frames: %.0f samples/s (%.2f us/frame); "
	       "with symbolization %.0f samples/s\n", n, frames / (size_t)n, n / ut,
	       ut * 1e6 / (double)frames, n / dt);
}

/* Run the chain, then every check. */
int main(void)
{
	uint64_t stack_hi = 0;
	struct env e;
	void *page;
	const char *b = getenv("TEST_NATIVE_BENCH");

	page = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || maps__read(&maps, (uint64_t)(uintptr_t)&stack_hi, &stack_hi) != 0 ||
	    !stack_hi) {
		fprintf(stderr, "cannot read /proc/self/maps or map a page\n");
		return 1;
	}
	chain_stack_hi = stack_hi;
	if (chain__arm() != 0) {
		fprintf(stderr, "cannot arm the profiling timer\n");
		return 1;
	}
	chain_truth.line_main_call = __LINE__ + 1;
	a();
	chain__disarm();
	if (env__init(&e) != 0) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	check_chain(&e, "asm snapshot", &chain_snap_asm, 0);
	check_chain(&e, "signal snapshot", &chain_snap_sig, 1);
	check_truncation(&e, "asm snapshot", &chain_snap_asm);
	check_truncation(&e, "signal snapshot", &chain_snap_sig);
	check_garbage(&e, &chain_snap_sig);
	check_hook(&e, &chain_snap_asm, page);
	check_mismatch(&chain_snap_asm, TEST_NATIVE_FP);
	check_spaces(&e, &chain_snap_asm);
	if (b && atol(b) > 0)
		bench(&e, &chain_snap_sig, atol(b));
	env__exit(&e);
	munmap(page, 4096);
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	printf("ok: native unwinding and symbolization (%s frame pointers)\n",
	       TEST_NATIVE_FP ? "with" : "without");
	return 0;
}
