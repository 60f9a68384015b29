/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * chain.c -- a known native call chain for the unwinder tests:
 * main -> a -> b -> c, with c spinning in an always-inlined spin().
 *
 * Built into tests/unit/test_native_fp (-fno-omit-frame-pointer) and
 * tests/unit/test_native_nofp (-fomit-frame-pointer), both with -g and
 * unwind tables.  Ground truth is recorded as the chain runs: each function
 * stores its own return address (__builtin_return_address) and the source
 * line of the call it makes, so the test compares the unwinder's pcs and the
 * symbolizer's lines with what the compiler itself says.
 *
 * c() takes two snapshots the way the BPF program does: registers with
 * inline asm plus a copy of the stack from rsp up (chain_snap_asm), and,
 * while it spins, one from a SIGPROF handler at whatever instruction the
 * timer interrupted (chain_snap_sig).  Tests run after the chain returns.
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>

#include "tests/native/chain.h"

struct chain_truth chain_truth;
struct chain_snap chain_snap_asm, chain_snap_sig;
uint64_t chain_stack_hi;	/* end of the mapping holding our stack (set by main) */

static volatile sig_atomic_t chain_in_c, chain_captured;
static volatile uint64_t chain_spins;

/* The registers at the nop that ends the asm (so the pc is on the asm's own
 * line), in pt_regs order (struct ljs_regs). */
#define CHAIN_CAPTURE_REGS(r) __asm__ volatile( \
	"mov %%r15, 0(%0)\n\t" "mov %%r14, 8(%0)\n\t" "mov %%r13, 16(%0)\n\t" \
	"mov %%r12, 24(%0)\n\t" "mov %%rbp, 32(%0)\n\t" "mov %%rbx, 40(%0)\n\t" \
	"mov %%r11, 48(%0)\n\t" "mov %%r10, 56(%0)\n\t" "mov %%r9, 64(%0)\n\t" \
	"mov %%r8, 72(%0)\n\t" "mov %%rax, 80(%0)\n\t" "mov %%rcx, 88(%0)\n\t" \
	"mov %%rdx, 96(%0)\n\t" "mov %%rsi, 104(%0)\n\t" "mov %%rdi, 112(%0)\n\t" \
	"mov %%rsp, 152(%0)\n\t" "lea 1f(%%rip), %%rax\n\t" "mov %%rax, 128(%0)\n" \
	"1:\n\tnop\n\t" : : "r"(r) : "rax", "memory")

/* Copy the stack from sp up to its end (or the buffer's size), as the BPF
 * program copies a sampled stack: raw bytes, the frames' padding included. */
#ifdef __SANITIZE_ADDRESS__
/* AddressSanitizer would call reading that padding an overflow: a plain loop
 * in a function it does not instrument (its memcpy would be checked anyway).
 * Only then: a call here changes what c() keeps on its stack. */
__attribute__((no_sanitize_address, noinline))
static void chain__copy_stack(struct chain_snap *s)
{
	uint64_t n = chain_stack_hi > s->regs.sp ? chain_stack_hi - s->regs.sp : 0, i;
	const volatile uint8_t *src = (const volatile uint8_t *)(uintptr_t)s->regs.sp;

	if (n > sizeof(s->stack))
		n = sizeof(s->stack);
	for (i = 0; i < n; i++)
		s->stack[i] = src[i];
	s->len = (uint32_t)n;
}
#else
static void chain__copy_stack(struct chain_snap *s)
{
	uint64_t n = chain_stack_hi > s->regs.sp ? chain_stack_hi - s->regs.sp : 0;

	if (n > sizeof(s->stack))
		n = sizeof(s->stack);
	memcpy(s->stack, (const void *)(uintptr_t)s->regs.sp, n);
	s->len = (uint32_t)n;
}
#endif

/* SIGPROF: snapshot the interrupted context if it is spinning in c. */
static void chain__on_prof(int sig, siginfo_t *si, void *ucv)
{
	const ucontext_t *uc = ucv;
	const greg_t *g = uc->uc_mcontext.gregs;
	struct ljs_regs *r = &chain_snap_sig.regs;

	(void)sig;
	(void)si;
	if (!chain_in_c || chain_captured)
		return;
	r->r15 = (uint64_t)g[REG_R15];
	r->r14 = (uint64_t)g[REG_R14];
	r->r13 = (uint64_t)g[REG_R13];
	r->r12 = (uint64_t)g[REG_R12];
	r->bp = (uint64_t)g[REG_RBP];
	r->bx = (uint64_t)g[REG_RBX];
	r->r11 = (uint64_t)g[REG_R11];
	r->r10 = (uint64_t)g[REG_R10];
	r->r9 = (uint64_t)g[REG_R9];
	r->r8 = (uint64_t)g[REG_R8];
	r->ax = (uint64_t)g[REG_RAX];
	r->cx = (uint64_t)g[REG_RCX];
	r->dx = (uint64_t)g[REG_RDX];
	r->si = (uint64_t)g[REG_RSI];
	r->di = (uint64_t)g[REG_RDI];
	r->ip = (uint64_t)g[REG_RIP];
	r->sp = (uint64_t)g[REG_RSP];
	r->flags = (uint64_t)g[REG_EFL];
	chain__copy_stack(&chain_snap_sig);
	chain_captured = 1;
}

/* Spin until the profiling timer has taken its snapshot. */
static inline __attribute__((always_inline)) void spin(void)
{
	chain_in_c = 1;
	chain_truth.line_spin = __LINE__ + 1;
	while (!chain_captured) chain_spins++;
	chain_in_c = 0;
}

/* Innermost: snapshot with inline asm, then spin under SIGPROF. */
__attribute__((noinline, noclone)) void c(void)
{
	chain_truth.ra_c = (uint64_t)(uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0));
	chain_truth.line_capture = __LINE__ + 1;
	CHAIN_CAPTURE_REGS(&chain_snap_asm.regs);
	chain__copy_stack(&chain_snap_asm);
	chain_truth.line_c_spin = __LINE__ + 1;
	spin();
	__asm__ volatile("" ::: "memory");
}

/* Calls c. */
__attribute__((noinline, noclone)) void b(void)
{
	chain_truth.ra_b = (uint64_t)(uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0));
	chain_truth.line_b_call = __LINE__ + 1;
	c();
	__asm__ volatile("" ::: "memory");
}

/* Calls b. */
__attribute__((noinline, noclone)) void a(void)
{
	chain_truth.ra_a = (uint64_t)(uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0));
	chain_truth.line_a_call = __LINE__ + 1;
	b();
	__asm__ volatile("" ::: "memory");
}

/* Install the SIGPROF handler and a 1 ms CPU-time timer.  0 or -1. */
int chain__arm(void)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = chain__on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	chain_captured = 0;
	if (sigaction(SIGPROF, &sa, NULL) != 0)
		return -1;
	return setitimer(ITIMER_PROF, &it, NULL);
}

/* Stop the timer and restore the default SIGPROF action. */
void chain__disarm(void)
{
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	setitimer(ITIMER_PROF, &off, NULL);
	signal(SIGPROF, SIG_DFL);
}
