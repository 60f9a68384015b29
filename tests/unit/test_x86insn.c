/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_x86insn.c -- x86-64 instruction lengths (symtab/x86insn.h) and the
 * signatures built on them (symtab/ljsig.h).
 *
 *   test_x86insn            encodings with known lengths and fields, and
 *                           the signature's invariants
 *   test_x86insn FILE       decode FILE's .text from its start, as objdump
 *                           -d does, and print "ADDR LEN REL RIP" per
 *                           instruction (REL: 1 for a branch with a rel8 or
 *                           rel32, RIP: 1 for a RIP-relative operand), for
 *                           tests/unit/test_x86insn.sh to compare with
 *                           objdump's; "ERR ADDR" where decoding stops
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "symtab/elf.h"
#include "symtab/ljsig.h"
#include "symtab/x86insn.h"
#include "tests/unit/check.h"

int failures, checks;

struct enc {
	const char *what;
	uint8_t b[16];
	uint8_t n;		/* bytes of b given */
	int len;		/* expected length, -1: invalid */
	uint8_t rel_off, rel_size, rip_off;
};

static const struct enc encs[] = {
	{ "ret", { 0xc3 }, 1, 1, 0, 0, 0 },
	{ "push %rbx", { 0x53 }, 1, 1, 0, 0, 0 },
	{ "push %r12", { 0x41, 0x54 }, 2, 2, 0, 0, 0 },
	{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, 4, 0, 0, 0 },
	{ "call rel32", { 0xe8, 1, 2, 3, 4 }, 5, 5, 1, 4, 0 },
	{ "jmp rel8", { 0xeb, 0x10 }, 2, 2, 1, 1, 0 },
	{ "jne rel32", { 0x0f, 0x85, 1, 2, 3, 4 }, 6, 6, 2, 4, 0 },
	{ "lea 0x0(%rip),%rdi", { 0x48, 0x8d, 0x3d, 1, 2, 3, 4 }, 7, 7, 0, 0, 3 },
	{ "movl $imm,0x0(%rip)", { 0xc7, 0x05, 1, 2, 3, 4, 5, 6, 7, 8 }, 10, 10, 0, 0, 2 },
	{ "mov (%rsp),%rax", { 0x48, 0x8b, 0x04, 0x24 }, 4, 4, 0, 0, 0 },
	{ "mov 0x8(%rsp),%rax", { 0x48, 0x8b, 0x44, 0x24, 0x08 }, 5, 5, 0, 0, 0 },
	{ "mov 0x100(%rbx),%eax", { 0x8b, 0x83, 0, 1, 0, 0 }, 6, 6, 0, 0, 0 },
	{ "mov 0x0(,%rax,8),%rdx", { 0x48, 0x8b, 0x14, 0xc5, 1, 2, 3, 4 }, 8, 8, 0, 0, 0 },
	{ "movabs $imm64,%rax", { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 10, 10, 0, 0, 0 },
	{ "mov $imm32,%eax", { 0xb8, 1, 2, 3, 4 }, 5, 5, 0, 0, 0 },
	{ "mov $imm16,%ax", { 0x66, 0xb8, 1, 2 }, 4, 4, 0, 0, 0 },
	{ "testb $1,(%rdi)", { 0xf6, 0x07, 0x01 }, 3, 3, 0, 0, 0 },
	{ "neg %ebp", { 0xf7, 0xdd }, 2, 2, 0, 0, 0 },
	{ "test $imm32,%eax (f7)", { 0xf7, 0xc0, 1, 2, 3, 4 }, 6, 6, 0, 0, 0 },
	{ "cmpw $imm16,(%rax)", { 0x66, 0x81, 0x38, 1, 2 }, 5, 5, 0, 0, 0 },
	{ "addq $imm8,%rsp", { 0x48, 0x83, 0xc4, 0x08 }, 4, 4, 0, 0, 0 },
	{ "nopw 0x0(%rax,%rax,1)", { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 6, 6, 0, 0, 0 },
	{ "pshufd $imm8,%xmm1,%xmm0", { 0x66, 0x0f, 0x70, 0xc1, 0x1b }, 5, 5, 0, 0, 0 },
	{ "pshufb (0f 38)", { 0x66, 0x0f, 0x38, 0x00, 0xc1 }, 5, 5, 0, 0, 0 },
	{ "palignr (0f 3a)", { 0x66, 0x0f, 0x3a, 0x0f, 0xc1, 0x04 }, 6, 6, 0, 0, 0 },
	{ "vzeroupper", { 0xc5, 0xf8, 0x77 }, 3, 3, 0, 0, 0 },
	{ "vmovdqu (%rsi),%ymm0", { 0xc5, 0xfe, 0x6f, 0x06 }, 4, 4, 0, 0, 0 },
	{ "vpcmpeqb 0x0(%rip),%ymm0,%ymm1", { 0xc5, 0xfd, 0x74, 0x0d, 1, 2, 3, 4 }, 8, 8, 0, 0, 4 },
	{ "vpshufd (c4, map 1, imm8)", { 0xc4, 0xe1, 0x7d, 0x70, 0xc1, 0x1b }, 6, 6, 0, 0, 0 },
	{ "vpalignr (c4, map 3)", { 0xc4, 0xe3, 0x7d, 0x0f, 0xc1, 0x04 }, 6, 6, 0, 0, 0 },
	{ "vmovdqu64 (evex)", { 0x62, 0xe1, 0xfe, 0x48, 0x6f, 0x06 }, 6, 6, 0, 0, 0 },
	{ "fldl 0x8(%rsp)", { 0xdd, 0x44, 0x24, 0x08 }, 4, 4, 0, 0, 0 },
	{ "mov moffs64,%al", { 0xa0, 1, 2, 3, 4, 5, 6, 7, 8 }, 9, 9, 0, 0, 0 },
	{ "enter", { 0xc8, 1, 2, 3 }, 4, 4, 0, 0, 0 },
	{ "lock cmpxchg", { 0xf0, 0x0f, 0xb1, 0x0e }, 4, 4, 0, 0, 0 },
	{ "fs mov", { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 }, 9, 9, 0, 0, 0 },
	{ "invalid 06 in 64-bit mode", { 0x06 }, 1, -1, 0, 0, 0 },
	{ "invalid 0f 0f (3DNow)", { 0x0f, 0x0f, 0xc1, 0x9e }, 4, -1, 0, 0, 0 },
	{ "cut: call missing bytes", { 0xe8, 1, 2 }, 3, -1, 0, 0, 0 },
	{ "cut: modrm missing", { 0x48, 0x8b }, 2, -1, 0, 0, 0 },
	{ "cut: sib disp32 missing", { 0x8b, 0x04, 0x25, 1, 2 }, 5, -1, 0, 0, 0 },
	{ "prefixes only", { 0x66, 0x66, 0x66 }, 3, -1, 0, 0, 0 },
};

static void check_encodings(void)
{
	size_t i;

	for (i = 0; i < sizeof(encs) / sizeof(encs[0]); i++) {
		const struct enc *e = &encs[i];
		struct x86_insn x;
		int err = x86_insn__decode(e->b, e->n, &x);

		if (e->len < 0) {
			CHECKF(err == -EINVAL, "%s: decoded, length %u", e->what, x.len);
			continue;
		}
		CHECKF(err == 0 && x.len == e->len && x.rel_off == e->rel_off &&
		       x.rel_size == e->rel_size && x.rip_off == e->rip_off,
		       "%s: err %d len %u rel %u/%u rip %u, expected %d %u/%u %u", e->what, err, x.len,
		       x.rel_off, x.rel_size, x.rip_off, e->len, e->rel_off, e->rel_size, e->rip_off);
	}
}

/* The opcode map and byte, as funcs.c tells calls, jumps and leas apart. */
static void check_opcodes(void)
{
	static const struct {
		uint8_t b[8], n, map, op, vex;
	} t[] = {
		{ { 0xe8, 1, 2, 3, 4 }, 5, 0, 0xe8, 0 },			/* call */
		{ { 0x0f, 0x85, 1, 2, 3, 4 }, 6, 1, 0x85, 0 },			/* jne rel32 */
		{ { 0x48, 0x8d, 0x3d, 1, 2, 3, 4 }, 7, 0, 0x8d, 0 },		/* lea */
		{ { 0x66, 0x0f, 0x38, 0x00, 0xc1 }, 5, 2, 0x00, 0 },		/* pshufb */
		{ { 0x66, 0x0f, 0x3a, 0x0f, 0xc1, 0x04 }, 6, 3, 0x0f, 0 },	/* palignr */
		{ { 0xc4, 0xe3, 0x7d, 0x0f, 0xc1, 0x04 }, 6, 3, 0x0f, 1 },	/* vpalignr */
		{ { 0x62, 0xe2, 0x7d, 0x48, 0x8d, 0xc1 }, 6, 2, 0x8d, 1 },	/* vpermb, not a lea */
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct x86_insn x;

		CHECKF(x86_insn__decode(t[i].b, t[i].n, &x) == 0 && x.len == t[i].n &&
		       x.map == t[i].map && x.op == t[i].op && x.vex == t[i].vex,
		       "case %zu: len %u map %u op %02x vex %u", i, x.len, x.map, x.op, x.vex);
	}
}

/* ljsig_target_fn: the addresses reached. */
struct targets {
	uint64_t to[4];
	size_t n;
};

static int collect(uint64_t to, void *arg)
{
	struct targets *t = arg;

	if (t->n < 4)
		t->to[t->n] = to;
	t->n++;
	return 0;
}

/* The signature of code (lo at 0x1000) whose every reached function has
 * base signature adds. */
static int sig_of(const uint8_t *c, size_t len, uint64_t adds, uint64_t *out)
{
	struct targets t = { { 0 }, 0 };
	uint64_t base, reached[4] = { adds, adds, adds, adds };
	int err = ljsig__base(c, len, 0x1000, collect, &t, &base);

	return err ? err : ljsig__sig(base, len, reached, t.n < 4 ? t.n : 4, out);
}

/* The signature ignores what the layout changes (a call's rel32 to another
 * function, a RIP-relative displacement) and nothing else; what the
 * targets add (their base signatures) goes in. */
static void check_signature(void)
{
	uint8_t a[32], b[32];
	uint64_t ha, hb;
	struct targets t = { { 0 }, 0 };
	size_t i;

	/* lea X(%rip),%rdi; call elsewhere; jne +2 (inside); 13 x nop; ret */
	static const uint8_t code[18] = {
		0x48, 0x8d, 0x3d, 0x10, 0x20, 0x30, 0x00,	/* lea X(%rip),%rdi */
		0xe8, 0x00, 0x10, 0x00, 0x00,			/* call elsewhere */
		0x0f, 0x85, 0x02, 0x00, 0x00, 0x00,		/* jne +2: inside */
	};

	memcpy(a, code, sizeof(code));
	for (i = sizeof(code); i < 31; i++)
		a[i] = 0x90;
	a[31] = 0xc3;
	CHECK(ljsig__base(a, sizeof(a), 0x1000, collect, &t, &ha) == 0);
	CHECK(t.n == 2 && t.to[0] == 0x1000 + 7 + 0x302010 && t.to[1] == 0x1000 + 12 + 0x1000);
	CHECK(sig_of(a, sizeof(a), 7, &ha) == 0);
	memcpy(b, a, sizeof(b));
	b[3] ^= 0x55;		/* another data address */
	b[9] ^= 0x77;		/* another callee address */
	CHECK(sig_of(b, sizeof(b), 7, &hb) == 0 && ha == hb);
	CHECK(sig_of(a, sizeof(a), 8, &hb) == 0 && ha != hb);	/* another callee's code */
	memcpy(b, a, sizeof(b));
	b[14] = 0x04;		/* another branch inside the function */
	CHECK(sig_of(b, sizeof(b), 7, &hb) == 0 && ha != hb);
	memcpy(b, a, sizeof(b));
	b[2] = 0x35;		/* another register */
	CHECK(sig_of(b, sizeof(b), 7, &hb) == 0 && ha != hb);
	CHECK(sig_of(a, sizeof(a) - 1, 7, &hb) == 0 && ha != hb);	/* another length */
	CHECK(sig_of(a, LJSIG_MIN_LEN - 1, 7, &hb) == -EINVAL);
	CHECK(ljsig__base(a + 31, 1, 0, NULL, NULL, &hb) == 0);	/* a ret: any length has a base signature */
	CHECK(ljsig__base(a, 0, 0, NULL, NULL, &hb) == -EINVAL);
	CHECK(ljsig__base(a, sizeof(a), 0, NULL, NULL, &ha) == 0 &&
	      ljsig__base(b, sizeof(b), 0, NULL, NULL, &hb) == 0 && ha != hb);
	memcpy(b, a, sizeof(b));
	b[9] ^= 0x77;
	CHECK(ljsig__base(b, sizeof(b), 0, NULL, NULL, &hb) == 0 && ha == hb);
	a[20] = 0x06;		/* not an instruction */
	CHECK(sig_of(a, sizeof(a), 7, &hb) == -EINVAL);
	CHECK(!ljsig__name("no such source", ha));
	CHECK(!ljsig__known("no such source"));
	CHECK(ljsig__known("LuaJIT 2.1 (2022-03)") && ljsig__known("OpenResty luajit2 2.1-20230119"));
}

/* Print the instructions of path's .text, as described above. */
static int dump_text(const char *path)
{
	struct elf_file *ef = NULL;
	struct elf_section sec;
	const uint8_t *d;
	size_t size, i = 0;

	if (elf_file__open(path, &ef) != 0 ||
	    elf_file__section_data(ef, ".text", &sec, &d, &size) != 0) {
		fprintf(stderr, "test_x86insn: %s: no .text\n", path);
		elf_file__delete(ef);
		return 99;
	}
	while (i < size) {
		struct x86_insn x;

		if (x86_insn__decode(d + i, size - i, &x) != 0) {
			printf("ERR %" PRIx64 "\n", sec.addr + i);
			break;
		}
		printf("%" PRIx64 " %u %d %d\n", sec.addr + i, x.len, x.rel_size != 0, x.rip_off != 0);
		i += x.len;
	}
	elf_file__delete(ef);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return dump_text(argv[1]);
	check_encodings();
	check_opcodes();
	check_signature();
	printf("test_x86insn: %d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
