/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ehframe.c -- bounded .eh_frame parser and LuaJIT VM FDE finder.
 *
 * Format: LSB "Exception Frames" (.eh_frame) on top of DWARF CFI.  Every
 * read goes through a cursor that knows its end; a record whose length,
 * CIE pointer or encoded pointer leaves the section makes the walk fail.
 */
#include <errno.h>
#include <string.h>

#include "symtab/ehframe.h"

#define EHF_MAX_RECORDS	(1u << 22)	/* walk bound: far above any real section */
#define EHF_MAX_OPS	(1u << 16)	/* CFA ops decoded per program */

/* -- Cursor -------------------------------------------------------------- */

struct ehf_cur {
	const uint8_t *p, *end;
	int bad;		/* set by any read past end */
};

/* One byte, or 0 with bad set. */
static uint8_t ehf_cur__u8(struct ehf_cur *c)
{
	if (c->bad || c->p >= c->end) {
		c->bad = 1;
		return 0;
	}
	return *c->p++;
}

/* n-byte little-endian unsigned value (n <= 8). */
static uint64_t ehf_cur__un(struct ehf_cur *c, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = 1;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

/* Sign-extend an n-byte value. */
static int64_t ehf__sext(uint64_t v, unsigned n)
{
	unsigned sh = 64 - 8 * n;

	return n >= 8 ? (int64_t)v : (int64_t)(v << sh) >> sh;
}

/* ULEB128 (at most 10 bytes). */
static uint64_t ehf_cur__uleb(struct ehf_cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0, i;

	for (i = 0; i < 10; i++) {
		uint8_t b = ehf_cur__u8(c);

		if (c->bad)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	c->bad = 1;
	return 0;
}

/* SLEB128 (at most 10 bytes). */
static int64_t ehf_cur__sleb(struct ehf_cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0, i;

	for (i = 0; i < 10; i++) {
		uint8_t b = ehf_cur__u8(c);

		if (c->bad)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return (int64_t)v;
		}
	}
	c->bad = 1;
	return 0;
}

/* Skip n bytes. */
static void ehf_cur__skip(struct ehf_cur *c, uint64_t n)
{
	if (c->bad || (uint64_t)(c->end - c->p) < n) {
		c->bad = 1;
		return;
	}
	c->p += n;
}

/* -- Pointers and records ------------------------------------------------ */

/* Decode one DW_EH_PE-encoded pointer; value_only skips the application
 * (used for FDE pc_range).  Returns 0 or -EINVAL. */
static int ehf__read_ptr(const struct ehframe *eh, struct ehf_cur *c, uint8_t enc,
			 int value_only, uint64_t *out)
{
	uint64_t here, v;

	if (enc == EHF_PE_OMIT) {
		*out = 0;
		return 0;
	}
	if ((enc & 0x70) == EHF_PE_ALIGNED) {
		uint64_t a = eh->addr_size ? eh->addr_size : 8;
		uint64_t pos = eh->vaddr + (uint64_t)(c->p - eh->data);

		ehf_cur__skip(c, (a - pos % a) % a);
	}
	here = eh->vaddr + (uint64_t)(c->p - eh->data);
	switch (enc & 0x0f) {
	case EHF_PE_ABSPTR:	v = ehf_cur__un(c, eh->addr_size ? eh->addr_size : 8); break;
	case EHF_PE_ULEB128:	v = ehf_cur__uleb(c); break;
	case EHF_PE_UDATA2:	v = ehf_cur__un(c, 2); break;
	case EHF_PE_UDATA4:	v = ehf_cur__un(c, 4); break;
	case EHF_PE_UDATA8:	v = ehf_cur__un(c, 8); break;
	case EHF_PE_SLEB128:	v = (uint64_t)ehf_cur__sleb(c); break;
	case EHF_PE_SDATA2:	v = (uint64_t)ehf__sext(ehf_cur__un(c, 2), 2); break;
	case EHF_PE_SDATA4:	v = (uint64_t)ehf__sext(ehf_cur__un(c, 4), 4); break;
	case EHF_PE_SDATA8:	v = ehf_cur__un(c, 8); break;
	default:
		return -EINVAL;
	}
	if (c->bad)
		return -EINVAL;
	if (!value_only) {
		switch (enc & 0x70) {
		case 0:
		case EHF_PE_ALIGNED:	break;
		case EHF_PE_PCREL:	v += here; break;
		case EHF_PE_TEXTREL:	v += eh->text_base; break;
		case EHF_PE_DATAREL:	v += eh->data_base; break;
		case EHF_PE_FUNCREL:	break;	/* no function context here */
		default:
			return -EINVAL;
		}
	}
	*out = v;
	return 0;
}

/* Record header at off: body cursor, CIE id and its section offset, next record.
 * Returns 0, 1 for a zero terminator, or -EINVAL. */
static int ehf__record(const struct ehframe *eh, uint64_t off, struct ehf_cur *body,
		       uint64_t *id, uint64_t *id_pos, uint64_t *next)
{
	struct ehf_cur c;
	uint64_t len;
	unsigned idsz = 4;

	if (off >= eh->size || eh->size - off < 4)
		return -EINVAL;
	c.p = eh->data + off;
	c.end = eh->data + eh->size;
	c.bad = 0;
	len = ehf_cur__un(&c, 4);
	if (len == 0)
		return 1;
	if (len == 0xffffffffu) {
		len = ehf_cur__un(&c, 8);
		idsz = 8;
	}
	if (c.bad || len < idsz || len > (uint64_t)(c.end - c.p))
		return -EINVAL;
	body->p = c.p;
	body->end = c.p + len;
	body->bad = 0;
	*next = (uint64_t)(body->end - eh->data);
	*id_pos = (uint64_t)(body->p - eh->data);
	*id = ehf_cur__un(body, idsz);
	return body->bad ? -EINVAL : 0;
}

/* Set the usual x86_64 defaults. */
void ehframe__init(struct ehframe *eh, const uint8_t *data, size_t size, uint64_t vaddr)
{
	memset(eh, 0, sizeof(*eh));
	eh->data = data;
	eh->size = size;
	eh->vaddr = vaddr;
	eh->addr_size = 8;
}

/* Parse the CIE at off. */
int ehframe__parse_cie(const struct ehframe *eh, uint64_t off, struct ehf_cie *cie)
{
	struct ehf_cur c, aug;
	uint64_t id, id_pos, next, auglen;
	const char *a;
	size_t alen;
	int err;

	memset(cie, 0, sizeof(*cie));
	err = ehf__record(eh, off, &c, &id, &id_pos, &next);
	if (err)
		return -EINVAL;
	if (id != 0)
		return -EINVAL;
	cie->offset = off;
	cie->fde_enc = EHF_PE_ABSPTR;
	cie->lsda_enc = EHF_PE_OMIT;
	cie->per_enc = EHF_PE_OMIT;
	cie->version = ehf_cur__u8(&c);
	if (c.bad || (cie->version != 1 && cie->version != 3 && cie->version != 4))
		return -EINVAL;
	a = (const char *)c.p;
	alen = strnlen(a, (size_t)(c.end - c.p));
	if (alen == (size_t)(c.end - c.p))
		return -EINVAL;
	memcpy(cie->aug, a, alen < sizeof(cie->aug) - 1 ? alen : sizeof(cie->aug) - 1);
	c.p += alen + 1;
	if (alen >= 2 && a[0] == 'e' && a[1] == 'h')
		ehf_cur__skip(&c, eh->addr_size ? eh->addr_size : 8);
	if (cie->version == 4)
		ehf_cur__skip(&c, 2);	/* address_size, segment_selector_size */
	cie->code_align = ehf_cur__uleb(&c);
	cie->data_align = ehf_cur__sleb(&c);
	cie->ra_reg = cie->version == 1 ? ehf_cur__u8(&c) : ehf_cur__uleb(&c);
	if (c.bad)
		return -EINVAL;
	if (a[0] == 'z') {
		size_t i;

		auglen = ehf_cur__uleb(&c);
		if (c.bad || auglen > (uint64_t)(c.end - c.p))
			return -EINVAL;
		aug.p = c.p;
		aug.end = c.p + auglen;
		aug.bad = 0;
		for (i = 1; i < alen; i++) {
			if (a[i] == 'P') {
				uint64_t v;

				cie->per_enc = ehf_cur__u8(&aug);
				if (aug.bad || ehf__read_ptr(eh, &aug, cie->per_enc, 0, &v))
					return -EINVAL;
				cie->personality = v;
				cie->has_personality = 1;
			} else if (a[i] == 'R') {
				cie->fde_enc = ehf_cur__u8(&aug);
			} else if (a[i] == 'L') {
				cie->lsda_enc = ehf_cur__u8(&aug);
			} else if (a[i] == 'S') {
				cie->signal_frame = 1;
			} else if (a[i] == 'B' || a[i] == 'G') {
				continue;	/* arm64 BTI / MTE: no data */
			} else {
				break;		/* unknown: the length lets us skip the rest */
			}
			if (aug.bad)
				return -EINVAL;
		}
		c.p = aug.end;
	} else if (alen > 0 && !(alen == 2 && a[0] == 'e' && a[1] == 'h')) {
		return -EINVAL;		/* unknown augmentation without 'z': cannot parse */
	}
	cie->insns = c.p;
	cie->insns_len = (size_t)(c.end - c.p);
	return 0;
}

/* Parse the FDE whose body is at c (id and id_pos from its header). */
static int ehf__parse_fde(const struct ehframe *eh, uint64_t off, struct ehf_cur *c,
			  uint64_t id, uint64_t id_pos, const struct ehf_cie *cie,
			  struct ehf_fde *fde)
{
	uint64_t range;

	memset(fde, 0, sizeof(*fde));
	fde->offset = off;
	fde->cie_offset = id_pos - id;
	if (ehf__read_ptr(eh, c, cie->fde_enc, 0, &fde->pc_lo) ||
	    ehf__read_ptr(eh, c, cie->fde_enc & 0x0f, 1, &range))
		return -EINVAL;
	fde->pc_hi = fde->pc_lo + range;
	if (fde->pc_hi < fde->pc_lo)
		return -EINVAL;
	if (cie->aug[0] == 'z') {
		uint64_t auglen = ehf_cur__uleb(c);
		struct ehf_cur aug;

		if (c->bad || auglen > (uint64_t)(c->end - c->p))
			return -EINVAL;
		aug.p = c->p;
		aug.end = c->p + auglen;
		aug.bad = 0;
		if (strchr(cie->aug, 'L') && cie->lsda_enc != EHF_PE_OMIT && auglen) {
			if (ehf__read_ptr(eh, &aug, cie->lsda_enc, 0, &fde->lsda))
				return -EINVAL;
			fde->has_lsda = fde->lsda != 0;
		}
		c->p = aug.end;
	}
	fde->insns = c->p;
	fde->insns_len = (size_t)(c->end - c->p);
	return 0;
}

/* Walk every FDE. */
int ehframe__foreach_fde(const struct ehframe *eh,
			 int (*cb)(const struct ehf_fde *fde, const struct ehf_cie *cie, void *arg),
			 void *arg)
{
	struct ehf_cie cie;
	uint64_t off = 0, cie_off = UINT64_MAX;
	unsigned n;

	for (n = 0; n < EHF_MAX_RECORDS && off < eh->size; n++) {
		struct ehf_cur c;
		struct ehf_fde fde;
		uint64_t id, id_pos, next;
		int r = ehf__record(eh, off, &c, &id, &id_pos, &next);

		if (r == 1)
			return 0;	/* zero terminator */
		if (r)
			return -EINVAL;
		if (id != 0) {
			if (id > id_pos)
				return -EINVAL;
			if (id_pos - id != cie_off) {
				cie_off = UINT64_MAX;
				if (ehframe__parse_cie(eh, id_pos - id, &cie))
					return -EINVAL;
				cie_off = id_pos - id;
			}
			if (ehf__parse_fde(eh, off, &c, id, id_pos, &cie, &fde))
				return -EINVAL;
			r = cb(&fde, &cie, arg);
			if (r)
				return r;
		}
		off = next;
	}
	return 0;
}

/* -- CFA programs -------------------------------------------------------- */

/* Record "reg saved at CFA+off"; registers past rip count as unusual. */
static void ehf__save(struct ehf_rules *r, uint64_t reg, int64_t off, int count)
{
	if (reg < EHF_NREGS) {
		r->saved[reg] = 1;
		r->off[reg] = off;
	} else if (count) {
		r->nother++;
	}
}

/* factor * data_align, the offset a CFA rule stores, in wrapping 64-bit
 * arithmetic: a hostile factor or alignment would overflow a signed product
 * (undefined; found by tests/fuzz/fuzz_ehframe.c).  Any sane value is
 * unchanged, and nonsense stays nonsense without being undefined. */
static int64_t ehf__scale(uint64_t factor, int64_t data_align)
{
	return (int64_t)(factor * (uint64_t)data_align);
}

/* Long on purpose: one switch over the DWARF CFA opcodes reads best whole. */
/* Run one CFA program.  apply: update the rules until the first advance;
 * count: tally ops into nadvance/nother.  init: the CIE rules (restore ops). */
static int ehf__run(const struct ehf_cie *cie, const uint8_t *insns, size_t len,
		    struct ehf_rules *r, const struct ehf_rules *init, int count)
{
	struct ehf_cur c = { insns, insns + len, 0 };
	int apply = 1;
	unsigned n;

	for (n = 0; n < EHF_MAX_OPS && c.p < c.end; n++) {
		uint8_t op = ehf_cur__u8(&c);
		uint64_t reg = 0, u;
		int64_t s;
		int other = 0;

		switch (op >> 6) {
		case 1:				/* DW_CFA_advance_loc */
			apply = 0;
			r->nadvance += count;
			continue;
		case 2:				/* DW_CFA_offset */
			u = ehf_cur__uleb(&c);
			if (c.bad)
				return -EINVAL;
			if (apply)
				ehf__save(r, op & 0x3f, ehf__scale(u, cie->data_align), count);
			continue;
		case 3:				/* DW_CFA_restore */
			reg = op & 0x3f;
			if (apply && reg < EHF_NREGS && init) {
				r->saved[reg] = init->saved[reg];
				r->off[reg] = init->off[reg];
			}
			other = 1;
			break;
		default:
			switch (op) {
			case 0x00: break;				/* nop */
			case 0x01: r->nadvance += count; return 0;	/* set_loc: stop here */
			case 0x02: ehf_cur__skip(&c, 1); apply = 0; r->nadvance += count; break;
			case 0x03: ehf_cur__skip(&c, 2); apply = 0; r->nadvance += count; break;
			case 0x04: ehf_cur__skip(&c, 4); apply = 0; r->nadvance += count; break;
			case 0x05:					/* offset_extended */
				reg = ehf_cur__uleb(&c);
				u = ehf_cur__uleb(&c);
				if (apply)
					ehf__save(r, reg, ehf__scale(u, cie->data_align), count);
				break;
			case 0x11:					/* offset_extended_sf */
				reg = ehf_cur__uleb(&c);
				s = ehf_cur__sleb(&c);
				if (apply)
					ehf__save(r, reg, ehf__scale((uint64_t)s, cie->data_align), count);
				break;
			case 0x2f:					/* GNU_negative_offset_extended */
				reg = ehf_cur__uleb(&c);
				u = ehf_cur__uleb(&c);
				if (apply)
					ehf__save(r, reg, ehf__scale(0 - u, cie->data_align), count);
				break;
			case 0x06: case 0x07: case 0x08:		/* restore_ext, undefined, same_value */
				reg = ehf_cur__uleb(&c);
				if (apply && reg < EHF_NREGS)
					r->saved[reg] = 0;
				other = 1;
				break;
			case 0x09:					/* register */
				reg = ehf_cur__uleb(&c);
				(void)ehf_cur__uleb(&c);
				if (apply && reg < EHF_NREGS)
					r->saved[reg] = 0;
				other = 1;
				break;
			case 0x0a: case 0x0b:				/* remember/restore_state */
				other = 1;
				break;
			case 0x0c:					/* def_cfa */
				reg = ehf_cur__uleb(&c);
				u = ehf_cur__uleb(&c);
				if (apply) {
					r->cfa_reg = (uint32_t)reg;
					r->cfa_off = (int64_t)u;
					r->cfa_is_expr = 0;
				}
				break;
			case 0x12:					/* def_cfa_sf */
				reg = ehf_cur__uleb(&c);
				s = ehf_cur__sleb(&c);
				if (apply) {
					r->cfa_reg = (uint32_t)reg;
					r->cfa_off = ehf__scale((uint64_t)s, cie->data_align);
					r->cfa_is_expr = 0;
				}
				break;
			case 0x0d:					/* def_cfa_register */
				reg = ehf_cur__uleb(&c);
				if (apply)
					r->cfa_reg = (uint32_t)reg;
				break;
			case 0x0e:					/* def_cfa_offset */
				u = ehf_cur__uleb(&c);
				if (apply)
					r->cfa_off = (int64_t)u;
				break;
			case 0x13:					/* def_cfa_offset_sf */
				s = ehf_cur__sleb(&c);
				if (apply)
					r->cfa_off = ehf__scale((uint64_t)s, cie->data_align);
				break;
			case 0x0f:					/* def_cfa_expression */
				ehf_cur__skip(&c, ehf_cur__uleb(&c));
				if (apply)
					r->cfa_is_expr = 1;
				other = 1;
				break;
			case 0x10: case 0x16:				/* expression, val_expression */
				reg = ehf_cur__uleb(&c);
				ehf_cur__skip(&c, ehf_cur__uleb(&c));
				if (apply && reg < EHF_NREGS)
					r->saved[reg] = 0;
				other = 1;
				break;
			case 0x14:					/* val_offset */
				reg = ehf_cur__uleb(&c);
				(void)ehf_cur__uleb(&c);
				other = 1;
				break;
			case 0x15:					/* val_offset_sf */
				reg = ehf_cur__uleb(&c);
				(void)ehf_cur__sleb(&c);
				other = 1;
				break;
			case 0x2e:					/* GNU_args_size */
				(void)ehf_cur__uleb(&c);
				other = 1;
				break;
			default:
				return -EINVAL;
			}
		}
		if (c.bad)
			return -EINVAL;
		if (other)
			r->nother += count;
	}
	return c.bad ? -EINVAL : 0;
}

/* Rules at the FDE's first address. */
int ehframe__initial_rules(const struct ehf_cie *cie, const struct ehf_fde *fde,
			   struct ehf_rules *out)
{
	struct ehf_rules init;
	int err;

	memset(out, 0, sizeof(*out));
	err = ehf__run(cie, cie->insns, cie->insns_len, out, NULL, 0);
	if (err)
		return err;
	out->nadvance = out->nother = 0;
	init = *out;
	return ehf__run(cie, fde->insns, fde->insns_len, out, &init, 1);
}

/* -- LuaJIT's VM --------------------------------------------------------- */

struct ehf_vm_ctx {
	const struct ehframe *eh;
	struct ehf_lj_vm *vm;
	int found;
};

/* Does this FDE look like buildvm's interpreter FDE?  Sets *no_unwind. */
static int ehf__is_lj_vm(const struct ehf_fde *fde, const struct ehf_cie *cie,
			 uint32_t *cfa, int *no_unwind)
{
	static const struct { int reg; int64_t off; } need[] = {
		{ EHF_REG_RBP, -16 }, { EHF_REG_RBX, -24 }, { EHF_REG_R15, -32 }, { EHF_REG_R14, -40 },
	};
	struct ehf_rules r;
	size_t i;
	int r12, r13, nsaved = 0;

	if (!cie->has_personality || fde->pc_hi - fde->pc_lo < 4096)
		return 0;
	if (ehframe__initial_rules(cie, fde, &r) || r.nadvance || r.nother || r.cfa_is_expr)
		return 0;
	if (r.cfa_reg != EHF_REG_RSP || r.cfa_off < 64 || r.cfa_off > 256 || r.cfa_off % 16)
		return 0;
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!r.saved[need[i].reg] || r.off[need[i].reg] != need[i].off)
			return 0;
	r12 = r.saved[EHF_REG_R12] && r.off[EHF_REG_R12] == -56;
	r13 = r.saved[EHF_REG_R13] && r.off[EHF_REG_R13] == -48;
	if (r12 != r13)
		return 0;
	for (i = 0; i < EHF_NREGS; i++)
		nsaved += r.saved[i];
	/* rip (from the CIE), the four above, and r12/r13 when NO_UNWIND. */
	if (nsaved != 5 + 2 * r12 || !r.saved[EHF_REG_RIP])
		return 0;
	*cfa = (uint32_t)r.cfa_off;
	*no_unwind = r12;
	return 1;
}

