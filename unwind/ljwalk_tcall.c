/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljwalk_tcall.c -- the frames a trace had at a call it made into C code
 * (ljwalk_trace.c's attribution for a sample in C code below a trace): the
 * snapshot LuaJIT took after a side-effecting call (FFI CALLXS, CALLS), told
 * apart by the call instruction's target when a snapshot's code makes
 * several; and for a call without side effects (a builtin's library call,
 * IR CALLN, CALLL), which no snapshot marks, the frames the snapshots around
 * it agree on, marked where the trace may have been in a frame neither has.
 * (LuaJIT's lj_snap.c, lj_record.c; ljtrace.h for the data.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/ljwalk_int.h"

#define CALL_SCAN	8	/* bytecodes searched back from a snapshot's PC for its call */
#define SNAP_ALIKE_MAX	8	/* side-effecting calls snap__alike compares */

/* The CALL bytecode a post-call snapshot resumes after, or 0.  lj_record.c
 * takes it before the next bytecode; bytecodes that record no IR may follow
 * before it is final: a MOV of the result, constant loads, and a comparison,
 * whose rec_comp_prep merges into it (lj_snap_add) and whose rec_comp_fixup
 * moves its PC past the comparison's JMP.  Anything else: 0. */
static uint64_t snap__callpc(struct ljw *w, uint64_t pc)
{
	uint32_t ins, op, k;

	for (k = 0; k < CALL_SCAN && pc >= 8; k++) {
		pc -= 4;
		if (memsrc__u32(w->d.ms, pc, &ins))
			return 0;
		op = ljd_bc_op(ins);
		if (op == LJW_BC_CALL || op == LJW_BC_CALLM)
			return pc;
		/* ISLT .. ISNUM (lj_bc.h), MOV, KSTR .. KNIL, UGET, JMP */
		if (op > LJW_BC_MOV && (op < LJW_BC_KSTR || op > LJW_BC_UGET) && op != LJW_BC_JMP)
			return 0;
	}
	return 0;
}

/* A register at ret, by x86 number (0 rax .. 15 r15), or 0 unknown: from
 * the frame the native unwinder found there, else the sample's own (the
 * recorder's walk has no native unwind; a callee-saved register that a
 * leaf C function leaves alone still holds it). */
static uint64_t trace__reg(struct ljw *w, uint64_t ret, unsigned r)
{
	if (w->o->trace_regs && w->o->trace_ip != ret)
		return 0;
	if (r == LJW_REG_SP || r >= 16)
		return 0;
	return ljw__reg(w, (w->o->trace_regs ? LJW_REG_TRACE : 0) + r);
}

/* The function the call that returns to ret in trace code calls, or 0
 * unknown: lj_emit_x86.h emit_call_ emits call rel32, or, for a target out
 * of reach, call rax after emit_loadu64's mov rax, imm64 / lea rax,
 * [rip+disp32] / mov rax, simm32 / mov eax, imm32; lj_asm_x86.h asm_callx
 * calls a function held in a register (a constant hoisted out of a loop),
 * whose value at ret the native unwinder knows.  Read through the memory,
 * not the sample. */
static uint64_t trace__calltarget(struct ljw *w, uint64_t ret)
{
	uint8_t b[14];
	const uint8_t *e = b + sizeof(b);	/* ret */
	int32_t d;
	uint64_t q;

	if (ret < sizeof(b) || memsrc__read(w->ms_mem, ret - sizeof(b), b, sizeof(b)))
		return 0;
	if (e[-5] == 0xe8) {
		memcpy(&d, e - 4, 4);
		return ret + (uint64_t)(int64_t)d;
	}
	if (e[-2] != 0xff || (e[-1] & 0xf8) != 0xd0)	/* call r64 */
		return 0;
	if (e[-1] == 0xd0 && e[-12] == 0x48 && e[-11] == 0xb8) {
		memcpy(&q, e - 10, 8);
		return q;
	}
	if (e[-1] == 0xd0 && e[-9] == 0x48 && e[-8] == 0x8d && e[-7] == 0x05) {
		memcpy(&d, e - 6, 4);
		return ret - 2 + (uint64_t)(int64_t)d;
	}
	return trace__reg(w, ret, (e[-1] & 7u) + (e[-3] == 0x41 ? 8u : 0u));
}

static int frame__same(const struct ljt_frame *a, const struct ljt_frame *b)
{
	return a->slot == b->slot && a->fn == b->fn && a->pt == b->pt && a->link == b->link &&
	       a->has_link == b->has_link;
}

/* The line of the call at cpc in the innermost frame of snapshot s: its
 * function, or the base frame's (the snapshot's root function, else bfn)
 * when no frame is above it.  -1 when unknown. */
static int call__line(struct ljw *w, const struct ljt_snap *s, uint64_t bfn, uint64_t cpc)
{
	const struct ljt_frame *f = s->nframes ? &s->frames[s->nframes - 1] : NULL;
	uint64_t fn = f ? f->fn : (s->root_fn ? s->root_fn : bfn), pt = f && !f->fn ? f->pt : 0;
	uint64_t fpc;
	struct ljw_proto *p;
	int32_t pos;

	if (!pt) {
		if (!fn || ljd__ref(&w->d, fn + w->d.lay->fn_pc, &fpc) || fpc <= w->d.lay->pt_size)
			return -1;
		pt = fpc - w->d.lay->pt_size;
	}
	p = ljw__proto(w, pt);
	pos = p ? ljw__proto_pos(w, p, cpc + 4) : -1;
	return pos < 0 ? -1 : ljw__proto_line(w, p, (uint32_t)pos);
}

/* The covering snapshot's code holds several side-effecting calls that the
 * sample's call target does not tell apart (IR CALLS: a call id, not an
 * address).  When the snapshot of each has the same frames and each call
 * is on the same line, the frames at the call are known whichever it was:
 * 0 with *cs, the first one's.  -1 else (w->snap is then garbage). */
static int snap__alike(struct ljw *w, uint32_t snapno, uint64_t base, uint32_t *cs)
{
	uint32_t cand[SNAP_ALIKE_MAX], n, k, i;
	struct ljt_snap *a = w->snap, *b;
	uint64_t cpc, bfn;
	int line;

	if (ljt__snap_calls(&w->tr, snapno, cand, SNAP_ALIKE_MAX, &n) || n < 2)
		return -1;
	bfn = ljw__base_fn(w, base);
	if (!w->snap_next && !(w->snap_next = malloc(sizeof(*w->snap_next))))
		return -1;
	b = w->snap_next;
	if (ljt__snap_decode(&w->tr, cand[0], a) || !(cpc = snap__callpc(w, a->pc)) ||
	    (line = call__line(w, a, bfn, cpc)) < 0)
		return -1;
	for (k = 1; k < n; k++) {
		if (ljt__snap_decode(&w->tr, cand[k], b) || b->nframes != a->nframes ||
		    b->root_fn != a->root_fn || b->topslot != a->topslot)
			return -1;
		for (i = 0; i < a->nframes; i++)
			if (!frame__same(&a->frames[i], &b->frames[i]))
				return -1;
		if (!(cpc = snap__callpc(w, b->pc)) || call__line(w, b, bfn, cpc) != line)
			return -1;
	}
	*cs = cand[0];
	return 0;
}

/* Decode into w->snap the snapshot whose frames the sample had at the
 * covering snapshot *snapno: for RIP in C code the trace called, the one
 * ljt__snap_call finds, positioned at its call bytecode (snap__callpc), or
 * the first of several alike ones (snap__alike: *alike set).  0 (*snapno
 * changed for a call); 1 when the frames at the call are not known, or
 * use_call is 0 (w->snap is the covering snapshot); 2 when no
 * side-effecting call is in its code (the covering snapshot's frames); -1
 * unreadable or inconsistent.  base: the jit_base frame's. */
static int snap__pick(struct ljw *w, uint32_t *snapno, uint64_t base, int use_call, int *alike)
{
	uint32_t cs;
	uint64_t cpc;
	int err = w->ts.ip_call ?
		  ljt__snap_call(&w->tr, *snapno, trace__calltarget(w, w->ts.ip), &cs) : -ENOENT;

	*alike = 0;
	if (err == -ESRCH && use_call && snap__alike(w, *snapno, base, &cs) == 0) {
		err = 0;
		*alike = 1;
	}
	if (err == 0 && use_call && ljt__snap_decode(&w->tr, cs, w->snap) == 0) {
		cpc = snap__callpc(w, w->snap->pc);
		if (cpc) {
			w->snap->pc = cpc;
			*snapno = cs;
			return 0;
		}
	}
	*alike = 0;
	if (ljt__snap_decode(&w->tr, *snapno, w->snap))
		return -1;
	if (err == -ENOENT)
		return w->ts.ip_call ? 2 : 0;
	return 1;
}

/*
 * A call without side effects (IR CALLN, CALLL: the library functions
 * builtins compile to) sets no snapshot before or after it (lj_ir.c sets
 * needsnap only after a CALLS), and entering or leaving an inlined Lua
 * function takes none either (lj_record.c), so the frames at the call are
 * in no snapshot.  What is known: the frames the snapshots before and after
 * it both have (same slot, function and link; after the last snapshot, a
 * root trace loops or links back in its base frame).  Where the two
 * differ, w->snap (the one before) is cut to those frames, with its PC at
 * the call that entered the first frame left out: 1.  0 when both have the
 * same frames or the next one cannot be read (w->snap unchanged).  One
 * case stays unseen: a Lua function entered and left between the two.
 */
static int snap__split(struct ljw *w, uint32_t snapno)
{
	struct ljt_snap *s = w->snap, *nx;
	uint32_t k = 0, nnext = 0;
	uint64_t link, cpc = 0;

	if (snapno + 1 < w->tr.h.nsnap) {
		if (!w->snap_next && !(w->snap_next = malloc(sizeof(*w->snap_next))))
			return 0;
		nx = w->snap_next;
		if (ljt__snap_decode(&w->tr, snapno + 1, nx))
			return 0;
		nnext = nx->nframes;
		while (k < s->nframes && k < nnext && frame__same(&s->frames[k], &nx->frames[k]))
			k++;
	}
	if (k == s->nframes && k == nnext)
		return 0;
	/* The PC of the outermost frame left out, in the frame that called it. */
	for (; k < s->nframes; k--) {
		link = s->frames[k].link;
		if (s->frames[k].has_link && (link & 3) == LJD_FRAME_LUA &&
		    (cpc = ljd__ftsz_pc(&w->d, (int64_t)link)) >= 4)
			break;
		if (k == 0)
			return 0;
	}
	if (k == s->nframes)
		return 1;	/* the next snapshot has more frames: all of these */
	s->nframes = k;
	s->pc = cpc - 4;
	if (w->d.fr2)
		s->topslot = k ? s->frames[k - 1].slot : 0;
	return 1;
}

#define UNSEEN_MAX_FNS	64	/* Lua function constants checked per trace */

/*
 * Does the trace inline a Lua function that no snapshot shows?  The
 * recorder specialises a call to its closure, an IR KGC constant
 * (lj_record.c rec_call_specialize), which stays among the constants even
 * where the guard folds away; a function entered and left between two
 * snapshots is in neither's frames (snap__split), nor in any other's if the
 * trace takes no snapshot inside it.  So a call without side effects whose
 * snapshots agree may have been made from such a function: 1.  0 when every
 * Lua function among the constants (the trace's start function aside) is
 * the function of some snapshot's frame, or the data cannot be read.  More
 * than UNSEEN_MAX_FNS such constants: 1.  Remembered per trace and process
 * (forked workers can hold different traces at one address).
 */
static int trace__unseen_lua(struct ljw *w)
{
	struct ljt *t = &w->tr;
	struct ljw_unseen *u = &w->unseen[(t->h.T >> 4) % LJW_UNSEEN_SLOTS];
	uint64_t fns[UNSEEN_MAX_FNS], pts[UNSEEN_MAX_FNS], obj, fpc, cfn;
	uint32_t ref, i, k, nfn = 0, left;
	uint8_t irt, gct, ffid;
	int val = 0;

	if (u->T == t->h.T && u->mcode == t->h.mcode && u->traceno == t->h.traceno &&
	    u->pid == w->s->pid)
		return u->val;
	for (ref = t->h.nk; ref < LJT_REF_BIAS; ref++) {
		if (ljt__kgc(t, ref, &obj, &irt) || irt != LJT_IRT_FUNC)
			continue;
		if (ljw__fn_read(w, obj, &gct, &ffid, &fpc, &cfn) || gct != LJD_GCT_FUNC ||
		    ffid != 0 || fpc <= w->d.lay->pt_size || fpc - w->d.lay->pt_size == t->h.startpt)
			continue;
		for (k = 0; k < nfn && fns[k] != obj; k++)
			;
		if (k < nfn)
			continue;
		if (nfn == UNSEEN_MAX_FNS) {
			val = 1;
			goto out;
		}
		pts[nfn] = fpc - w->d.lay->pt_size;
		fns[nfn++] = obj;
	}
	left = nfn;
	if (!left || (!w->snap_next && !(w->snap_next = malloc(sizeof(*w->snap_next)))))
		goto out;
	for (i = 0; i < t->h.nsnap && left; i++) {
		struct ljt_snap *sn = w->snap_next;
		uint32_t f;

		if (ljt__snap_decode(t, i, sn))
			goto out;	/* unreadable: say nothing */
		for (f = 0; f < sn->nframes; f++)
			for (k = 0; k < left; k++) {
				if (sn->frames[f].fn != fns[k] && sn->frames[f].pt != pts[k])
					continue;
				fns[k] = fns[--left];
				pts[k] = pts[left];
				break;
			}
	}
	val = left > 0;
out:
	u->T = t->h.T;
	u->mcode = t->h.mcode;
	u->traceno = t->h.traceno;
	u->pid = w->s->pid;
	u->val = val;
	return val;
}

/* The inlined frames at machine-code offset ofs into w->inl (see
 * ljw__inline_emit): the trace source (enum ljw_tsrc), or -1.  A call's
 * snapshot that does not fit the stack leaves the covering one, unsure. */
int ljw__snap_frames(struct ljw *w, struct ljw_stack *out, uint64_t L, uint64_t base,
		     uint64_t ofs, uint64_t *pc, uint64_t *fn, size_t *n, uint32_t *snapno)
{
	int pick, use_call, split, unseen, alike;

	for (use_call = 1; use_call >= 0; use_call--) {
		*n = 0;
		out->trace.ninlined = 0;
		*pc = *fn = 0;
		if (ljt__snap_find(&w->tr, ofs, snapno))
			return -1;
		pick = snap__pick(w, snapno, base, use_call, &alike);
		if (pick < 0)
			return -1;
		split = pick == 2 && snap__split(w, *snapno);
		unseen = pick == 2 && !split && trace__unseen_lua(w);
		if (ljw__inline_emit(w, out, L, base, w->snap, pc, fn, n) == 0)
			return pick == 1 ? LJW_TS_SNAP_CALL_UNSURE :
			       split ? LJW_TS_SNAP_CALL_SPLIT :
			       unseen ? LJW_TS_SNAP_CALL_UNSEEN :
			       pick == 2 ? LJW_TS_SNAP_CALL_PRIOR :
			       alike ? LJW_TS_SNAP_CALL_ALIKE :
			       w->ts.ip_call ? LJW_TS_SNAP_CALL : LJW_TS_SNAP;
		if (pick != 0)
			return -1;
	}
	return -1;
}

