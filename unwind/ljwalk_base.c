/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljwalk_base.c -- where the LuaJIT walk starts: the checks of a frame BASE
 * (a function below it, a sane link) and the choice of the top frame's
 * BASE and PC from the sample's registers, vmstate and lua_State, the way
 * the interpreter keeps them (vm_x64.dasc: BASE in rdx, PC in rbx; L->base
 * synced only around calls out of the VM; lj_frame.h for the links).
 */
#include "unwind/ljwalk_int.h"

/* Is a frame address inside the thread's stack, above the bottom slot? */
int ljw__frame_ok(const struct thr *t, const struct ljd *d, uint64_t f)
{
	return !(f & 7) && f > t->bot && f < t->end && f >= t->stack + d->hdr_bytes - 8;
}

/* Is the link of frame f sane (one step, without emitting anything)? */
static int link__sane(struct ljw *w, const struct thr *t, uint64_t f, int64_t ftsz)
{
	uint64_t pc, nf;
	uint32_t ins, op;

	if ((ftsz & 3) == LJD_FRAME_LUA) {
		pc = ljd__ftsz_pc(&w->d, ftsz);
		if (pc < 4 || memsrc__u32(w->d.ms, pc - 4, &ins))
			return 0;
		op = ljd_bc_op(ins);
		if (op != LJW_BC_CALL && op != LJW_BC_CALLM && op != LJW_BC_ITERC &&
		    op != LJW_BC_ITERN)
			return 0;
		nf = f - 8 * (1 + w->d.fr2 + (uint64_t)ljd_bc_a(ins));
	} else {
		int64_t sized = ftsz & ~(int64_t)7;

		if (sized <= 0 || (uint64_t)sized > f)
			return 0;
		nf = f - (uint64_t)sized;
	}
	return nf == t->bot || (nf > t->bot && nf < f && !(nf & 7));
}

/* Check a BASE candidate: a function below it and a sane link. */
int ljw__base_check(struct ljw *w, const struct thr *t, uint64_t base)
{
	struct ljd_frame fr;
	uint8_t gct, ffid;
	uint64_t f = base - 8, fpc, cfn;

	if (base < 8 || !ljw__frame_ok(t, &w->d, f) || base > t->end)
		return 0;
	if (ljd__frame(&w->d, f, &fr) || ljw__fn_read(w, fr.fn, &gct, &ffid, &fpc, &cfn) ||
	    gct != LJD_GCT_FUNC)
		return 0;
	return link__sane(w, t, f, fr.ftsz);
}

/* Bytecode position of pc in the Lua function at base, or -1. */
int32_t ljw__base_pos(struct ljw *w, uint64_t base, uint64_t pc)
{
	const struct lj_layout *lay = w->d.lay;
	struct ljd_frame fr;
	struct ljw_proto *p;
	uint64_t fpc, cfn;
	uint8_t gct, ffid;

	if (!pc || ljd__frame(&w->d, base - 8, &fr) ||
	    ljw__fn_read(w, fr.fn, &gct, &ffid, &fpc, &cfn) || gct != LJD_GCT_FUNC || ffid != 0 ||
	    fpc < lay->pt_size)
		return -1;
	p = ljw__proto(w, fpc - lay->pt_size);
	return p ? ljw__proto_pos(w, p, pc) : -1;
}

/*
 * The interpreter at a moment when the frame at BASE (rdx) has no header:
 * a return (BC_RET, BC_RET0, BC_RET1 and a fast function's results, e.g.
 * ->fff_res2: vm_x64.dasc stores the first result over the returning
 * frame's function slot, with the frame's link already loaded into PC,
 * rbx), or a call being set up (BC_ITERC has moved BASE to the new frame
 * before ins_call stores its link).  PC then points just after the CALL,
 * CALLM, ITERC or ITERN of the caller, whose BASE is below by the call's
 * A + 1 + LJ_FR2 slots.  The caller is the top frame, at PC, if its BASE
 * checks out and PC lies in its function's bytecode: *caller.
 */
