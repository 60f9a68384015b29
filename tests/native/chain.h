/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * chain.h -- the known call chain main -> a -> b -> c (see chain.c).
 */
#ifndef LJSNAP_TEST_CHAIN_H
#define LJSNAP_TEST_CHAIN_H

#include <stdint.h>

#include "bpf/ljsnap.h"

#define CHAIN_STACK_MAX	(256 * 1024)

/* What the compiler says about the chain, recorded while it runs. */
struct chain_truth {
	uint64_t ra_c, ra_b, ra_a;	/* return addresses into b, a and main */
	int line_capture;		/* c's inline-asm register capture */
	int line_spin;			/* the spin loop (inlined into c) */
	int line_c_spin;		/* c's call of spin() */
	int line_b_call, line_a_call;	/* b's call of c, a's call of b */
	int line_main_call;		/* main's call of a (set by main) */
};

/* One snapshot: registers and the stack from regs.sp up. */
struct chain_snap {
	struct ljs_regs regs;
	uint32_t len;
	uint8_t stack[CHAIN_STACK_MAX];
};

extern struct chain_truth chain_truth;
extern struct chain_snap chain_snap_asm, chain_snap_sig;
extern uint64_t chain_stack_hi;

void a(void);
void b(void);
void c(void);

/* Arm the profiling timer (main then calls a(), which takes both snapshots),
 * and disarm it afterwards.  0 or -1. */
int chain__arm(void);
void chain__disarm(void);

#endif /* LJSNAP_TEST_CHAIN_H */
