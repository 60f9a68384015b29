/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * native_lj.c -- LuaJIT's unwind rule for code without CFI (see native.h).
 *
 * JIT-compiled traces live in anonymous mappings and have no CFI.  A trace
 * runs inside the interpreter activation that entered it (BC_JLOOP / JFUNC):
 * its rsp is the C frame ("cframe", L->cframe & ~3) minus BC_JLOOP's extra
 * 16 bytes minus the trace's spadjust, so the activation's CFA is cframe +
 * CFRAME_SIZE, the return address into the C code that entered the VM sits
 * at CFA - 8, and rbp, rbx, r15, r14 were pushed just below it.  The same
 * slots give the interpreter's own rule (CFA = rsp + CFRAME_SIZE at its
 * resting rsp), used here only when the file holding the VM is missing.
 * Every number comes from the caller; nothing here knows LuaJIT's structs.
 *
 * A trace exit (vm_x64.dasc ->vm_exit_handler, lj_asm_x86.h
 * asm_exitstub_gen) pushes the exit number (two bytes, two pushes, in the
 * stub) and every GPR, reserves the FPRs below: the ExitState of
 * lj_target_x86.h, fpr[16] then gpr[16], 256 bytes, at rsp when the handler
 * calls lj_trace_exit(J, ExitState *); gpr[RID_ESP] holds the trace's rsp,
 * 256 bytes up.  lj_trace_exit runs lj_snap_restore (and, for a hot exit,
 * the trace compiler) under lj_vm_cpcall, whose C frame is L->cframe then:
 * the handler's frame is above it, where the VM's one FDE would take it for
 * a resting activation.  Its CFA is that of the trace: the C frame it ran
 * in is the innermost one of the cframe chain (CFRAME_OFS_PREV, lj_frame.h)
 * at or above the trace's rsp.
 */
#include <errno.h>
#include <string.h>

#include "unwind/ljlayout.h"
#include "unwind/native.h"

/* x86_64 defaults for a given C-frame size and mode. */
void native_lj_rule__init(struct native_lj_rule *r, uint32_t cf_size, int gc64)
{
	memset(r, 0, sizeof(*r));
	r->cf_size = cf_size;
	r->jit_save = 1;
	r->off_r12_cf = 0;
	r->off_r13_cf = gc64 ? -8 : 8;
	r->jloop_adjust = 16;
	r->off_rbp = -16;
	r->off_rbx = -24;
	r->off_r15 = -32;
	r->off_r14 = -40;
	r->exit_size = 16 * 8 + 16 * 8;		/* fpr[RID_NUM_FPR], gpr[RID_NUM_GPR] */
	r->exit_rsp_off = 16 * 8 + 4 * 8;	/* gpr[RID_ESP] */
	r->cf_prev = 32;			/* CFRAME_OFS_PREV */
}

/* ->vm_exit_handler's first instructions (vm_x64.dasc; the X64 branch of
 * vm_x86.dasc is the same): push r13, r12, r11, r10, r9, r8, rdi, rsi, rbp;
 * lea rbp, [rsp+88]; push rbp, rbx, rdx, rcx, rax. */
static const uint8_t exit_push[] = {
	0x41, 0x55, 0x41, 0x54, 0x41, 0x53, 0x41, 0x52, 0x41, 0x51, 0x41, 0x50,
	0x57, 0x56, 0x55, 0x48, 0x8d, 0x6c, 0x24, 0x58, 0x55, 0x53, 0x52, 0x51, 0x50,
};
#define EXIT_SCAN	320	/* bytes from the pushes to the call (about 190) */

/*
 * The return address of the handler's call of lj_trace_exit; see native.h.
 * After the pushes come the exit number's reconstruction, the vmstate and
 * J->exitno / J->parent stores, the FPR saves, `mov CARG2, rsp` (48 89 e6),
 * `lea CARG1, [DISPATCH+GG_DISP2J]`, the store of 0 to g->jit_base (its
 * imm32 of 0 ends right before the call) and `call extern lj_trace_exit`
 * (e8 rel32, to C code outside the interpreter).  The first call after the
 * pushes that fits all of that is the one.
 */
