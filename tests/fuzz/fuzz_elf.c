/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_elf.c -- the ELF and symbol reader (symtab/elf.h) on a mutated ELF
 * image, opened in memory (elf_file__open_mem, as the vDSO of a capture is)
 * and added to an object cache (objcache__add_image): header, build id,
 * segments and address mapping, sections, every symbol and lookups by name
 * and address.
 */
#include <stdint.h>

#include "symtab/elf.h"
#include "symtab/objfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int one_sym(const struct elf_symbol *sym, void *arg)
{
	uint64_t *sum = arg;

	*sum += sym->value + sym->size + (uint8_t)sym->name[0];
	return 0;
}

static void one_file(struct elf_file *ef)
{
	static const char *const secs[] = { ".eh_frame", ".text", ".note.gnu.build-id",
					    ".gnu_debuglink", ".symtab", ".dynsym" };
	const struct elf_segment *seg;
	struct elf_section sec;
	struct elf_symbol sym;
	uint8_t id[64], buf[16];
	uint64_t sum = 0, off, bias;
	const uint8_t *d;
	size_t n, i, dn;

	(void)elf_file__type(ef);
	(void)elf_file__machine(ef);
	(void)elf_file__class(ef);
	(void)elf_file__size(ef);
	(void)elf_file__build_id(ef, id, sizeof(id));
	seg = elf_file__segments(ef, &n);
	for (i = 0; i < n && i < 64; i++) {
		(void)elf_file__segment_at(ef, seg[i].vaddr);
		(void)elf_file__vaddr_to_offset(ef, seg[i].vaddr + seg[i].filesz / 2, &off);
		(void)elf_file__offset_to_vaddr(ef, seg[i].offset, &off);
		(void)elf_file__load_bias(ef, 0x7f0000000000ull + seg[i].vaddr, seg[i].offset, &bias);
		(void)elf_file__read(ef, seg[i].vaddr, buf, sizeof(buf));
	}
	for (i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
		(void)elf_file__section(ef, secs[i], &sec);
		(void)elf_file__section_data(ef, secs[i], &sec, &d, &dn);
	}
	(void)elf_file__has_symtab(ef);
	(void)elf_file__nsyms(ef);
	(void)elf_file__sym_foreach(ef, one_sym, &sum);
	(void)elf_file__sym_lookup(ef, "main", &sym);
	if (elf_file__sym_lookup(ef, "lua_pcall", &sym) == 0)
		(void)elf_file__sym_at(ef, sym.value + 1, &sym);
	for (i = 0; i < n && i < 8; i++)
		(void)elf_file__sym_at(ef, seg[i].vaddr + seg[i].memsz / 3, &sym);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct objcache *c;
	struct elf_file *ef;

	if (elf_file__open_mem(data, size, "fuzz.so", &ef) == 0) {
		one_file(ef);
		elf_file__delete(ef);
	}
	c = objcache__new(NULL);
	/* As a capture's OBJECT record: with no build id, and with one (the
	 * input's first 20 bytes, so mostly a mismatch). */
	if (c)
		(void)objcache__add_image(c, "[vdso]", NULL, 0, data, size);
	if (c && size >= 20 && objcache__add_image(c, "[img]", data, 20, data, size) == 0)
		(void)objcache__image(c, "[img]", data, 20);
	objcache__delete(c);
	return 0;
}
