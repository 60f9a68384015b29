/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * elfcopy.h -- what report needs from one ELF file, copied so that a capture
 * can carry it (docs/capture-format.md, EMBED), and the file rebuilt from
 * the copy on another machine.
 *
 * The copy is a sparse image of the file: byte ranges ("extents") at their
 * file offsets.  It holds the ELF header, the program headers (load biases,
 * PT_GNU_EH_FRAME, PT_NOTE), the section header table, and the contents of
 * the kept sections: the build id notes and .gnu_debuglink, .shstrtab, the
 * unwind tables (.eh_frame, .eh_frame_hdr, .debug_frame), the symbol tables
 * (.symtab, .dynsym, their string tables, .gnu_debugdata) and, on request,
 * the DWARF line and inline information (.debug_*).  Every other section
 * stays in the section header table as SHT_NOBITS, as in a separate debug
 * file (objcopy --only-keep-debug), so that section indexes (st_shndx) keep
 * their meaning and no reader takes the missing bytes for zeros.  Code and
 * read-only data are not copied: CFI unwinding needs none of them.
 *
 * The names symtab/funcs.h recovers for LuaJIT's internal functions in a
 * stripped build come from bytes the copy leaves out (relocations, data,
 * code), so the copy also carries them as funcs__save wrote them
 * (elfcopy__names): the ranges of the rebuilt file are named from those
 * (funcs__new_saved), as the original's are.
 *
 * Rebuilt (elfcopy__memfd), the image is a file of the original size whose
 * holes read as zeros; libelf, libdw and libbfd open it like the original.
 */
#ifndef LJSNAP_SYMTAB_ELFCOPY_H
#define LJSNAP_SYMTAB_ELFCOPY_H

#include <stddef.h>
#include <stdint.h>

/* What a copy holds (bits). */
#define ELFCOPY_UNWIND	0x1u	/* .eh_frame, .eh_frame_hdr, .debug_frame */
#define ELFCOPY_SYMBOLS	0x2u	/* .symtab, .dynsym, their strings, .gnu_debugdata */
#define ELFCOPY_DEBUG	0x4u	/* .debug_* other than .debug_frame: lines, inlines */

#define ELFCOPY_MAX_EXTENTS	4096	/* ranges in one copy (a file has < 100 sections) */

struct elfcopy_extent {
	uint64_t offset, len;		/* file offset, bytes */
};

struct elfcopy {
	uint64_t size;			/* the file's size */
	uint32_t what;			/* ELFCOPY_* bits actually found */
	struct elfcopy_extent *ext;	/* by offset, not overlapping */
	size_t n;
	uint8_t *data;			/* the extents' bytes, in order */
	size_t len;			/* sum of the extents' lengths */
	uint8_t *names;			/* funcs__save's bytes for the file, or NULL */
	size_t names_len;
};

/* Copy from the ELF file open at fd what `what` asks for (ELFCOPY_UNWIND
 * and ELFCOPY_SYMBOLS are always taken).  0, -ENOEXEC (not ELF, or its
 * headers are out of the file), -E2BIG (too many extents), -errno. */
int elfcopy__extract(int fd, uint32_t what, struct elfcopy *out);

/* Take a copy read back from a capture: the extents (n of them) and their
 * bytes (len in all), both copied.  0, -EINVAL (extents out of order, past
 * size, or not adding up to len), -ENOMEM. */
int elfcopy__init(struct elfcopy *c, uint64_t size, uint32_t what,
		  const struct elfcopy_extent *ext, size_t n, const uint8_t *data, size_t len);

void elfcopy__exit(struct elfcopy *c);

struct elf_file;

/* Add to c the names funcs.h recovers from ef, the file c was copied from
 * (funcs__save; none when nothing was recovered).  0 or -ENOMEM (-EINVAL
 * when ef's .eh_frame cannot be read: no names then). */
int elfcopy__names(struct elfcopy *c, struct elf_file *ef);

/* Take names read back from a capture (len bytes, copied; len 0: none).
 * 0, -EINVAL (not in funcs__save's format), -ENOMEM. */
int elfcopy__set_names(struct elfcopy *c, const uint8_t *names, size_t len);

/* Rebuild the file in a new memfd (sparse, close-on-exec); *fd is set.
 * 0 or -errno. */
int elfcopy__memfd(const struct elfcopy *c, int *fd);

#endif /* LJSNAP_SYMTAB_ELFCOPY_H */
