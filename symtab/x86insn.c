/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86insn.c -- x86-64 instruction lengths (see x86insn.h).  Opcode maps as
 * in the Intel SDM, volume 2, appendix A, for 64-bit mode.
 */
#include <errno.h>
#include <string.h>

#include "symtab/x86insn.h"

/* What follows an opcode byte. */
#define M	0x01	/* a ModRM byte (and SIB, displacement) */
#define I8	0x02	/* imm8 */
#define IZ	0x04	/* imm16 with a 66 prefix, else imm32 */
#define I16	0x08	/* imm16 */
#define R8	0x10	/* rel8 */
#define RZ	0x20	/* rel32 */
#define X	0x40	/* invalid in 64-bit mode, or a prefix handled before */
#define S	0x80	/* special: see x86_insn__decode */

static const uint8_t map1[256] = {
	[0x00 ... 0x03] = M, [0x04] = I8, [0x05] = IZ, [0x06 ... 0x07] = X,
	[0x08 ... 0x0b] = M, [0x0c] = I8, [0x0d] = IZ, [0x0e] = X, [0x0f] = X,
	[0x10 ... 0x13] = M, [0x14] = I8, [0x15] = IZ, [0x16 ... 0x17] = X,
	[0x18 ... 0x1b] = M, [0x1c] = I8, [0x1d] = IZ, [0x1e ... 0x1f] = X,
	[0x20 ... 0x23] = M, [0x24] = I8, [0x25] = IZ, [0x26] = X, [0x27] = X,
	[0x28 ... 0x2b] = M, [0x2c] = I8, [0x2d] = IZ, [0x2e] = X, [0x2f] = X,
	[0x30 ... 0x33] = M, [0x34] = I8, [0x35] = IZ, [0x36] = X, [0x37] = X,
	[0x38 ... 0x3b] = M, [0x3c] = I8, [0x3d] = IZ, [0x3e] = X, [0x3f] = X,
	[0x40 ... 0x4f] = X,				/* REX */
	[0x50 ... 0x5f] = 0,				/* push, pop */
	[0x60 ... 0x62] = X, [0x63] = M, [0x64 ... 0x67] = X,
	[0x68] = IZ, [0x69] = M | IZ, [0x6a] = I8, [0x6b] = M | I8, [0x6c ... 0x6f] = 0,
	[0x70 ... 0x7f] = R8,
	[0x80] = M | I8, [0x81] = M | IZ, [0x82] = X, [0x83] = M | I8, [0x84 ... 0x8f] = M,
	[0x90 ... 0x99] = 0, [0x9a] = X, [0x9b ... 0x9f] = 0,
	[0xa0 ... 0xa3] = S,				/* mov moffs */
	[0xa4 ... 0xa7] = 0, [0xa8] = I8, [0xa9] = IZ, [0xaa ... 0xaf] = 0,
	[0xb0 ... 0xb7] = I8, [0xb8 ... 0xbf] = S,	/* mov imm32, or imm64 with REX.W */
	[0xc0 ... 0xc1] = M | I8, [0xc2] = I16, [0xc3] = 0, [0xc4 ... 0xc5] = X,
	[0xc6] = M | I8, [0xc7] = M | IZ, [0xc8] = S, [0xc9] = 0, [0xca] = I16,
	[0xcb ... 0xcc] = 0, [0xcd] = I8, [0xce] = X, [0xcf] = 0,
	[0xd0 ... 0xd3] = M, [0xd4 ... 0xd6] = X, [0xd7] = 0, [0xd8 ... 0xdf] = M,
	[0xe0 ... 0xe3] = R8, [0xe4 ... 0xe7] = I8, [0xe8 ... 0xe9] = RZ, [0xea] = X,
	[0xeb] = R8, [0xec ... 0xef] = 0,
	[0xf0] = X, [0xf1] = 0, [0xf2 ... 0xf3] = X, [0xf4 ... 0xf5] = 0,
	[0xf6 ... 0xf7] = S,				/* group 3: test has an immediate */
	[0xf8 ... 0xfd] = 0, [0xfe ... 0xff] = M,
};

static const uint8_t map0f[256] = {
	[0x00 ... 0x01] = M, [0x02 ... 0x03] = M, [0x04] = X, [0x05 ... 0x09] = 0,
	[0x0a] = X, [0x0b] = 0, [0x0c] = X, [0x0d] = M, [0x0e] = 0, [0x0f] = X,
	[0x10 ... 0x1f] = M,
	[0x20 ... 0x23] = M, [0x24 ... 0x27] = X, [0x28 ... 0x2f] = M,
	[0x30 ... 0x35] = 0, [0x36] = X, [0x37] = 0, [0x38 ... 0x3a] = X, [0x3b ... 0x3f] = X,
	[0x40 ... 0x4f] = M,
	[0x50 ... 0x6f] = M,
	[0x70 ... 0x73] = M | I8, [0x74 ... 0x76] = M, [0x77] = 0, [0x78 ... 0x79] = M,
	[0x7a ... 0x7b] = X, [0x7c ... 0x7f] = M,
	[0x80 ... 0x8f] = RZ,
	[0x90 ... 0x9f] = M,
	[0xa0 ... 0xa2] = 0, [0xa3] = M, [0xa4] = M | I8, [0xa5] = M, [0xa6 ... 0xa7] = X,
	[0xa8 ... 0xaa] = 0, [0xab] = M, [0xac] = M | I8, [0xad ... 0xaf] = M,
	[0xb0 ... 0xb9] = M, [0xba] = M | I8, [0xbb ... 0xbf] = M,
	[0xc0 ... 0xc1] = M, [0xc2] = M | I8, [0xc3] = M, [0xc4 ... 0xc6] = M | I8, [0xc7] = M,
	[0xc8 ... 0xcf] = 0,
	[0xd0 ... 0xfe] = M, [0xff] = M,
};

