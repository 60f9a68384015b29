/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * elf.h -- one ELF file opened with libelf: symbols, segments, sections,
 * build id, and reads of file-backed bytes at link-time addresses.
 *
 * Addresses here are link-time virtual addresses (st_value, p_vaddr).  A
 * mapped copy of the file sits at a load bias: runtime = bias + vaddr.  For
 * non-PIE executables the bias is 0; for PIE executables and shared objects
 * it is where the kernel or ld.so put the first PT_LOAD.  elf_file__load_bias
 * computes it from one /proc/PID/maps line.
 *
 * The file is read with pread (libelf ELF_C_READ), never mmap'd, so a file
 * truncated while it is open produces errors, not SIGBUS.  No global state:
 * each struct elf_file is independent; it is not thread-safe (the symbol
 * indexes are built lazily on first use).
 */
#ifndef LJSNAP_SYMTAB_ELF_H
#define LJSNAP_SYMTAB_ELF_H

#include <stddef.h>
#include <stdint.h>

struct elf_file;

/* One PT_LOAD program header. */
struct elf_segment {
	uint64_t vaddr;
	uint64_t offset;	/* file offset of vaddr */
	uint64_t filesz;	/* bytes backed by the file */
	uint64_t memsz;		/* bytes in memory (>= filesz; the rest is zero) */
	uint64_t align;
	uint32_t flags;		/* PF_R | PF_W | PF_X */
};

/* One section header. */
struct elf_section {
	const char *name;	/* owned by the elf_file */
	uint64_t addr;		/* sh_addr (0 if not allocated) */
	uint64_t offset;	/* sh_offset */
	uint64_t size;		/* sh_size */
	uint32_t type;		/* SHT_* */
	uint64_t flags;		/* SHF_* */
	size_t index;
};

/* One defined symbol (undefined imports are never reported). */
struct elf_symbol {
	const char *name;	/* owned by the elf_file */
	uint64_t value;		/* st_value: link-time address for code and data */
	uint64_t size;
	uint8_t type;		/* STT_* */
	uint8_t bind;		/* STB_* */
	uint8_t dynamic;	/* 1 if it came from .dynsym, 0 from .symtab */
	uint16_t shndx;
};

/* Open path (any ELF class); *out is set on success.  Returns 0, -errno
 * from open(2), or -ENOEXEC when the file is not a readable ELF file. */
int elf_file__open(const char *path, struct elf_file **out);
/* Open an ELF image held in memory (len bytes at data, copied; name stands
 * for its path, e.g. "[vdso]").  0, -ENOMEM or -ENOEXEC. */
int elf_file__open_mem(const void *data, size_t len, const char *name, struct elf_file **out);
void elf_file__delete(struct elf_file *ef);

const char *elf_file__path(const struct elf_file *ef);
uint16_t elf_file__type(const struct elf_file *ef);	/* ET_EXEC, ET_DYN, ... */
uint16_t elf_file__machine(const struct elf_file *ef);	/* EM_X86_64, ... */
int elf_file__class(const struct elf_file *ef);	/* ELFCLASS64 or ELFCLASS32 */
uint64_t elf_file__size(const struct elf_file *ef);	/* bytes on disk at open time */

/* GNU build id: copies up to cap bytes, returns its full length, or
 * -ENOENT when the file has none. */
int elf_file__build_id(const struct elf_file *ef, uint8_t *buf, size_t cap);

/* PT_LOAD segments in file order (*n set to their count). */
const struct elf_segment *elf_file__segments(const struct elf_file *ef, size_t *n);

/* Segment containing vaddr (in [vaddr, vaddr+memsz)), or NULL. */
const struct elf_segment *elf_file__segment_at(const struct elf_file *ef, uint64_t vaddr);

/* Conversions through the PT_LOAD segments (file-backed part only).
 * Return 0 or -ENOENT when no segment covers the address/offset. */
int elf_file__vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr, uint64_t *off);
int elf_file__offset_to_vaddr(const struct elf_file *ef, uint64_t off, uint64_t *vaddr);

/* Load bias of a mapping that starts at map_start with file offset map_off
 * (a /proc/PID/maps line): runtime address = bias + vaddr.  Returns 0 or
 * -ENOENT when no PT_LOAD segment contains map_off. */
int elf_file__load_bias(const struct elf_file *ef, uint64_t map_start, uint64_t map_off,
			uint64_t *bias);

/* Read len file-backed bytes at link-time address vaddr (all inside one
 * segment's filesz).  Returns 0, -ENOENT (not file-backed), or -EIO. */
int elf_file__read(const struct elf_file *ef, uint64_t vaddr, void *buf, size_t len);

/* Section by name.  Returns 0 or -ENOENT. */
int elf_file__section(struct elf_file *ef, const char *name, struct elf_section *out);

/* The contents of a section by name (owned by the elf_file, valid until
 * elf_file__delete).  Returns 0, -ENOENT, or -EIO (SHT_NOBITS or unreadable). */
int elf_file__section_data(struct elf_file *ef, const char *name, struct elf_section *sec,
			   const uint8_t **data, size_t *size);

/* Defined symbol by exact name; .symtab and .dynsym are both searched,
 * functions and objects first.  Returns 0 or -ENOENT. */
int elf_file__sym_lookup(struct elf_file *ef, const char *name, struct elf_symbol *out);

/* The symbol that contains vaddr (the smallest sized one; a zero-sized one
 * only on an exact match).  Returns 0 or -ENOENT. */
int elf_file__sym_at(struct elf_file *ef, uint64_t vaddr, struct elf_symbol *out);

/* Call cb for every defined symbol in address order; a non-zero return
 * from cb stops the walk and is returned. */
int elf_file__sym_foreach(struct elf_file *ef,
			  int (*cb)(const struct elf_symbol *sym, void *arg), void *arg);

/* Number of defined symbols (0 on error); 1 if .symtab (not only .dynsym) is present. */
size_t elf_file__nsyms(struct elf_file *ef);
int elf_file__has_symtab(struct elf_file *ef);

#endif /* LJSNAP_SYMTAB_ELF_H */
