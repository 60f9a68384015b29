/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * harness.c -- in-process ground truth for the LuaJIT frame walker.
 *
 * Runs Lua scenarios (tests/lua/walk_NAME.lua) in Debian's libluajit with the JIT off
 * and on (or in any upstream/OpenResty build it is linked with, GC64 or not:
 * tests/e2e/build_harness_nogc64.sh links it with a non-GC64 libluajit.a).  A scenario calls the C function capture(tag) at chosen points.
 * capture() enters through an assembler trampoline that records the
 * registers as a sampler would see them at the C function's first
 * instruction, then:
 *   1. takes a sample by the BPF program's rules (capture.c);
 *   2. walks it with memsrc = sample windows -> our own live memory, while a
 *      recorder keeps every range the walker had to read (the harvest);
 *   3. walks it again with memsrc = sample -> recorded ranges only (what
 *      `report` has) and requires the identical result;
 *   4. takes a second sample whose Lua stack budget is cut to 2 KiB (plus the
 *      slack above the top) and walks
 *      it against the same recorded ranges: the frames must be a prefix of
 *      the truth ending in one [unknown: stack_cut] (or the whole stack);
 *   5. builds the ground truth with lua_getstack/lua_getinfo on the running
 *      thread and on each resumer (scenarios record RESUMED_BY[co] =
 *      resumer thread or true for the main thread), each line formatted the
 *      way luaL_traceback formats it, and checks those lines against
 *      luaL_traceback's own text whenever it is not elided ("...");
 *   6. compares walker and truth line by line, exactly.
 *
 * Also: ffi_capture() + capture_check() sample from inside an FFI call (on
 * a JIT trace when the loop is hot: vmstate = trace number, jit_base) and
 * compare with the traceback taken right after on the same line
 * (tests/lua/walk_trace.lua); async_start()/async_stop() take SIGPROF
 * samples of running Lua (async.c, tests/lua/walk_async.lua); and the
 * walker's ffid -> name table is checked against the linked library.
 *
 * Mapping: the walker's frames, innermost first, over the running thread and
 * then each resumer, are exactly the concatenation of the threads'
 * tracebacks.  Level 0 of the running thread is capture() itself ("[C]: in
 * function 'capture'").  Scenarios run their main chunk with lua_pcall from
 * C, so no "[C]: in ?" or host C frame appears below the main chunk.
 *
 * Exit status: 0 all passed, 1 a failure, 77 skipped (no usable layout or VM
 * range for the linked libluajit).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>
#include <lualib.h>

#include "tests/harness/capture.h"
#include "tests/harness/harness.h"
#include "unwind/ljwalk.h"

/* Harness state (a test program: globals are fine here). */
static struct {
	lua_State *mainL;
	const struct lj_layout *lay;
	struct cap_cfg cfg;
	struct ljw *w, *w_replay, *w_cut;
	struct ljw *w_memo;	/* walks remembered across captures (ljw_opts.memo) */
	unsigned nmemo, nmemo_hits;
	struct cap_sample *smp, *smp_cut;
	const char *scenario;
	int jit, verbose, busy;
	unsigned ncaptures, nfail, nframes, ncut, ncoroutine;
	uint64_t live_bytes, harvest_bytes;
	unsigned nflag[16], nkind[8];
	/* ffi_capture(): the walk waiting for capture_check() */
	char (*pend)[LINE_MAX_LEN];
	int npend, pend_ok, pend_trace;
	char pend_why[160];
	unsigned ntrace_samples, nffi_interp;
	char (*truth)[LINE_MAX_LEN];
	char (*got)[LINE_MAX_LEN];
} H;

int harness_capture_entry(lua_State *L);
int harness_capture_impl(lua_State *L, const struct ljs_regs *regs);
void harness_ffi_entry(void);
void harness_ffi_impl(void *unused, const struct ljs_regs *regs);

/* Save the registers as at the first instruction of a C function (struct
 * ljs_regs order, pt_regs-like: checked below), then call impl(rdi, &regs).
 * capture() is a lua_CFunction called by the VM; ffi_capture() is a plain C
 * function called through the FFI (from JIT-compiled code when the loop is
 * hot).  168 bytes keep rsp 16-byte aligned at the call. */
_Static_assert(offsetof(struct ljs_regs, r15) == 0 && offsetof(struct ljs_regs, r14) == 8 &&
	       offsetof(struct ljs_regs, r13) == 16 && offsetof(struct ljs_regs, r12) == 24 &&
	       offsetof(struct ljs_regs, bp) == 32 && offsetof(struct ljs_regs, bx) == 40 &&
	       offsetof(struct ljs_regs, r11) == 48 && offsetof(struct ljs_regs, r8) == 72 &&
	       offsetof(struct ljs_regs, ax) == 80 && offsetof(struct ljs_regs, dx) == 96 &&
	       offsetof(struct ljs_regs, di) == 112 && offsetof(struct ljs_regs, ip) == 128 &&
	       offsetof(struct ljs_regs, flags) == 144 && offsetof(struct ljs_regs, sp) == 152 &&
	       sizeof(struct ljs_regs) == 168, "struct ljs_regs layout the trampoline writes");
#define TRAMPOLINE(name, impl) \
	".pushsection .text\n" \
	".globl " name "\n" \
	".type " name ",@function\n" \
	name ":\n" \
	"	sub $168, %rsp\n" \
	"	mov %r15, 0(%rsp)\n" \
	"	mov %r14, 8(%rsp)\n" \
	"	mov %r13, 16(%rsp)\n" \
	"	mov %r12, 24(%rsp)\n" \
	"	mov %rbp, 32(%rsp)\n" \
	"	mov %rbx, 40(%rsp)\n" \
	"	mov %r11, 48(%rsp)\n" \
	"	mov %r10, 56(%rsp)\n" \
	"	mov %r9, 64(%rsp)\n" \
	"	mov %r8, 72(%rsp)\n" \
	"	mov %rax, 80(%rsp)\n" \
	"	mov %rcx, 88(%rsp)\n" \
	"	mov %rdx, 96(%rsp)\n" \
	"	mov %rsi, 104(%rsp)\n" \
	"	mov %rdi, 112(%rsp)\n" \
	"	movq $-1, 120(%rsp)\n" \
	"	lea " name "(%rip), %rax\n" \
	"	mov %rax, 128(%rsp)\n" \
	"	movq $0x33, 136(%rsp)\n" \
	"	pushfq\n" \
	"	pop %rax\n" \
	"	mov %rax, 144(%rsp)\n" \
	"	lea 168(%rsp), %rax\n" \
	"	mov %rax, 152(%rsp)\n" \
	"	movq $0x2b, 160(%rsp)\n" \
	"	mov 112(%rsp), %rdi\n" \
	"	mov 80(%rsp), %rax\n" \
	"	mov %rsp, %rsi\n" \
	"	call " impl "\n" \
	"	add $168, %rsp\n" \
	"	ret\n" \
	".size " name ", .-" name "\n" \
	".popsection\n"

__asm__(TRAMPOLINE("harness_capture_entry", "harness_capture_impl"));
__asm__(TRAMPOLINE("harness_ffi_entry", "harness_ffi_impl"));

/* -- Capture ------------------------------------------------------------------ */

/* Format a walk as traceback lines into out; number of lines. */
static int walk__lines(const struct ljw_stack *st, char (*out)[LINE_MAX_LEN])
{
	size_t i;

	for (i = 0; i < st->nframes && i < MAXLINES; i++)
		ljw_frame__format(&st->frames[i], out[i], LINE_MAX_LEN);
	return (int)i;
}

/* Are two walks the same: their end, counts and every frame's line? */
static int walk__same(const struct ljw_stack *a, const struct ljw_stack *b)
{
	char la[LINE_MAX_LEN], lb[LINE_MAX_LEN];
	size_t i;

	if (a->nframes != b->nframes || a->end != b->end || a->complete != b->complete ||
	    a->nunknown != b->nunknown || a->base != b->base || a->pc != b->pc ||
	    a->nthreads != b->nthreads || a->truncated != b->truncated)
		return 0;
	for (i = 0; i < a->nframes; i++) {
		ljw_frame__format(&a->frames[i], la, sizeof(la));
		ljw_frame__format(&b->frames[i], lb, sizeof(lb));
		if (strcmp(la, lb) || !a->frames[i].defname != !b->frames[i].defname ||
		    (a->frames[i].defname && strcmp(a->frames[i].defname, b->frames[i].defname)))
			return 0;
	}
	return 1;
}

/* Do two traceback lines have the same location part (up to " in "/" at ")? */
static int loc__eq(const char *a, const char *b)
{
	const char *ea = strstr(a, ": in "), *eb = strstr(b, ": in ");

	if (!ea)
		ea = strstr(a, ": at ");
	if (!eb)
		eb = strstr(b, ": at ");
	return ea && eb && ea - a == eb - b && !strncmp(a, b, (size_t)(ea - a));
}

/* Report one failed capture with both stacks. */
static void fail(const char *tag, const char *why, const struct ljw_stack *st, int ng, int nt)
{
	int i, n = ng > nt ? ng : nt;

	H.nfail++;
	fprintf(stderr, "FAIL %s [jit %s] capture '%s': %s\n", H.scenario, H.jit ? "on" : "off",
		tag, why);
	if (st)
		fprintf(stderr, "  walk: end=%s vmstate=%d(%s) base=%s pc=%s frames=%zu unknown=%u\n",
			ljw_end__name(st->end), st->vmstate, st->vmstate_name ? st->vmstate_name : "-",
			ljw_src__name(st->base_src), ljw_src__name(st->pc_src), st->nframes,
			st->nunknown);
	for (i = 0; i < n && i < 60; i++)
		fprintf(stderr, "  %c %-60.60s | %s\n",
			i < ng && i < nt && !strcmp(H.got[i], H.truth[i]) ? ' ' : '!',
			i < ng ? H.got[i] : "", i < nt ? H.truth[i] : "");
}

/* Step 3 of the file comment: the walk replayed from the sample and the
 * harvest (st2) is the live walk st, whose ng lines are in H.got; 0, or -1
 * (failure reported). */
static int replay__check(const char *tag, const struct ljw_stack *st,
			 const struct ljw_stack *st2, int ng, int nt)
{
	char tmp[LINE_MAX_LEN];
	int i, n2 = (int)st2->nframes;

	for (i = 0; i < n2 && i < ng; i++) {
		ljw_frame__format(&st2->frames[i], tmp, sizeof(tmp));
		if (strcmp(tmp, H.got[i]))
			break;
	}
	if (n2 != ng || i != ng || st2->end != st->end) {
		fail(tag, "replay from sample + harvested ranges differs from the live walk",
		     st2, ng, nt);
		return -1;
	}
	return 0;
}

/* Step 4 of the file comment: the walk of the cut sample (st3) is a prefix
 * of the nt truth lines, then exactly one stack_cut (or the whole stack
 * when it fit); 0, or -1 (failure reported, the cut walk's lines in H.got). */
static int cut__check(const char *tag, const struct ljw_stack *st, const struct ljw_stack *st3,
		      int nt)
{
	char tmp[LINE_MAX_LEN];
	int i, n3 = (int)st3->nframes;

	for (i = 0; i < n3 && i < nt; i++) {
		ljw_frame__format(&st3->frames[i], tmp, sizeof(tmp));
		if (strcmp(tmp, H.truth[i]))
			break;
	}
	/* The frame right above the cut cannot be named (its caller is
	 * gone): only its location ("src:line:") must match. */
	if (i == n3 - 2 && i < nt && st3->end == LJW_END_ERROR && loc__eq(tmp, H.truth[i]))
		i++;
	if (st3->end == st->end && n3 == nt && i == nt)
		return 0;	/* the whole stack fit in 2 KiB */
	if (st3->end == LJW_END_ERROR && st3->truncated && st3->nunknown == 1 &&
	    st3->unknown[LJW_R_STACK_CUT] == 1 && i == n3 - 1 && n3 >= 1 &&
	    st3->frames[n3 - 1].reason == LJW_R_STACK_CUT) {
		H.ncut++;
		return 0;
	}
	for (i = 0; i < n3 && i < MAXLINES; i++)
		ljw_frame__format(&st3->frames[i], H.got[i], LINE_MAX_LEN);
	fail(tag, "cut-stack walk is not a truth prefix + one [unknown: stack_cut]", st3, n3, nt);
	return -1;
}

/* The body of capture(tag) (see the file comment). */
int harness_capture_impl(lua_State *L, const struct ljs_regs *regs)
{
	const char *tag = lua_isstring(L, 1) ? lua_tostring(L, 1) : "?";
	struct memsrc live, rec, smp, win, smp2, smp3;
	struct cap_live live_st;
	struct cap_rec rec_st;
	struct memsrc_windows ws;
	struct ljw_stack st, st2, st3, st4;
	struct ljw_opts o = { .vm_lo = H.cfg.vm_lo, .vm_hi = H.cfg.vm_hi };
	struct ljw_opts om = { .vm_lo = H.cfg.vm_lo, .vm_hi = H.cfg.vm_hi, .memo = 1 };
	struct cap_cfg cut = H.cfg;
	uint64_t hits;
	int ng, nt, i, in_main;

	if (H.busy)	/* a finalizer run by our own allocations: not a scenario point */
		return 0;
	H.busy = 1;
	H.ncaptures++;
	if (cap__take(&H.cfg, regs, (uintptr_t)L, H.smp)) {
		fail(tag, "cap__take failed: no valid g from r14 or L->glref", NULL, 0, 0);
		H.busy = 0;
		return 0;
	}
	cut.lstack_bytes = LJS_LSTACK_SLACK + 2048;
	if (cap__take(&cut, regs, (uintptr_t)L, H.smp_cut)) {
		fail(tag, "cap__take (cut) failed", NULL, 0, 0);
		H.busy = 0;
		return 0;
	}
	/* 1: sample -> recorder -> live */
	cap__live_init(&live, &live_st);
	cap__rec_init(&rec, &rec_st, &live);
	memsrc__init_sample(&smp, &H.smp->s, &rec);
	ljw__walk(H.w, H.lay, &H.smp->s, &smp, &o, &st);
	H.live_bytes += live_st.nbytes;
	H.harvest_bytes += rec_st.bytes;
	/* 2: sample -> harvest only */
	ws = rec_st.ws;
	memsrc__init_windows(&win, &ws, NULL);
	memsrc__init_sample(&smp2, &H.smp->s, &win);
	ljw__walk(H.w_replay, H.lay, &H.smp->s, &smp2, &o, &st2);
	/* 2b: the same, by a walker that remembers walks across every capture
	 * of the run: its answer (an earlier capture's walk when every byte it
	 * read is the same, else a walk) must be the walk's; walked twice, the
	 * second is remembered. */
	for (i = 0; i < 2; i++) {
		hits = ljw__memo_hits(H.w_memo);
		ljw__walk(H.w_memo, H.lay, &H.smp->s, &smp2, &om, &st4);
		H.nmemo += i;
		H.nmemo_hits += i && ljw__memo_hits(H.w_memo) > hits;
		if (!walk__same(&st4, &st2)) {
			fail(tag, "a walk remembered across captures differs from the walk", &st4,
			     walk__lines(&st4, H.got), 0);
			goto out;
		}
	}
	/* 3: cut sample -> harvest only */
	memsrc__init_sample(&smp3, &H.smp_cut->s, &win);
	ljw__walk(H.w_cut, H.lay, &H.smp_cut->s, &smp3, &o, &st3);

	ng = walk__lines(&st, H.got);
	nt = truth__build(L, H.mainL, H.lay, H.truth, &in_main);
	if (nt < 0) {
		fail(tag, "ground truth formatting disagrees with luaL_traceback", &st, ng, 0);
		goto out;
	}
	H.nframes += (unsigned)nt;
	if (ng != nt) {
		fail(tag, "frame count differs (walker | truth)", &st, ng, nt);
		goto out;
	}
	for (i = 0; i < ng; i++)
		if (strcmp(H.got[i], H.truth[i])) {
			fail(tag, "frame differs (walker | truth)", &st, ng, nt);
			goto out;
		}
	if (st.nunknown || st.end != (in_main ? LJW_END_COMPLETE : LJW_END_COROUTINE) ||
	    st.base_src != LJW_SRC_L_BASE || strcmp(st.vmstate_name, "c")) {
		fail(tag, "walk status wrong (expected no unknown frames, vmstate c, base L_base, "
		     "complete when the chain reaches the main thread)", &st, ng, nt);
		goto out;
	}
	if (st.nthreads > 1)
		H.ncoroutine++;
	for (i = 0; i < ng; i++) {
		unsigned b;

		H.nkind[st.frames[i].kind & 7]++;
		for (b = 0; b < 16; b++)
			if (st.frames[i].flags & (1u << b))
				H.nflag[b]++;
	}
	if (replay__check(tag, &st, &st2, ng, nt) || cut__check(tag, &st, &st3, nt))
		goto out;
	if (H.verbose)
		fprintf(stderr, "ok %s [jit %s] '%s': %d frames, %u threads\n", H.scenario,
			H.jit ? "on" : "off", tag, ng, st.nthreads);
	for (i = 0; H.verbose > 1 && i < ng && i < 40; i++)
		fprintf(stderr, "\t%s%s\n", H.got[i],
			st.frames[i].flags & LJW_F_COROUTINE_BOUNDARY ? "   <- resumer" : "");
out:
	cap__rec_exit(&rec_st);
	H.busy = 0;
	return 0;
}

/* ffi_capture(): sample and walk now (possibly on trace); capture_check()
 * compares the result with the traceback taken right after, on the same
 * source line.  On trace the top frame is the jit_base function, marked
 * TRACE, with the line of the trace's start PC; in the interpreter the top
 * frame is the ffi.meta.__call builtin that made the call. */
void harness_ffi_impl(void *unused, const struct ljs_regs *regs)
{
	struct memsrc live, rec, smp, win, smp2;
	struct cap_live live_st;
	struct cap_rec rec_st;
	struct memsrc_windows ws;
	struct ljw_stack st, st2;
	struct ljw_opts o = { .vm_lo = H.cfg.vm_lo, .vm_hi = H.cfg.vm_hi };
	char tmp[LINE_MAX_LEN];
	uint64_t retaddr;
	size_t i;

	(void)unused;
	H.npend = 0;
	H.pend_ok = 0;
	H.pend_trace = 0;
	if (H.busy)
		return;
	H.busy = 1;
	cap__live_init(&live, &live_st);
	cap__rec_init(&rec, &rec_st, &live);
	if (cap__take(&H.cfg, regs, (uintptr_t)H.mainL, H.smp)) {
		snprintf(H.pend_why, sizeof(H.pend_why), "cap__take failed in an FFI call");
		goto out;
	}
	memsrc__init_sample(&smp, &H.smp->s, &rec);
	ljw__walk(H.w, H.lay, &H.smp->s, &smp, &o, &st);
	ws = rec_st.ws;
	memsrc__init_windows(&win, &ws, NULL);
	memsrc__init_sample(&smp2, &H.smp->s, &win);
	ljw__walk(H.w_replay, H.lay, &H.smp->s, &smp2, &o, &st2);
	for (i = 0; i < st.nframes && i < MAXLINES; i++)
		ljw_frame__format(&st.frames[i], H.pend[i], LINE_MAX_LEN);
	H.npend = (int)i;
	for (i = 0; i < st2.nframes && i < (size_t)H.npend; i++) {
		ljw_frame__format(&st2.frames[i], tmp, sizeof(tmp));
		if (strcmp(tmp, H.pend[i]))
			break;
	}
	if (st2.nframes != st.nframes || i != st.nframes) {
		snprintf(H.pend_why, sizeof(H.pend_why), "replay from the harvest differs");
		goto out;
	}
	if (st.nunknown || st.end != LJW_END_COMPLETE || st.nframes == 0) {
		snprintf(H.pend_why, sizeof(H.pend_why), "walk in FFI call: end %s, %u unknown, "
			 "vmstate %d, base %s", ljw_end__name(st.end), st.nunknown, st.vmstate,
			 ljw_src__name(st.base_src));
		goto out;
	}
	H.pend_trace = (st.frames[0].flags & LJW_F_TRACE) != 0;
	/* On trace the PC comes from the snapshot covering the call: the
	 * walker finds the call's return address below L->cframe, which must
	 * be the one at our own entry sp. */
	if (cap__peek(regs->sp, &retaddr, 8) != 8)
		retaddr = 0;
	if (H.pend_trace != (st.vmstate >= 0) ||
	    (H.pend_trace && (st.base_src != LJW_SRC_JIT_BASE || st.frames[0].traceno != st.vmstate ||
			      st.pc_src != LJW_SRC_SNAPSHOT || st.trace.src != LJW_TS_SNAP_CALL ||
			      st.trace.mcode + st.trace.mcofs + 1 != retaddr)) ||
	    (!H.pend_trace && st.frames[0].kind != LJW_FRAME_FF)) {
		snprintf(H.pend_why, sizeof(H.pend_why), "FFI call state: vmstate %d, top flags %#x, "
			 "base %s, pc %s, trace src %s, call return %#llx vs %#llx",
			 st.vmstate, st.frames[0].flags, ljw_src__name(st.base_src),
			 ljw_src__name(st.pc_src), ljw_tsrc__name(st.trace.src),
			 (unsigned long long)(st.trace.mcode + st.trace.mcofs + 1),
			 (unsigned long long)retaddr);
		goto out;
	}
	if (H.pend_trace)
		H.ntrace_samples++;
	else
		H.nffi_interp++;
	H.pend_ok = 1;
out:
	cap__rec_exit(&rec_st);
	H.busy = 0;
}

/* capture_check(tag): compare the pending ffi_capture() walk with the truth
 * here (level 0 is capture_check itself; the rest is the same stack). */
static int harness_capture_check(lua_State *L)
{
	const char *tag = lua_isstring(L, 1) ? lua_tostring(L, 1) : "?";
	int nt, in_main, off, i;

	if (H.busy)
		return 0;
	H.busy = 1;
	H.ncaptures++;
	if (!H.pend_ok) {
		fail(tag, H.npend || H.pend_why[0] ? H.pend_why : "no ffi_capture() before",
		     NULL, 0, 0);
		goto out;
	}
	H.pend_ok = 0;
	nt = truth__build(L, H.mainL, H.lay, H.truth, &in_main);
	off = H.pend_trace ? 0 : 1;
	for (i = 0; i + off < H.npend && i < MAXLINES; i++)
		memcpy(H.got[i], H.pend[i + off], LINE_MAX_LEN);
	/* truth[0] is capture_check; the walk's own top (trace frame or the
	 * ffi.meta.__call builtin) stands for it */
	if (nt < 1 || H.npend - off != nt - 1) {
		fail(tag, "FFI-call walk and truth differ in length (walker | truth[1..])", NULL,
		     H.npend - off, nt - 1);
		goto out;
	}
	for (i = 0; i < nt - 1; i++)
		if (strcmp(H.got[i], H.truth[i + 1])) {
			memmove(H.truth, H.truth + 1, (size_t)(nt - 1) * sizeof(*H.truth));
			fail(tag, H.pend_trace ? "trace walk differs (walker | truth[1..])" :
			     "FFI-call walk differs (walker | truth[1..])", NULL, nt - 1, nt - 1);
			goto out;
		}
	H.nframes += (unsigned)nt - 1;
	if (H.verbose)
		fprintf(stderr, "ok %s [jit %s] '%s': %d frames, %s\n", H.scenario,
			H.jit ? "on" : "off", tag, nt - 1, H.pend_trace ? "on trace" : "interpreter");
	for (i = 0; H.verbose > 1 && i < H.npend && i < 40; i++)
		fprintf(stderr, "\t%s\n", H.pend[i]);
out:
	H.busy = 0;
	return 0;
}

/* -- Scenarios ------------------------------------------------------------------ */

/* Count the traces the JIT compiled (jit.util.traceinfo). */
static int traces__count(lua_State *L)
{
	static const char *const code =
		"local ok, ju = pcall(require, 'jit.util') if not ok then return 0 end "
		"local n = 0 for i = 1, 65535 do if ju.traceinfo(i) then n = n + 1 end end "
		"return n";
	int n = 0;

	if (luaL_loadstring(L, code) == 0 && lua_pcall(L, 0, 1, 0) == 0)
		n = (int)lua_tointeger(L, -1);
	lua_settop(L, 0);
	return n;
}

/* Run one scenario file with the JIT off or on; 0 or -1. */
static int scenario__run(const char *path, int jit)
{
	lua_State *L = luaL_newstate();
	unsigned before = H.ncaptures, fails = H.nfail;
	int ntraces = 0, ret = 0;

	if (!L)
		return -1;
	H.mainL = L;
	H.scenario = path;
	H.jit = jit;
	luaL_openlibs(L);
	luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | (jit ? LUAJIT_MODE_ON : LUAJIT_MODE_OFF));
	lua_pushboolean(L, jit);
	lua_setfield(L, LUA_GLOBALSINDEX, "JIT");
	lua_register(L, "capture", harness_capture_entry);
	lua_register(L, "capture_check", harness_capture_check);
	async__register(L);
	trace__register(L, &H.cfg);
	lua_pushlightuserdata(L, (void *)(uintptr_t)harness_ffi_entry);
	lua_setfield(L, LUA_GLOBALSINDEX, "FFI_CAPTURE");
	if (luaL_loadfile(L, path) || lua_pcall(L, 0, 0, 0)) {
		fprintf(stderr, "FAIL %s [jit %s]: script error: %s\n", path, jit ? "on" : "off",
			lua_tostring(L, -1));
		H.nfail++;
		ret = -1;
	}
	if (jit)
		ntraces = traces__count(L);
	if (H.ncaptures == before) {
		fprintf(stderr, "FAIL %s [jit %s]: the scenario never called capture()\n", path,
			jit ? "on" : "off");
		H.nfail++;
		ret = -1;
	}
	printf("%s %s [jit %s]: %u captures%s", H.nfail == fails ? "PASS" : "FAIL", path,
	       jit ? "on" : "off", H.ncaptures - before, jit ? "" : "\n");
	if (jit)
		printf(", %d traces compiled\n", ntraces);
	lua_close(L);
	H.mainL = NULL;
	return ret;
}