static int ret__caller(struct ljw *w, const struct thr *t, uint64_t base, uint64_t pc,
		       uint64_t *caller)
{
	uint64_t cb, back;
	uint32_t ins, op;

	if (pc < 4 || memsrc__u32(w->d.ms, pc - 4, &ins))
		return 0;
	op = ljd_bc_op(ins);
	if (op != LJW_BC_CALL && op != LJW_BC_CALLM && op != LJW_BC_ITERC && op != LJW_BC_ITERN)
		return 0;
	back = 8 * (1 + w->d.fr2 + (uint64_t)ljd_bc_a(ins));
	if (base <= back)
		return 0;
	cb = base - back;
	if (!ljw__base_check(w, t, cb) || ljw__base_pos(w, cb, pc) < 0)
		return 0;
	*caller = cb;
	return 1;
}

/* Choose the top BASE/PC for the running thread per vmstate and RIP. */
int ljw__top_choose(struct ljw *w, struct ljw_stack *out, struct thr *t, uint64_t Lbase,
		       enum vmclass vc, uint64_t jit_base, uint64_t *base, uint64_t *pc)
{
	const struct ljs_regs *r = &w->s->regs;
	const struct ljw_opts *o = w->o;
	uint64_t savepc = 0, cand, cpc;
	int in_vm = o->vm_lo && r->ip >= o->vm_lo && r->ip < o->vm_hi;

	if (t->cf && ljd__cf_pc(&w->d, t->cf, &savepc))
		savepc = 0;
	*pc = 0;
	if (vc == VC_TRACE && jit_base) {
		if (!ljw__base_check(w, t, jit_base))
			return -1;
		*base = jit_base;
		out->base_src = LJW_SRC_JIT_BASE;
		return 0;
	}
	if (vc == VC_INTERP && in_vm) {
		cand = ljd__reg(&w->d, ljw__reg(w, LJW_REG_DX));
		cpc = ljd__reg(&w->d, ljw__reg(w, LJW_REG_BX));
		if (ljw__base_check(w, t, cand)) {
			*base = cand;
			out->base_src = LJW_SRC_REGS;
			if (ljw__base_pos(w, cand, cpc) >= 0) {
				*pc = cpc;
				out->pc_src = LJW_SRC_REGS;
			}
			return 0;
		}
		/* rbp: BASE saved around a fast function's call to C (ipairs_aux
		 * right after lj_tab_getinth returns, before "mov BASE, RB"). */
		if (ret__caller(w, t, cand, cpc, base) ||
		    ret__caller(w, t, ljd__reg(&w->d, ljw__reg(w, LJW_REG_BP)), cpc, base)) {
			*pc = cpc;
			out->base_src = out->pc_src = LJW_SRC_RETURN;
			return 0;
		}
	}
	if (vc == VC_INTERP && !in_vm && o->vm_regs) {
		/* rbp == L: the VM synced L->base ("sync"); else rbp is BASE ("leaf"). */
		cand = ljd__reg(&w->d, ljw__reg(w, LJW_REG_VM_BP));
		cpc = ljd__reg(&w->d, ljw__reg(w, LJW_REG_VM_BX));
		if (cand != t->L && ljw__base_check(w, t, cand) && ljw__base_pos(w, cand, cpc) >= 0) {
			*base = cand;
			*pc = cpc;
			out->base_src = out->pc_src = LJW_SRC_VM_REGS;
			return 0;
		}
		/* A fast function calling C with its first result already over
		 * its function slot (ipairs_aux at lj_tab_getinth: the next index
		 * at BASE-16, vm_x64.dasc) and the caller's PC in rbx: as at a
		 * return, the caller is the top frame. */
		if (cand != t->L && ret__caller(w, t, cand, cpc, base)) {
			*pc = cpc;
			out->base_src = out->pc_src = LJW_SRC_RETURN;
			return 0;
		}
		if (ljw__base_check(w, t, Lbase) && ljw__base_pos(w, Lbase, cpc) >= 0) {
			*base = Lbase;
			*pc = cpc;
			out->base_src = LJW_SRC_L_BASE;
			out->pc_src = LJW_SRC_VM_REGS;
			return 0;
		}
	}
	if (!ljw__base_check(w, t, Lbase))
		return -1;
	*base = Lbase;
	out->base_src = LJW_SRC_L_BASE;
	if (savepc && savepc != t->L && ljw__base_pos(w, Lbase, savepc) >= 0) {
		*pc = savepc;
		out->pc_src = LJW_SRC_SAVE_PC;
	}
	return 0;
}
