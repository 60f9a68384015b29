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
 * outside of bytecode") before ins_call stores the new frame's link, and
 * set_vmstate INTERP only after that; until then the VM runs with the old
 * L->base, whose frames belong to the C frame before, in the state of its
 * caller (C: lua_call from a C function; GC: a finalizer, lj_gc.c
 * gc_call_finalizer), which the caller checks.  Seen from a sample: the IP
 * in the VM, the top frame at L->base (base == Lbase) and not entered from
 * C (on the way out, vm_return sets vmstate C with the entry's own frame
 * still at L->base), and the C frame's SAVE_PC still L.  The interpreter
 * itself runs with vmstate INTERP.  Two instructions of BC_FUNCC
 * (set_vmstate C, call) fit the same test when the first Lua function of an
 * entry calls a C function: those samples go one activation out.
 */
int ljw__cf_unlinked(struct ljw *w, uint64_t cf, uint64_t L, uint64_t base, uint64_t Lbase)
{
	const struct ljs_regs *r = &w->s->regs;
	struct ljd_frame fr;
	uint64_t pc;
	int32_t nres;
	int type;

	if (!w->o->vm_lo || r->ip < w->o->vm_lo || r->ip >= w->o->vm_hi || base != Lbase || !cf)
		return 0;
	if (ljd__cf_nres(&w->d, cf, &nres) || nres < 0 || ljd__cf_pc(&w->d, cf, &pc) || pc != L ||
	    base < 8 || ljd__frame(&w->d, base - 8, &fr))
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