uint64_t native_lj__exit_ret(const uint8_t *code, size_t len, uint64_t addr)
{
	size_t i, h, end, rsi = 0;
	uint64_t to;
	int32_t rel;

	for (h = 0; h + sizeof(exit_push) <= len; h++)
		if (code[h] == exit_push[0] && !memcmp(code + h, exit_push, sizeof(exit_push)))
			break;
	if (h + sizeof(exit_push) > len)
		return 0;
	i = h + sizeof(exit_push);
	end = len - i > EXIT_SCAN ? i + EXIT_SCAN : len;
	for (; i + 5 <= end; i++) {
		if (code[i] == 0x48 && code[i + 1] == 0x89 && code[i + 2] == 0xe6)
			rsi = i + 3;
		if (code[i] != 0xe8 || !rsi || i < rsi + 4 || memcmp(code + i - 4, "\0\0\0\0", 4))
			continue;
		memcpy(&rel, code + i + 1, 4);
		to = addr + i + 5 + (uint64_t)(int64_t)rel;
		if (to >= addr && to < addr + len)
			continue;
		return addr + i + 5;
	}
	return 0;
}

/* The C frame a trace exit's handler frame (rsp = its ExitState) belongs to:
 * the trace's rsp is ExitState.gpr[RID_ESP], exit_size bytes up, and its C
 * frame the innermost of L->cframe's chain above BC_JLOOP's save area there. */
static int native_lj__exit_cframe(const struct native_lj_rule *r, uint64_t sp,
				  const struct memsrc *mem, uint64_t *out)
{
	uint64_t rsp = sp + r->exit_size, saved, cf = r->cframe, prev;
	int i;

	if (memsrc__u64(mem, sp + r->exit_rsp_off, &saved) != 0)
		return -EFAULT;
	if (saved != rsp || !cf)
		return -ERANGE;		/* not an ExitState, or no chain to follow */
	for (i = 0; i < 64; i++) {
		if (cf >= rsp + r->jloop_adjust) {
			*out = cf;
			return 0;
		}
		if (memsrc__u64(mem, cf + r->cf_prev, &prev) != 0)
			return -EFAULT;
		prev &= ~(uint64_t)3;	/* CFRAME_RAWMASK */
		if (prev <= cf)
			break;
		cf = prev;
	}
	return -ERANGE;
}

/* Restore one callee-saved register from its slot at base + off. */
static void native_lj__restore(const struct memsrc *mem, uint64_t base, int32_t off, int reg,
			       struct native_regs *out)
{
	uint64_t v, a = base + (uint64_t)(int64_t)off;

	if ((off < 0 && a > base) || (off > 0 && a < base))
		return;
	if (memsrc__u64(mem, a, &v) == 0) {
		out->r[reg] = v;
		out->valid |= 1u << reg;
	}
}

/* Keep a register's value from the frame being stepped. */
static void native_lj__keep(const struct native_frame *f, int reg, struct native_regs *out)
{
	if ((f->regs.valid >> reg) & 1) {
		out->r[reg] = f->regs.r[reg];
		out->valid |= 1u << reg;
	}
}

/* Step from a trace (or interpreter) frame to the C code that entered the VM. */
int native__step_lj(void *arg, const struct native_frame *f, const struct memsrc *mem,
		    struct native_regs *out)
{
	const struct native_lj_rule *r = arg;
	uint64_t cfa, ret, sp = f->sp, cf;
	int in_trace, in_vm, err;

