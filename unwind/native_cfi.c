/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * native_cfi.c -- the CFI row of a pc, asked of libdw once and kept in the
 * address space as a compact rule (see native_int.h, struct native_rule).
 *
 * libdw's unwinder looks up and re-runs the CIE/FDE programs of every frame
 * it steps, and evaluates each register's rule as a DWARF expression.  The
 * rule of a pc never changes within one address space, so it is looked up
 * here once, the way libdw's own step does (the module at the pc, its
 * .eh_frame, then its .debug_frame), and what dwarf_frame_cfa and
 * dwarf_frame_register answer is kept when it is one of the forms x86-64
 * code uses: CFA = register + offset; each register undefined, the same
 * value, saved at CFA + N, CFA + N itself, or another register + N.  Any
 * other form marks the rule NATIVE_RULE_COMPLEX, and the unwinder leaves
 * such a sample to libdw (native_fast.c).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/vec.h"
#include "unwind/native_int.h"

/* A register operand of DW_OP_bregN / DW_OP_bregx: 0 and *reg, *off set. */
static int cfi__breg(const Dwarf_Op *op, int64_t *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
	} else if (op->atom == DW_OP_bregx) {
		*reg = (int64_t)op->number;
		*off = (int64_t)op->number2;
	} else {
		return -1;
	}
	return *reg >= 0 && *reg < NATIVE_NREGS ? 0 : -1;
}

/* Classify what dwarf_frame_register answered: 0 with kind/arg set, or -1. */
static int cfi__reg(const Dwarf_Op *mem, const Dwarf_Op *ops, size_t nops, uint8_t *kind,
		    int64_t *arg, uint8_t *reg)
{
	int64_t r, off;

	*arg = 0;
	*reg = 0;
	if (nops == 0) {
		if (ops != mem && ops != NULL)
			return -1;
		*kind = ops == mem ? NATIVE_RULE_UNDEF : NATIVE_RULE_SAME;
		return 0;
	}
	if (ops[0].atom == DW_OP_call_frame_cfa) {
		size_t i = 1;

		if (i < nops && ops[i].atom == DW_OP_plus_uconst)
			*arg = (int64_t)ops[i++].number;
		*kind = NATIVE_RULE_AT_CFA;
		if (i < nops && ops[i].atom == DW_OP_stack_value) {
			*kind = NATIVE_RULE_CFA;
			i++;
		}
		return i == nops ? 0 : -1;
	}
	if (nops == 2 && ops[1].atom == DW_OP_stack_value && cfi__breg(&ops[0], &r, &off) == 0) {
		*kind = NATIVE_RULE_REG;
		*reg = (uint8_t)r;
		*arg = off;
		return 0;
	}
	return -1;
}

/* Fill r for the lookup pc from libdw (the steps of libdw's own frame unwind). */
static void cfi__fill(struct native_space *s, uint64_t pc, struct native_rule *r)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	Dwarf_Op mem[3], *ops = NULL;
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr bias = 0, start, end;
	Dwarf_CFI *cfi;
	size_t nops;
	bool signal = false;
	int64_t reg;
	int i;

	memset(r, 0, sizeof(*r));
	r->status = NATIVE_RULE_NONE;
	if (!mod)
		return;
	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0) {
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0)
			return;
	}
	r->status = NATIVE_RULE_COMPLEX;
	nops = 1;
	if (dwarf_frame_register(frame, NATIVE_RIP, mem, &ops, &nops) == 0)
		r->ra_undef = nops == 0 && ops == mem;
	if (dwarf_frame_info(frame, &start, &end, &signal) != NATIVE_RIP)
		goto out;
	r->signal = signal;
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1 ||
	    cfi__breg(&ops[0], &reg, &r->cfa_off) != 0)
		goto out;
	r->cfa_reg = (uint8_t)reg;
	for (i = 0; i < NATIVE_NREGS; i++) {
		if (dwarf_frame_register(frame, i, mem, &ops, &nops) != 0 ||
		    cfi__reg(mem, ops, nops, &r->kind[i], &r->arg[i], &r->reg[i]) != 0)
			goto out;
		if (r->kind[i] != NATIVE_RULE_UNDEF)
			r->live |= 1u << i;
	}
	r->status = NATIVE_RULE_OK;
out:
	free(frame);
}

/* FNV-1a over a rule's bytes (cfi__fill zeroes it first: no stray padding). */
static uint64_t rule__hash(const struct native_rule *r)
{
	const unsigned char *b = (const unsigned char *)r;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < sizeof(*r); i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* The index of a rule equal to r, kept once per address space: most
 * sampled pcs share their CFI row with others (a function's body past its
 * prologue), and at 184 bytes a rule per pc was most of the unwinder's
 * memory on a long capture.  -ENOMEM or the index. */
static long rule__unique(struct native_space *s, const struct native_rule *r)
{
	uint64_t h = rule__hash(r), *slot;
	int had = intmap__slot(&s->rule_uniq, h, &slot);

	if (had < 0)
		return -ENOMEM;
	if (had && !memcmp(&s->rules[*slot], r, sizeof(*r)))
		return (long)*slot;
	/* New, or another rule with the same hash (then kept apart, not found
	 * by its hash: correct, only not shared). */
	if (VEC_GROW(s->rules, &s->rules_cap, s->nrules + 1) != 0) {
		if (!had)
			intmap__del(&s->rule_uniq, h);
		return -ENOMEM;
	}
	s->rules[s->nrules] = *r;
	if (!had)
		*slot = s->nrules;
	return (long)s->nrules++;
}

/* The rule of a lookup pc, filled on first use; NULL on -ENOMEM.  Valid
 * until the next call (the rules may move when they grow). */
const struct native_rule *native_space__rule(struct native_space *s, uint64_t pc)
{
	size_t m = (size_t)(pc ^ pc >> 6 ^ pc >> 12) & (NATIVE_RULE_MEMO - 1);
	struct native_rule r;
	uint64_t *slot;
	long idx;
	int had;

	/* A rule once made stays at its index (rules only grow). */
	if (s->rule_memo[m].idx1 && s->rule_memo[m].pc == pc)
		return &s->rules[s->rule_memo[m].idx1 - 1];
	had = intmap__slot(&s->rule_idx, pc, &slot);
	if (had < 0)
		return NULL;
	if (had == 0) {
		cfi__fill(s, pc, &r);
		idx = rule__unique(s, &r);
		if (idx < 0) {
			intmap__del(&s->rule_idx, pc);
			return NULL;
		}
		*slot = (uint64_t)idx;
	}
	s->rule_memo[m].pc = pc;
	s->rule_memo[m].idx1 = *slot + 1;
	return &s->rules[*slot];
}

/* Does the CFI of f's pc say it has no caller (return address undefined,
 * as glibc marks _start and the thread entry in clone)? */
int native__outermost(struct native_space *s, const struct native_frame *f)
{
	const struct native_rule *r = native_space__rule(s, f->activation ? f->pc : f->pc - 1);

	return r && r->status != NATIVE_RULE_NONE && r->ra_undef;
}