/* Bytes of ModRM, SIB and displacement from c[0] (the ModRM byte); *rip
 * set when the operand is RIP-relative (its disp32 then follows ModRM).
 * 0 if cut by avail. */
static size_t x86_insn__modrm(const uint8_t *c, size_t avail, int *rip)
{
	uint8_t mod = c[0] >> 6, rm = c[0] & 7;
	size_t n = 1;

	*rip = 0;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (avail < 2)
			return 0;
		n = 2;
		if (mod == 0 && (c[1] & 7) == 5)
			n += 4;		/* no base: disp32 */
	} else if (mod == 0 && rm == 5) {
		*rip = 1;
		n += 4;
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	return n <= avail ? n : 0;
}

/* A legacy prefix: operand or address size, lock, rep, segment. */
static int x86_insn__prefix(uint8_t b)
{
	return b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e ||
	       b == 0x3e || b == 0x26 || b == 0x36 || b == 0x64 || b == 0x65;
}

int x86_insn__decode(const uint8_t *c, size_t avail, struct x86_insn *out)
{
	size_t i = 0, n, imm = 0;
	int opsize16 = 0, adsize32 = 0, rexw = 0, rip = 0, modrm = 0;
	uint8_t op, fl;
	size_t z;

	memset(out, 0, sizeof(*out));
	for (; i < avail && i < 14 && x86_insn__prefix(c[i]); i++) {
		opsize16 |= c[i] == 0x66;
		adsize32 |= c[i] == 0x67;
	}
	if (i >= avail || i >= 14)
		return -EINVAL;
	op = c[i];
	if ((op & 0xf0) == 0x40) {
		rexw = (op & 8) != 0;
		if (++i >= avail)
			return -EINVAL;
		op = c[i];
	}
	z = opsize16 && !rexw ? 2 : 4;	/* REX.W wins over 66 */
	i++;			/* past the opcode byte */
	if (op == 0xc4 || op == 0xc5 || op == 0x62) {	/* VEX, EVEX */
		size_t pfx = op == 0xc5 ? 1 : op == 0xc4 ? 2 : 3;
		uint8_t map = op == 0xc5 ? 1 : c[i] & (op == 0x62 ? 0x07 : 0x1f);

		if (i + pfx >= avail || map < 1 || map > 3)
			return -EINVAL;
		op = c[i + pfx];
		i += pfx + 1;	/* past the prefix's payload and the opcode */
		out->map = map;
		out->op = op;
		out->vex = 1;
		modrm = !(map == 1 && op == 0x77);	/* vzeroupper, vzeroall */
		if (map == 3 || (map == 1 && (map0f[op] & I8)))
			imm = 1;
		if (map == 1 && (map0f[op] & (X | RZ)))
			return -EINVAL;
		goto operands;
	}
	if (op == 0x0f) {
		if (i >= avail)
			return -EINVAL;
		op = c[i++];
		out->map = 1;
		out->op = op;
		if (op == 0x38 || op == 0x3a) {
			if (i >= avail)
				return -EINVAL;
			out->map = op == 0x38 ? 2 : 3;
			out->op = c[i++];
			modrm = 1;
			imm = op == 0x3a;
			goto operands;
		}
		fl = map0f[op];
	} else {
		out->op = op;
		fl = map1[op];
		if (fl & S) {
			if (op >= 0xa0 && op <= 0xa3)
				imm = adsize32 ? 4 : 8;
			else if (op >= 0xb8 && op <= 0xbf)
				imm = rexw ? 8 : opsize16 ? 2 : 4;
			else if (op == 0xc8)
				imm = 3;
			else {	/* f6, f7 */
				if (i >= avail)
					return -EINVAL;
				modrm = 1;
				if ((c[i] & 0x38) >> 3 <= 1)
					imm = op == 0xf6 ? 1 : z;
			}
			goto operands;
		}
	}
	if (fl & X)
		return -EINVAL;
	modrm = (fl & M) != 0;
	if (fl & I8)
		imm += 1;
	if (fl & IZ)
		imm += z;
	if (fl & I16)
		imm += 2;
	if (fl & (R8 | RZ)) {
		out->rel_off = (uint8_t)i;
		out->rel_size = fl & R8 ? 1 : 4;
		imm = out->rel_size;
	}
operands:
	if (modrm) {
		if (i >= avail || !(n = x86_insn__modrm(c + i, avail - i, &rip)))
			return -EINVAL;
		if (rip)
			out->rip_off = (uint8_t)(i + 1);
		i += n;
	}
	i += imm;
	if (i > avail || i > 15)
		return -EINVAL;
	out->len = (uint8_t)i;
	return 0;
}
