/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_native_lj.c -- LuaJIT's unwind rule at a trace exit (unwind/native_lj.c).
 *
 * native_lj__exit_ret over the first bytes of ->vm_exit_handler (vm_x64.dasc,
 * and the X64 branch of vm_x86.dasc) as two unstripped builds of
 * tests/variants/prepare.sh hold them: up-nogc64 (LuaJIT 2.1 2022-03,
 * non-GC64; lj_vm_exit_handler at 0x2af67, its call of lj_trace_exit at
 * 0x2b043 to 0x1fad0) and or-dualnum (OpenResty luajit2 2.1-20230119, GC64;
 * 0xdd6b, call at 0xde44 to 0x29750), each from 8 bytes before the symbol
 * (the end of the code before it), as `nm` and `objdump -d` show them.
 *
 * native__step_lj over a made-up stack: the exit handler's frame at its
 * return address, with rsp at an ExitState (lj_target_x86.h) and
 * L->cframe at an lj_vm_cpcall inside lj_trace_exit (lj_trace.c), is stepped
 * to the caller of the interpreter activation the trace ran in.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "unwind/memsrc.h"
#include "unwind/native.h"
#include "tests/unit/check.h"

int failures, checks;

/* up-nogc64 from lj_vm_exit_handler - 8 (0x2af5f) */
static const uint8_t h_nogc64[] =
	"\x83\xeb\x04\xe9\x74\xea\xff\xff\x41\x55\x41\x54\x41\x53\x41\x52\x41\x51\x41\x50\x57\x56"
	"\x55\x48\x8d\x6c\x24\x58\x55\x53\x52\x51\x50\x0f\xb6\x45\xf8\x8a\x65\xf0\x4c\x89\x7d\xf8"
	"\x4c\x89\x75\xf0\x44\x8b\x75\x00\x41\x8b\x8e\x20\xf4\xff\xff\x41\xc7\x86\x20\xf4\xff\xff"
	"\xfc\xff\xff\xff\x41\x89\x86\x24\xff\xff\xff\x41\x89\x8e\x20\xff\xff\xff\x48\x81\xec\x80"
	"\x00\x00\x00\x48\x83\xc5\x80\xf2\x44\x0f\x11\x7d\xf8\xf2\x44\x0f\x11\x75\xf0\xf2\x44\x0f"
	"\x11\x6d\xe8\xf2\x44\x0f\x11\x65\xe0\xf2\x44\x0f\x11\x5d\xd8\xf2\x44\x0f\x11\x55\xd0\xf2"
	"\x44\x0f\x11\x4d\xc8\xf2\x44\x0f\x11\x45\xc0\xf2\x0f\x11\x7d\xb8\xf2\x0f\x11\x75\xb0\xf2"
	"\x0f\x11\x6d\xa8\xf2\x0f\x11\x65\xa0\xf2\x0f\x11\x5d\x98\xf2\x0f\x11\x55\x90\xf2\x0f\x11"
	"\x4d\x88\xf2\x0f\x11\x45\x80\x41\x8b\xae\xb8\xf4\xff\xff\x41\x8b\x96\xbc\xf4\xff\xff\x49"
	"\x89\xae\xe8\xf5\xff\xff\x89\x55\x10\x48\x89\xe6\x41\x8d\xbe\x80\xf5\xff\xff\x41\xc7\x86"
	"\xbc\xf4\xff\xff\x00\x00\x00\x00\xe8\x88\x4a\xff\xff\x48\x8b\x4d\x30\x48\x83\xe1";

