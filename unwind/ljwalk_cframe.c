/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljwalk_cframe.c -- the C frames (cframes) of the entries into the VM, as
 * the walker checks them: whether the innermost entry has linked its first
 * frame yet, and whether the sampled thread runs that VM at all.  A C frame is where an entry (vm_x64.dasc lj_vm_call,
 * lj_vm_pcall, lj_vm_cpcall, lj_vm_resume) saved its registers, on the
 * native stack (lj_frame.h CFRAME_*); L->cframe holds the innermost, each
 * the one before.
 */
#include "unwind/ljwalk_int.h"

/*
 * Has the VM entry of C frame cf not linked a frame yet?  lj_vm_call and
 * lj_vm_pcall (vm_x64.dasc) set L->cframe and SAVE_PC = L ("any value
 * outside of bytecode") before ins_call stores the new frame's link; until
 * then the VM runs with the old L->base (BASE too, after set_vmstate
 * INTERP), whose frames belong to the C frame before: lua_call from a C
 * function (table.sort's comparator), a finalizer (lj_gc.c
 * gc_call_finalizer).  Seen from a sample in the interpreter, C or GC state
 * (the caller checks): the IP in the VM, the top frame at L->base
 * (base == Lbase) and not entered from C (on the way out, vm_return has its
 * own frame at L->base), not a fast function of the VM's own code, and the
 * C frame's SAVE_PC still L.  Once the entry's frames run, BASE moves off
 * the old L->base; a trace exit syncs L->base but stores SAVE_PC too
 * (lj_trace.c lj_trace_exit: setcframe_pc).  Two instructions of BC_FUNCC
 * (set_vmstate C, call) fit the same test when the first Lua function of an
 * entry calls a C function, and so may a sync of L->base without a SAVE_PC
 * store in an entry whose frames never stored one: those samples go one
 * activation out.
 */
int ljw__cf_unlinked(struct ljw *w, uint64_t cf, uint64_t L, uint64_t base, uint64_t Lbase)
{
	const struct ljs_regs *r = &w->s->regs;
	const struct ljw_opts *o = w->o;
	struct ljd_frame fr;
	uint64_t pc, fpc, cfn;
	uint8_t gct, ffid;
	int32_t nres;
	int type;

	if (!o->vm_lo || r->ip < o->vm_lo || r->ip >= o->vm_hi || base != Lbase || !cf)
		return 0;
	if (ljd__cf_nres(&w->d, cf, &nres) || nres < 0 || ljd__cf_pc(&w->d, cf, &pc) || pc != L ||
	    base < 8 || ljd__frame(&w->d, base - 8, &fr) ||
	    ljw__fn_read(w, fr.fn, &gct, &ffid, &fpc, &cfn))
		return 0;
	/* A fast function in the VM's own code (lj_lib.c: LJLIB_ASM) syncs
	 * L->base itself (vm_x64.dasc .ffunc): it runs in the entry. */
	if (ffid >= 2 && cfn >= o->vm_lo && cfn < o->vm_hi)
		return 0;
	type = (int)(fr.ftsz & 7);
	return type != LJD_FRAME_C && type != LJD_FRAME_CP;
}

/*
 * Does the sampled thread run L now?  A global_State the BPF program did
 * not read from this thread's registers (its per-thread cache, the
 * process's hint) may be the VM of another thread; L->cframe of the
 * running lua_State is the native stack address of its innermost entry
 * into the VM, so it lies on the stack of the thread (or fiber) that runs
 * it.  1 when it lies in ljw_opts.stack_lo/hi, or nothing can be checked
 * (no range; L unreadable, which the walk reports itself; L->cframe NULL,
 * not in Lua).
 */
int ljw__on_stack(struct ljw *w, uint64_t L)
{
	uint64_t cf;

	if (!w->o->stack_hi || ljd__ptr(&w->d, L + w->d.lay->l_cframe, &cf))
		return 1;
	cf &= ~(uint64_t)3;
	return !cf || (cf >= w->o->stack_lo && cf < w->o->stack_hi);
}
