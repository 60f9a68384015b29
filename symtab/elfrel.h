/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * elfrel.h -- the dynamic relocations of an x86_64 ELF64 file that fill
 * 8-byte slots: R_X86_64_RELATIVE (the target in the addend, or in the
 * slot for .relr.dyn), R_X86_64_64 and R_X86_64_GLOB_DAT (a .dynsym name).
 * What symtab/ljnames.c and symtab/ljlibcf.c find LuaJIT's tables by.
 */
#ifndef LJSNAP_SYMTAB_ELFREL_H
#define LJSNAP_SYMTAB_ELFREL_H

#include <stddef.h>
#include <stdint.h>

struct elf_file;

/* One relocated 8-byte slot: symbolic (sym) or relative (val = target). */
struct elf_rel {
	uint64_t off;
	uint64_t val;
	const char *sym;	/* the elf_file's .dynstr, or NULL */
};

struct elf_rels {
	struct elf_rel *v;	/* sorted by off */
	size_t n, cap;
};

/* Read ef's .rela.dyn and .relr.dyn into r (zeroed); 0 or -ENOMEM.  A file
 * without them, or not x86_64 ELF64, has none. */
int elf_rels__read(struct elf_file *ef, struct elf_rels *r);

/* The relocation of the slot at off, or NULL. */
const struct elf_rel *elf_rels__at(const struct elf_rels *r, uint64_t off);

void elf_rels__exit(struct elf_rels *r);

#endif /* LJSNAP_SYMTAB_ELFREL_H */