/* or-dualnum from lj_vm_exit_handler - 8 (0xdd63) */
static const uint8_t h_gc64[] =
	"\x83\xeb\x04\xe9\x5e\xe5\xff\xff\x41\x55\x41\x54\x41\x53\x41\x52\x41\x51\x41\x50\x57\x56"
	"\x55\x48\x8d\x6c\x24\x58\x55\x53\x52\x51\x50\x0f\xb6\x45\xf8\x8a\x65\xf0\x4c\x89\x7d\xf8"
	"\x4c\x89\x75\xf0\x41\x8b\x8e\x10\xf1\xff\xff\x41\xc7\x86\x10\xf1\xff\xff\xfc\xff\xff\xff"
	"\x41\x89\x86\x04\xff\xff\xff\x41\x89\x8e\x00\xff\xff\xff\x48\x81\xec\x80\x00\x00\x00\x48"
	"\x83\xc5\x80\xf2\x44\x0f\x11\x7d\xf8\xf2\x44\x0f\x11\x75\xf0\xf2\x44\x0f\x11\x6d\xe8\xf2"
	"\x44\x0f\x11\x65\xe0\xf2\x44\x0f\x11\x5d\xd8\xf2\x44\x0f\x11\x55\xd0\xf2\x44\x0f\x11\x4d"
	"\xc8\xf2\x44\x0f\x11\x45\xc0\xf2\x0f\x11\x7d\xb8\xf2\x0f\x11\x75\xb0\xf2\x0f\x11\x6d\xa8"
	"\xf2\x0f\x11\x65\xa0\xf2\x0f\x11\x5d\x98\xf2\x0f\x11\x55\x90\xf2\x0f\x11\x4d\x88\xf2\x0f"
	"\x11\x45\x80\x49\x8b\xae\xc8\xf1\xff\xff\x49\x8b\x96\xd0\xf1\xff\xff\x49\x89\xae\xb8\xf3"
	"\xff\xff\x48\x89\x55\x20\x48\x89\xe6\x49\x8d\xbe\x38\xf3\xff\xff\x49\xc7\x86\xd0\xf1\xff"
	"\xff\x00\x00\x00\x00\xe8\x07\xb9\x01\x00\x48\x8b\x4d\x50\x48\x83\xe1\xfc\x48\x89";

/* The handler's return address in both builds; none where it cannot be. */
static void check_exit_ret(void)
{
	static uint8_t big[0x20000];
	uint8_t v[sizeof(h_gc64)];
	size_t n = sizeof(h_nogc64) - 1, m = sizeof(h_gc64) - 1;
	uint64_t ret;

	ret = native_lj__exit_ret(h_nogc64, n, 0x2af5f);
	CHECKF(ret == 0x2b043 + 5, "up-nogc64: %#llx", (unsigned long long)ret);
	ret = native_lj__exit_ret(h_gc64, m, 0xdd63);
	CHECKF(ret == 0xde44 + 5, "or-dualnum: %#llx", (unsigned long long)ret);
	/* Without its first push the code is no exit handler. */
	CHECK(native_lj__exit_ret(h_gc64 + 10, m - 10, 0xdd63 + 10) == 0);
	/* The call cut off, or its target inside the range given (so not C). */
	CHECK(native_lj__exit_ret(h_gc64, m - 12, 0xdd63) == 0);
	memcpy(big + 0x1000, h_gc64, m);	/* its call lands at big + 0x1c9ed */
	CHECK(native_lj__exit_ret(big, sizeof(big), 0x100000) == 0);
	/* A call after a non-zero imm32 is not the one after the jit_base store. */
	memcpy(v, h_gc64, m);
	v[0xe6 - 6] = 1;
	CHECK(native_lj__exit_ret(v, m, 0xdd63) == 0);
	/* No `mov rsi, rsp` before it: not the call that passes the ExitState. */
	memcpy(v, h_gc64, m);
	v[0xcc] = 0x90;		/* its first byte */
	CHECK(native_lj__exit_ret(v, m, 0xdd63) == 0);
	CHECK(native_lj__exit_ret(h_gc64, 0, 0xdd63) == 0);
}

#define STK	0x7ffd00000000ull	/* the made-up stack's address */
#define CF	80			/* CFRAME_SIZE (GC64) */
#define VM_LO	0x400000ull
#define EXIT_RET (VM_LO + 0x3c99)
#define RA	0x555555551234ull	/* return address into lua_pcall's caller */

static uint64_t stk[0x400 / 8];

static void put(uint64_t addr, uint64_t v)
{
	stk[(addr - STK) / 8] = v;
}

/*
 * The stack, upwards: lj_vm_cpcall's C frame (L->cframe) at STK + 0x40,
 * its SAVE_CFRAME pointing to the interpreter's; the ExitState at
 * STK + 0x100; the trace's rsp 256 bytes up, 0x30 of spill (spadjust) and
 * BC_JLOOP's 16 bytes below the interpreter's C frame at STK + 0x240, whose
 * CFA is 80 bytes up.
 */