/* Check the walker's ffid -> name table against the linked libluajit:
 * every name that resolves from the globals ("pcall", "string.gsub") must
 * be a function whose ffid is the table's index.  Returns failures. */
static int ffnames__check(void)
{
	lua_State *L = luaL_newstate();
	int ffid, nres = 0, bad = 0;

	if (!L)
		return 1;
	luaL_openlibs(L);
	lua_getfield(L, LUA_GLOBALSINDEX, "require");
	lua_pushstring(L, "ffi");
	lua_call(L, 1, 1);
	lua_setfield(L, LUA_GLOBALSINDEX, "ffi");
	for (ffid = 2; ffid < 1024; ffid++) {
		const char *name = ljw_ffname((enum lj_family)H.lay->family, ffid), *p, *dot;
		char part[64];

		if (!name)
			break;
		lua_pushvalue(L, LUA_GLOBALSINDEX);
		for (p = name; lua_istable(L, -1) && *p; p = dot ? dot + 1 : p + strlen(p)) {
			dot = strchr(p, '.');
			snprintf(part, sizeof(part), "%.*s", dot ? (int)(dot - p) : (int)strlen(p), p);
			lua_getfield(L, -1, part);
			lua_remove(L, -2);
		}
		if (!*p && lua_isfunction(L, -1)) {
			const uint8_t *fn = lua_topointer(L, -1);

			nres++;
			if (fn[H.lay->fn_ffid] != ffid) {
				fprintf(stderr, "FAIL ffnames: %s has ffid %d, the table says %d\n",
					name, fn[H.lay->fn_ffid], ffid);
				bad++;
			}
		}
		lua_pop(L, 1);
	}
	lua_close(L);
	printf("%s ffnames: %d builtin names resolved from the globals match their ffid\n",
	       bad || nres < 100 ? "FAIL" : "PASS", nres - bad);
	return bad || nres < 100;
}