/* foreach callback: keep the largest VM-like FDE. */
static int ehf__vm_cb(const struct ehf_fde *fde, const struct ehf_cie *cie, void *arg)
{
	struct ehf_vm_ctx *x = arg;
	uint32_t cfa;
	int nu;

	if (!ehf__is_lj_vm(fde, cie, &cfa, &nu))
		return 0;
	x->vm->ncandidates++;
	if (x->found && fde->pc_hi - fde->pc_lo <= x->vm->main_hi - x->vm->lo)
		return 0;
	x->found = 1;
	x->vm->lo = fde->pc_lo;
	x->vm->hi = x->vm->main_hi = fde->pc_hi;
	x->vm->cfa_offset = cfa;
	x->vm->no_unwind = (uint8_t)nu;
	x->vm->fde_offset = fde->offset;
	x->vm->personality = cie->personality;
	return 0;
}

/* foreach callback: the rbp-based lj_vm_ffi_call FDE right after the VM. */
static int ehf__ffi_cb(const struct ehf_fde *fde, const struct ehf_cie *cie, void *arg)
{
	struct ehf_vm_ctx *x = arg;
	struct ehf_rules r;

	if (fde->pc_lo != x->vm->main_hi || fde->pc_hi - fde->pc_lo > 4096)
		return 0;
	if (ehframe__initial_rules(cie, fde, &r) || r.cfa_reg != EHF_REG_RBP ||
	    !r.saved[EHF_REG_RBP] || r.off[EHF_REG_RBP] != -16)
		return 0;
	x->vm->has_ffi = 1;
	x->vm->hi = fde->pc_hi;
	x->vm->ffi_fde_offset = fde->offset;
	return 1;
}

/* Find the interpreter FDE and, if present, the lj_vm_ffi_call FDE. */
int ehframe__find_lj_vm(const struct ehframe *eh, struct ehf_lj_vm *out)
{
	struct ehf_vm_ctx x = { eh, out, 0 };
	int err;

	memset(out, 0, sizeof(*out));
	err = ehframe__foreach_fde(eh, ehf__vm_cb, &x);
	if (!x.found)
		return err < 0 ? err : -ENOENT;
	/* A malformed record after the VM FDE only costs the ffi_call part. */
	(void)ehframe__foreach_fde(eh, ehf__ffi_cb, &x);
	return 0;
}
