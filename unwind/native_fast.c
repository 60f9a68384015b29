/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * native_fast.c -- one segment of the native walk stepped with the cached
 * CFI rules (native_cfi.c) instead of libdw's per-frame CFI machinery.
 *
 * It does what dwfl_getthread_frames does with native.c's callbacks, in
 * the same order, so that every frame, every memory read (and so every
 * fault the walk notes) and every end reason come out the same: the first
 * frame is the segment's registers; each later frame is the previous one
 * stepped by its pc's rule, every register in DWARF order (undefined, the
 * same value, saved at CFA + N, CFA + N, register + N), the return address
 * giving the pc (undefined or 0: the walk ends).  Asking whether a frame is
 * an activation steps it once more at once unless its own step came from a
 * signal frame's CIE, as libdw does, and that step is kept for the walk.
 *
 * Where libdw would do something else -- a pc with no CFI or with a rule
 * the cache does not keep (libdw's frame-pointer step), a frame without
 * rsp -- the segment answers NATIVE_FAST_BAIL and native.c unwinds the
 * whole sample with libdw instead.  A pc without CFI asked for only by the
 * activation question is fine while the hook then steps that frame
 * (w->probe_unknown), since the hook's segment starts afresh.
 */
#include <elfutils/libdwfl.h>
#include <string.h>

#include "unwind/native_int.h"

/* libdw's state of one frame: registers, pc, and how it was reached. */
struct fast_state {
	uint64_t r[NATIVE_NREGS];
	uint32_t valid;
	uint64_t pc;
	uint8_t initial;	/* the segment's first frame */
	uint8_t signal;		/* stepped from a signal frame's CIE */
};

enum { FAST_NEXT, FAST_END, FAST_UNKNOWN, FAST_BAIL };

/* Step cur to its caller by the cached rule: FAST_NEXT (next filled),
 * FAST_END (return address undefined or 0), FAST_UNKNOWN (no CFI there:
 * libdw's frame-pointer step), FAST_BAIL (a rule the cache does not keep). */
static int fast__step(struct native_unw *u, const struct fast_state *cur, struct fast_state *next)
{
	uint64_t pc = cur->initial || cur->signal ? cur->pc : cur->pc - 1, v, a, cfa = 0;
	const struct native_rule *r = native_space__rule(u->w.sp, pc);
	uint32_t live;
	int i, have_cfa;

	if (!r)
		return FAST_BAIL;
	if (r->status == NATIVE_RULE_NONE)
		return FAST_UNKNOWN;
	if (r->status != NATIVE_RULE_OK)
		return FAST_BAIL;
	have_cfa = (cur->valid >> r->cfa_reg) & 1;
	if (have_cfa)
		cfa = cur->r[r->cfa_reg] + (uint64_t)r->cfa_off;
	next->valid = 0;
	memset(next->r, 0, sizeof(next->r));	/* an undefined register reads as 0 */
	/* The defined registers, in DWARF order (the order of libdw's reads). */
	for (live = r->live; live; live &= live - 1) {
		i = __builtin_ctz(live);
		switch (r->kind[i]) {
		case NATIVE_RULE_SAME:
			if (!((cur->valid >> i) & 1))
				continue;
			v = cur->r[i];
			break;
		case NATIVE_RULE_AT_CFA:
			if (!have_cfa)
				continue;
			a = cfa + (uint64_t)r->arg[i];
			/* native__read_word's first case, inline: the stack copy */
			if (a >= u->w.stk_lo && a < u->w.stk_hi && u->w.stk_hi - a >= 8)
				memcpy(&v, u->w.stk + (a - u->w.stk_lo), 8);
			else if (native__read_word(u, a, &v) != 0)
				continue;
			break;
		case NATIVE_RULE_CFA:
			if (!have_cfa)
				continue;
			v = cfa + (uint64_t)r->arg[i];
			break;
		default:	/* NATIVE_RULE_REG */
			if (!((cur->valid >> r->reg[i]) & 1))
				continue;
			v = cur->r[r->reg[i]] + (uint64_t)r->arg[i];
			break;
		}
		next->r[i] = v;
		next->valid |= 1u << i;
	}
	next->initial = 0;
	next->signal = r->signal;
	if (!((r->live >> NATIVE_RIP) & 1) || !((next->valid >> NATIVE_RIP) & 1) ||
	    next->r[NATIVE_RIP] == 0)
		return FAST_END;
	next->pc = next->r[NATIVE_RIP];
	return FAST_NEXT;
}

/* native__on_frame over our state; *probe is the step taken to answer the
 * activation question (-1: none). */
static int fast__on_frame(struct native_unw *u, const struct fast_state *cur,
			  struct fast_state *next, int *probe)
{
	struct native_walk *w = &u->w;
	struct native_frame f;

	*probe = -1;
	if (w->seg_frames && w->fault_beyond)
		return native__frame_stop(w, NATIVE_END_TRUNCATED);
	w->faulted = 0;
	w->fault_beyond = 0;
	memset(&f, 0, sizeof(f));
	if (w->seg_frames == 0) {
		f.regs = w->init;
		f.pc = w->init_pc;
		f.activation = w->init_act;
		f.how = w->init_how;
	} else {
		if (cur->signal) {
			f.activation = 1;
		} else {
			*probe = fast__step(u, cur, next);
			if (*probe == FAST_BAIL)
				return NATIVE_FAST_BAIL;
			w->probe_unknown |= *probe == FAST_UNKNOWN;
			f.activation = *probe == FAST_NEXT && next->signal;
		}
		/* cur was stepped (fast__step): its undefined registers are 0 */
		memcpy(f.regs.r, cur->r, sizeof(f.regs.r));
		f.regs.valid = cur->valid & NATIVE_ALL_REGS;
		f.pc = cur->pc;
		f.how = w->prev_in_mod ? NATIVE_HOW_CFI : NATIVE_HOW_FP;
	}
	f.regs.r[NATIVE_RIP] = f.pc;
	f.regs.valid |= 1u << NATIVE_RIP;
	f.sp = f.regs.r[NATIVE_RSP];
	if (!((f.regs.valid >> NATIVE_RSP) & 1))
		return NATIVE_FAST_BAIL;	/* libdw's error message goes with this end */
	return native__frame_check(u, &f);
}

/* One segment (see native_int.h). */
int native_fast__segment(struct native_unw *u, int *rc)
{
	struct native_walk *w = &u->w;
	struct fast_state st[2], *cur = &st[0], *next = &st[1], *t;
	int cb, probe, step;

	w->probe_unknown = 0;
	memcpy(cur->r, w->init.r, sizeof(cur->r));
	cur->valid = w->init.valid | 1u << NATIVE_RIP;
	cur->pc = w->init_act ? w->init_pc : w->init_pc - 1;
	cur->r[NATIVE_RIP] = cur->pc;
	cur->initial = 1;
	cur->signal = 0;
	for (;;) {
		cb = fast__on_frame(u, cur, next, &probe);
		if (cb == NATIVE_FAST_BAIL)
			return NATIVE_FAST_BAIL;
		if (cb != DWARF_CB_OK) {
			/* Only the hook may take over a frame libdw would have
			 * stepped by frame pointers. */
			if (w->probe_unknown && cb != NATIVE_CB_HOOK)
				return NATIVE_FAST_BAIL;
			*rc = cb;
			return 0;
		}
		step = probe >= 0 ? probe : fast__step(u, cur, next);
		if (step == FAST_BAIL || step == FAST_UNKNOWN)
			return NATIVE_FAST_BAIL;
		if (step == FAST_END) {
			*rc = 0;
			return 0;
		}
		t = cur;
		cur = next;
		next = t;
	}
}