/* Compare strings for qsort. */
static int str__cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The built-in layout of the linked LuaJIT: GC64 or not from lua_gettop's
 * code (mov top(%rdi),%rax; sub base(%rdi),%rax: 0x28/0x20 GC64, 0x18/0x10
 * not), OpenResty when lua_getexdata is exported; NULL if unrecognized. */
static const struct lj_layout *layout__pick(void)
{
	const uint8_t *b = (const uint8_t *)(uintptr_t)lua_gettop;
	const struct lj_layout *lay;
	enum lj_family fam;
	int gc64 = -1;

	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		b += 4;		/* endbr64 */
	if (b[0] == 0x48 && b[1] == 0x8b && b[2] == 0x47 && b[4] == 0x48 && b[5] == 0x2b &&
	    b[6] == 0x47)
		gc64 = b[3] == 0x28 && b[7] == 0x20 ? 1 : b[3] == 0x18 && b[7] == 0x10 ? 0 : -1;
	fam = dlsym(RTLD_DEFAULT, "lua_getexdata") ? LJ_FAMILY_OPENRESTY : LJ_FAMILY_UPSTREAM;
	lay = gc64 < 0 ? NULL : lj_layout__builtin(fam, gc64);
	if (!lay) {
		fprintf(stderr, "harness: lua_gettop's code does not tell GC64 from non-GC64: "
			"unknown LuaJIT build\n");
		return NULL;
	}
	printf("harness: linked LuaJIT is %s %s\n", lj_layout__family_name(fam),
	       gc64 ? "GC64" : "non-GC64");
	return lay;
}