	if (!r || !r->cf_size || r->cf_size > 4096 || (r->cf_size & 7))
		return -EINVAL;
	cf = r->cframe;
	in_vm = r->vm_lo < r->vm_hi && f->pc >= r->vm_lo && f->pc < r->vm_hi;
	in_trace = (r->trace_lo < r->trace_hi && f->pc >= r->trace_lo && f->pc < r->trace_hi) ||
		   (r->any_unknown && !in_vm && !f->in_module &&
		    (f->map < 0 || (f->map_flags & NATIVE_MAP_ANON)));
	if (in_vm && r->exit_ret && f->pc == r->exit_ret && (!cf || sp > cf)) {
		err = native_lj__exit_cframe(r, sp, mem, &cf);
		if (err)
			return err;
		cfa = cf + r->cf_size;	/* the exited trace's activation */
		in_vm = 0;		/* its registers are the trace's */
	} else if (in_vm && r->cframe && sp <= r->cframe)
		cfa = r->cframe + r->cf_size;	/* the innermost activation */
	else if (in_vm && f->in_module)
		return -ENOENT;			/* an older one: its FDE is right */
	else if (in_vm)
		cfa = sp + r->cf_size;
	else if (!in_trace)
		return -ENOENT;
	else if (r->cframe && sp > r->cframe)
		return -ENOENT;			/* above the activation: not on this trace */
	else if (r->cframe)
		cfa = r->cframe + r->cf_size;
	else
		cfa = sp + r->jloop_adjust + r->spadjust + r->cf_size;
	/* The frame must lie above the trace's rsp: anything else is stale data. */
	if (cfa <= sp || cfa - sp > (1u << 20) + r->cf_size)
		return -ERANGE;
	if (memsrc__u64(mem, cfa - 8, &ret) != 0)
		return -EFAULT;
	if (ret == 0)
		return -ERANGE;
	memset(out, 0, sizeof(*out));
	out->r[NATIVE_RSP] = cfa;
	out->r[NATIVE_RIP] = ret;
	out->valid = 1u << NATIVE_RSP | 1u << NATIVE_RIP;
	native_lj__restore(mem, cfa, r->off_rbp, NATIVE_RBP, out);
	native_lj__restore(mem, cfa, r->off_rbx, NATIVE_RBX, out);
	native_lj__restore(mem, cfa, r->off_r15, NATIVE_R15, out);
	native_lj__restore(mem, cfa, r->off_r14, NATIVE_R14, out);
	if (in_vm) {	/* the interpreter leaves r12 and r13 alone */
		native_lj__keep(f, NATIVE_R12, out);
		native_lj__keep(f, NATIVE_R13, out);
	} else if (r->jit_save && cf) {	/* BC_JLOOP saved them at the cframe */
		native_lj__restore(mem, cf, r->off_r12_cf, NATIVE_R12, out);
		native_lj__restore(mem, cf, r->off_r13_cf, NATIVE_R13, out);
	}
	return 0;
}

/* Little-endian integer of n bytes at addr inside a section, or 0. */
static uint64_t sec_u(const struct ljs_section *sec, uint64_t addr, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	if (!sec || addr < sec->addr || addr - sec->addr + n > sec->len)
		return 0;
	for (i = 0; i < n; i++)
		v |= (uint64_t)sec->data[addr - sec->addr + i] << (8 * i);
	return v;
}

/* LuaJIT's rule for one sample; see native.h. */
int native_lj_rule__from_sample(struct native_lj_rule *r, const struct lj_layout *lay,
				const struct ljs_sample *s, uint64_t vm_lo, uint64_t vm_hi)
{
	const struct ljs_section *L = ljs_sample__section(s, LJS_SEC_L, -1);
	const struct ljs_section *T = ljs_sample__section(s, LJS_SEC_TRACE, -1);

	if (!lay || !lay->cf_size)
		return 0;
	native_lj_rule__init(r, lay->cf_size, !!(lay->flags & LJ_LAYOUT_F_GC64));
	if (lay->cf_prev && lay->cf_prev + 8 <= lay->cf_size)
		r->cf_prev = lay->cf_prev;
	r->vm_lo = vm_lo;
	r->vm_hi = vm_hi;
	if (L)
		r->cframe = sec_u(L, L->addr + lay->l_cframe, 8) & ~(uint64_t)3;
	if (T && lay->t_mcode && lay->t_szmcode) {	/* on a trace (vmstate >= 0) */
		r->trace_lo = sec_u(T, T->addr + lay->t_mcode, 8);
		r->trace_hi = r->trace_lo + sec_u(T, T->addr + lay->t_szmcode, 4);
		r->spadjust = (uint32_t)sec_u(T, T->addr + lay->t_spadjust, 2);
		r->any_unknown = 1;
	}
	return r->trace_lo < r->trace_hi || r->vm_lo < r->vm_hi;
}
