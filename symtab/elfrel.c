/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * elfrel.c -- the dynamic relocations of an x86_64 ELF64 file; see elfrel.h.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/elf.h"
#include "symtab/elfrel.h"
#include "symtab/vec.h"

/* Order relocations by slot. */
static int elf_rel__cmp(const void *a, const void *b)
{
	const struct elf_rel *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Append one relocation. */
static int elf_rels__add(struct elf_rels *r, uint64_t off, uint64_t val, const char *sym)
{
	int err = VEC_GROW(r->v, &r->cap, r->n + 1);

	if (err)
		return err;
	r->v[r->n].off = off;
	r->v[r->n].val = val;
	r->v[r->n].sym = sym;
	r->n++;
	return 0;
}

/* The name of .dynsym entry i ("" when out of bounds). */
static const char *elf_rel__dynname(const uint8_t *sym, size_t nsym, const char *str, size_t nstr,
				uint64_t i)
{
	Elf64_Sym s;

	if (i >= nsym / sizeof(s))
		return "";
	memcpy(&s, sym + i * sizeof(s), sizeof(s));
	if (s.st_name >= nstr || !memchr(str + s.st_name, 0, nstr - s.st_name))
		return "";
	return str + s.st_name;
}

/* R_X86_64_RELATIVE, _64 and GLOB_DAT relocations of .rela.dyn. */
static int elf_rels__rela(struct elf_file *ef, struct elf_rels *r)
{
	struct elf_section sec;
	const uint8_t *rel, *sym = NULL, *str = NULL;	/* str: .dynstr's bytes */
	size_t nrel, nsym = 0, nstr = 0, i;
	int err;

	if (elf_file__section_data(ef, ".rela.dyn", &sec, &rel, &nrel) != 0)
		return 0;
	if (elf_file__section_data(ef, ".dynsym", &sec, &sym, &nsym) != 0 ||
	    elf_file__section_data(ef, ".dynstr", &sec, &str, &nstr) != 0)
		nsym = nstr = 0;
	for (i = 0; i + sizeof(Elf64_Rela) <= nrel; i += sizeof(Elf64_Rela)) {
		Elf64_Rela a;
		uint32_t type;

		memcpy(&a, rel + i, sizeof(a));
		type = ELF64_R_TYPE(a.r_info);
		if (type == R_X86_64_RELATIVE)
			err = elf_rels__add(r, a.r_offset, (uint64_t)a.r_addend, NULL);
		else if (type == R_X86_64_64 || type == R_X86_64_GLOB_DAT)
			err = elf_rels__add(r, a.r_offset, 0,
					    elf_rel__dynname(sym, nsym, (const char *)str, nstr,
							 ELF64_R_SYM(a.r_info)));
		else
			continue;
		if (err)
			return err;
	}
	return 0;
}

/* Relative relocations packed in .relr.dyn (the addend is in the slot). */
static int elf_rels__relr(struct elf_file *ef, struct elf_rels *r)
{
	struct elf_section sec;
	const uint8_t *d;
	size_t n, i;
	uint64_t where = 0, e, v;
	int err, bit;

	if (elf_file__section_data(ef, ".relr.dyn", &sec, &d, &n) != 0)
		return 0;
	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&e, d + i, 8);
		if (!(e & 1)) {		/* an address, then the next slot */
			if (elf_file__read(ef, e, &v, 8) == 0 && (err = elf_rels__add(r, e, v, NULL)))
				return err;
			where = e + 8;
			continue;
		}
		for (bit = 1; bit < 64; bit++) {	/* a bitmap of the next 63 slots */
			uint64_t a = where + (uint64_t)(bit - 1) * 8;

			if (((e >> bit) & 1) && elf_file__read(ef, a, &v, 8) == 0 &&
			    (err = elf_rels__add(r, a, v, NULL)))
				return err;
		}
		where += 63 * 8;
	}
	return 0;
}

/* The relocation of the slot at off, or NULL. */
const struct elf_rel *elf_rels__at(const struct elf_rels *r, uint64_t off)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->v[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n && r->v[lo].off == off ? &r->v[lo] : NULL;
}

/* Read both tables, sorted by slot; see elfrel.h. */
int elf_rels__read(struct elf_file *ef, struct elf_rels *r)
{
	int err;

	if (elf_file__class(ef) != ELFCLASS64 || elf_file__machine(ef) != EM_X86_64)
		return 0;
	if ((err = elf_rels__rela(ef, r)) != 0 || (err = elf_rels__relr(ef, r)) != 0)
		return err;
	if (r->n)
		qsort(r->v, r->n, sizeof(*r->v), elf_rel__cmp);
	return 0;
}

/* Free the relocations. */
void elf_rels__exit(struct elf_rels *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}