static void stack__init(void)
{
	uint64_t cp = STK + 0x40, es = STK + 0x100, cf = STK + 0x240, cfa = cf + CF;

	memset(stk, 0, sizeof(stk));
	put(cp + 32, cf);		/* SAVE_CFRAME (CFRAME_OFS_PREV) */
	put(es + 128 + 4 * 8, es + 256);	/* ExitState.gpr[RID_ESP] */
	put(cf, 0x1212);		/* r12, r13: BC_JLOOP's saves */
	put(cf - 8, 0x1313);
	put(cfa - 8, RA);
	put(cfa - 16, 0xb0b0);		/* rbp, rbx, r15, r14: saveregs */
	put(cfa - 24, 0xb1b1);
	put(cfa - 32, 0xf1f1);
	put(cfa - 40, 0xe1e1);
}

/* One step of the rule from the handler's frame. */
static int step(const struct native_lj_rule *r, uint64_t pc, uint64_t sp, struct native_regs *out)
{
	struct memsrc_window w = { STK, sizeof(stk), (const uint8_t *)stk };
	struct memsrc_windows ws = { &w, 1 };
	struct native_frame f;
	struct memsrc ms;

	memsrc__init_windows(&ms, &ws, NULL);
	memset(&f, 0, sizeof(f));
	f.pc = pc;
	f.sp = sp;
	f.in_module = 1;
	memset(out, 0, sizeof(*out));
	return native__step_lj((void *)r, &f, &ms, out);
}

static void check_step(void)
{
	struct native_lj_rule r;
	struct native_regs o;
	uint64_t es = STK + 0x100, cfa = STK + 0x240 + CF;
	int err;

	stack__init();
	native_lj_rule__init(&r, CF, 1);
	r.vm_lo = VM_LO;
	r.vm_hi = VM_LO + 0x5000;
	r.cframe = STK + 0x40;
	r.exit_ret = EXIT_RET;
	err = step(&r, EXIT_RET, es, &o);
	CHECKF(err == 0 && o.r[NATIVE_RSP] == cfa && o.r[NATIVE_RIP] == RA,
	       "exit handler: %d, rsp %#llx rip %#llx", err, (unsigned long long)o.r[NATIVE_RSP],
	       (unsigned long long)o.r[NATIVE_RIP]);
	CHECK(o.r[NATIVE_RBP] == 0xb0b0 && o.r[NATIVE_RBX] == 0xb1b1 && o.r[NATIVE_R15] == 0xf1f1 &&
	      o.r[NATIVE_R14] == 0xe1e1 && o.r[NATIVE_R12] == 0x1212 && o.r[NATIVE_R13] == 0x1313);
	/* Before the cpcall (L->cframe the interpreter's): the same caller. */
	r.cframe = STK + 0x240;
	err = step(&r, EXIT_RET, es, &o);
	CHECK(err == 0 && o.r[NATIVE_RSP] == cfa && o.r[NATIVE_RIP] == RA);
	r.cframe = STK + 0x40;
	/* Another VM return address above the cframe: an older activation, the FDE's. */
	CHECK(step(&r, EXIT_RET + 1, es, &o) == -ENOENT);
	/* The handler's return address unknown: as before, the FDE's. */
	r.exit_ret = 0;
	CHECK(step(&r, EXIT_RET, es, &o) == -ENOENT);
	r.exit_ret = EXIT_RET;
	/* No ExitState there (its rsp slot disagrees): stop rather than guess. */
	put(es + 160, es + 248);
	CHECK(step(&r, EXIT_RET, es, &o) == -ERANGE);
	put(es + 160, es + 256);
	/* No cframe to follow, or a chain that does not reach the trace's rsp. */
	r.cframe = 0;
	CHECK(step(&r, EXIT_RET, es, &o) == -ERANGE);
	r.cframe = STK + 0x40;
	put(STK + 0x40 + 32, STK + 0x20);
	CHECK(step(&r, EXIT_RET, es, &o) == -ERANGE);
	put(STK + 0x40 + 32, STK + 0x240);
	/* The CFRAME_RESUME / CFRAME_UNWIND_FF bits of SAVE_CFRAME are masked. */
	put(STK + 0x40 + 32, STK + 0x240 + 1);
	err = step(&r, EXIT_RET, es, &o);
	CHECK(err == 0 && o.r[NATIVE_RSP] == cfa);
}

int main(void)
{
	check_exit_ret();
	check_step();
	if (failures) {
		fprintf(stderr, "%d of %d checks failed\n", failures, checks);
		return 1;
	}
	printf("ok: %d checks of the trace exit rule\n", checks);
	return 0;
}