/* Run the harness over the given scenarios (default: every tests/lua/walk_NAME.lua
 * and tests/lua/trace_walk_NAME.lua). */
int main(int argc, char **argv)
{
	char *files[256], dir[4096];
	const char *srcdir = getenv("top_srcdir");
	int nfiles = 0, i, jit, nscen = 0, scen_fail = 0;
	unsigned before;
	struct async_stats as;
	DIR *d;
	struct dirent *de;

	H.verbose = getenv("HARNESS_VERBOSE") ? atoi(getenv("HARNESS_VERBOSE")) : 0;
	H.lay = layout__pick();
	if (!H.lay)
		return 77;
	if (vm__range(&H.cfg.vm_lo, &H.cfg.vm_hi))
		return 77;
	if (H.verbose)
		fprintf(stderr, "harness: VM [0x%llx, 0x%llx)\n", (unsigned long long)H.cfg.vm_lo,
			(unsigned long long)H.cfg.vm_hi);
	H.cfg.lay = H.lay;
	H.cfg.lstack_bytes = LJS_LSTACK_DEFAULT;
	H.cfg.ustack_bytes = LJS_USTACK_DEFAULT;
	if (async__init(&H.cfg))
		return 1;
	H.w = ljw__new();
	H.w_replay = ljw__new();
	H.w_memo = ljw__new();
	H.w_cut = ljw__new();
	H.smp = cap_sample__new(512 * 1024);
	H.smp_cut = cap_sample__new(512 * 1024);
	H.truth = calloc(MAXLINES, sizeof(*H.truth));
	H.got = calloc(MAXLINES, sizeof(*H.got));
	H.pend = calloc(MAXLINES, sizeof(*H.pend));
	if (!H.pend || !H.w || !H.w_replay || !H.w_memo || !H.w_cut || !H.smp || !H.smp_cut || !H.truth || !H.got)
		return 1;
	for (i = 1; i < argc && nfiles < 256; i++)
		files[nfiles++] = strdup(argv[i]);
	if (nfiles == 0) {
		snprintf(dir, sizeof(dir), "%s/tests/lua", srcdir ? srcdir : ".");
		d = opendir(dir);
		if (!d) {
			fprintf(stderr, "harness: cannot open %s: set top_srcdir\n", dir);
			return 1;
		}
		while ((de = readdir(d)) && nfiles < 256) {
			size_t l = strlen(de->d_name);
			char path[4400];

			if (l > 9 && (!strncmp(de->d_name, "walk_", 5) ||
				      !strncmp(de->d_name, "trace_walk_", 11)) &&
			    !strcmp(de->d_name + l - 4, ".lua")) {
				snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
				files[nfiles++] = strdup(path);
			}
		}
		closedir(d);
		qsort(files, (size_t)nfiles, sizeof(files[0]), str__cmp);
	}
	if (ffnames__check()) {
		H.nfail++;
		scen_fail++;
	}
	nscen++;
	for (i = 0; i < nfiles; i++)
		for (jit = 0; jit <= 1; jit++) {
			before = H.nfail;
			scenario__run(files[i], jit);
			nscen++;
			scen_fail += H.nfail != before;
		}
	printf("harness: %u captures, %u frames compared, %u coroutine walks, %u cut-stack walks, "
	       "%llu live bytes read, %llu harvested\n", H.ncaptures, H.nframes, H.ncoroutine,
	       H.ncut, (unsigned long long)H.live_bytes, (unsigned long long)H.harvest_bytes);
	printf("harness: frames by kind: lua %u, C %u, builtin %u; by link: vararg %u, pcall %u, "
	       "C entry %u, continuation %u (tail %u), resumer %u\n", H.nkind[LJW_FRAME_LUA],
	       H.nkind[LJW_FRAME_C], H.nkind[LJW_FRAME_FF], H.nflag[0], H.nflag[7], H.nflag[8],
	       H.nflag[9], H.nflag[1], H.nflag[2]);
	printf("harness: FFI-call walks: %u on trace (vmstate >= 0, jit_base), %u in the "
	       "interpreter\n", H.ntrace_samples, H.nffi_interp);
	async__stats(&as);
	printf("harness: async samples: %u taken, %u checked (BASE from regs %u, jit_base %u, "
	       "L->base %u, pseudo frame %u), %u in C skipped, %u tolerated\n", as.samples,
	       as.checked, as.regs, as.jit_base, as.l_base, as.pseudo, as.skipped_c, as.tolerated);
	/* The second walk of a capture reads what the first did: remembered,
	 * unless the walk is one the memo does not keep (a trace's). */
	printf("harness: walks remembered across captures: %u of %u second walks\n",
	       H.nmemo_hits, H.nmemo);
	if (H.nmemo && H.nmemo_hits * 2 < H.nmemo) {
		printf("harness: FAIL: fewer than half of the second walks were remembered\n");
		scen_fail++;
	}
	printf("%d passed, %d failed\n", nscen - scen_fail, scen_fail);
	for (i = 0; i < nfiles; i++)
		free(files[i]);
	async__exit();
	ljw__delete(H.w);
	ljw__delete(H.w_replay);
	ljw__delete(H.w_memo);
	ljw__delete(H.w_cut);
	free(H.smp);
	free(H.smp_cut);
	free(H.truth);
	free(H.got);
	free(H.pend);
	return H.nfail ? 1 : 0;
}
