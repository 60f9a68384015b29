/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86insn.h -- the length of one x86-64 instruction and where its
 * address-dependent fields lie, without disassembling it.
 *
 * Enough for the code compilers emit in 64-bit mode: legacy prefixes, REX,
 * the one-byte, 0F, 0F 38 and 0F 3A opcode maps, x87, VEX (C4, C5) and
 * EVEX (62).  An opcode that is invalid in 64-bit mode, or one this
 * decoder does not know, is an error: the caller treats the code as
 * unknown, it never guesses a length.  Pure: bytes in, lengths out.
 */
#ifndef LJSNAP_SYMTAB_X86INSN_H
#define LJSNAP_SYMTAB_X86INSN_H

#include <stddef.h>
#include <stdint.h>

struct x86_insn {
	uint8_t len;		/* bytes in all */
	uint8_t rel_off;	/* rel8/rel32 branch displacement at this offset, or 0 */
	uint8_t rel_size;	/* its size (1 or 4), 0 for none */
	uint8_t rip_off;	/* disp32 of a RIP-relative operand at this offset, or 0 */
	uint8_t map;		/* opcode map: 0 one-byte, 1 0F, 2 0F 38, 3 0F 3A */
	uint8_t op;		/* the opcode byte in that map */
	uint8_t vex;		/* 1: VEX or EVEX encoded */
};

/* Decode the instruction at c (at most avail bytes) into *out.  0, or
 * -EINVAL (invalid or unknown opcode, or cut by avail). */
int x86_insn__decode(const uint8_t *c, size_t avail, struct x86_insn *out);

#endif /* LJSNAP_SYMTAB_X86INSN_H */
