/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljtrace_world.h -- the synthetic world of test_ljtrace: trace 3 of a
 * main chunk -> caller -> helper program, laid out by LuaJIT's rules in
 * GC64 or non-GC64 memory (the file comment of test_ljtrace.c gives it).
 */
#ifndef LJSNAP_TEST_LJTRACE_WORLD_H
#define LJSNAP_TEST_LJTRACE_WORLD_H

#include <stdint.h>

#include "unwind/ljlayout.h"
#include "unwind/ljwalk.h"
#include "unwind/memsrc.h"
#include "unwind/sample.h"
#include "tests/unit/synth.h"

#define WORLD_SIZE	(512 * 1024)
#define MCODE		UINT64_C(0x7f0000100000)
#define SZMCODE		300
#define TRACENO		3
#define SPADJUST	16
#define REF_BIAS	0x8000u
#define NK		(REF_BIAS - 8)
#define NINS		(REF_BIAS + 4)
#define K_HELPER	(REF_BIAS - 8)	/* KGC helper (GC64: + value slot) */
#define K_LINK		(REF_BIAS - 6)	/* KNUM: helper's frame link (GC64) */
#define K_CALLER	(REF_BIAS - 4)	/* KGC caller */
#define IR_KGC		24
#define IR_KNUM		28
#define IRT_FUNC	8
#define SNAP(slot, flags, ref)	((uint32_t)(slot) << 24 | (flags) | (ref))
#define INS(op, a, d)	((uint32_t)(op) | (uint32_t)(a) << 8 | (uint32_t)(d) << 16)

struct world {
	const struct lj_layout *lay;
	uint32_t fr2, ref;
	struct synth sm;	/* over mem */
	uint8_t mem[WORLD_SIZE];
	uint64_t g, L, J, stack, cf, b0, b1;
	uint64_t pt_main, pt_caller, pt_helper, fn_main, fn_caller, fn_helper;
	uint64_t T, T5, tarr;
	struct ljs_sample s;
	uint8_t secbuf[64 * 1024];
	struct memsrc_window win[1];
	struct memsrc_windows ws;
	struct memsrc ms_world, ms;
};

/* Bytecode address of position pos of a prototype. */
uint64_t w_bc(struct world *w, uint64_t pt, uint32_t pos);
/* An IR instruction: op1, op2, t, o. */
void w_ir(struct world *w, uint64_t ir, uint32_t ref, uint32_t op12, uint8_t t, uint8_t o);
/* A KGC function constant at ref (GC64: the pointer in the next slot). */
void w_kgc(struct world *w, uint64_t ir, uint32_t ref, uint64_t fn);
/* Build the world of test_ljtrace.c's file comment for a layout. */
void world_build(struct world *w, const struct lj_layout *lay);
/* The sample at ip: windows of G, L, the Lua stack, the native stack
 * below the cframe and the header of trace T (0: none), copied now. */
void world_sample(struct world *w, uint64_t T, uint64_t ip);
/* Walk the sample and render up to 8 frames into lines; the number of
 * frames, -1 when the walk fails. */
int world_walk(struct world *w, struct ljw *wk, const struct ljw_opts *o,
	       struct ljw_stack *st, char lines[][160]);

#endif
