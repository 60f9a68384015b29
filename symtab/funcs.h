/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * funcs.h -- the functions of an ELF file: one range per .eh_frame FDE,
 * each given the best name there is without debug information.
 *
 * A native frame is named by the function that contains its pc, never by
 * the pc: the ranges are the FDEs' [pc_lo, pc_hi) (sorted; an overlap is
 * cut where the next range starts).  Each range's name is, in this order:
 *   1. the symbol (.symtab, else .dynsym) that covers its start, within
 *      its st_size (FUNC_SYMTAB, FUNC_DYNSYM);
 *   2. a LuaJIT function named by the IR call table (symtab/ljnames.h),
 *      when the table points exactly at the range's start, or one the
 *      interpreter calls, when its calls fit the list of the source the
 *      IR call table names (ljnames__vmcalls), or the function whose
 *      code has the range's signature in the data of that source
 *      (symtab/ljsig.h: the builds Debian ships), or an entry of that
 *      source's library tables (symtab/ljlibcf.h), or one the calls
 *      between ranges pin to a single function of that source's call
 *      graph (symtab/ljcallgraph.h) (FUNC_LUAJIT);
 *   3. none (FUNC_UNNAMED): the caller shows it as module+0xSTART.
 * The symbolizer (symbolize.h) asks for a range only where no symbol covers
 * the address itself.
 *
 * Step 2 reads bytes that a capture's copy of the file (elfcopy.h) does not
 * hold: .rela.dyn, the IR call table's data, the machine code.  So the
 * recorder saves what it found (funcs__save) with the copy, and the ranges
 * of a copy are named by those saved names (funcs__new_saved), never by the
 * recovery run again.  Saved names, little-endian:
 *   version  the IR call table list that fitted, NUL-terminated
 *   vmcalls  u32, funcs__lj_vmcalls
 *   then per range named FUNC_LUAJIT, in address order: lo u64, hi - lo u32,
 *   the name, NUL-terminated.
 */
#ifndef LJSNAP_SYMTAB_FUNCS_H
#define LJSNAP_SYMTAB_FUNCS_H

#include <stddef.h>
#include <stdint.h>

struct elf_file;

enum func_how {
	FUNC_UNNAMED = 0,
	FUNC_SYMTAB,
	FUNC_DYNSYM,
	FUNC_LUAJIT,
	FUNC__MAX
};

struct func_range {
	uint64_t lo, hi;	/* [lo, hi), link-time addresses */
	const char *name;	/* owned by the elf_file or static; NULL if unnamed */
	enum func_how how;
};

struct funcs;

/* The ranges of ef (which must outlive them).  A file without .eh_frame
 * has none.  0, -ENOMEM, or -EINVAL when .eh_frame is malformed (the
 * ranges read before the bad record are kept: still 0). */
int funcs__new(struct elf_file *ef, struct funcs **out);
void funcs__delete(struct funcs *f);

/* The ranges of a copy of a file (elfcopy.h): ranges and symbols as
 * funcs__new, then instead of step 2 the names funcs__save gave for the
 * original (saved, len bytes; none when len is 0): a name goes to the range
 * of exactly its lo and size.  0, -ENOMEM, -EINVAL (saved is malformed). */
int funcs__new_saved(struct elf_file *ef, const uint8_t *saved, size_t len, struct funcs **out);

/* What step 2 found in the file of f, as the bytes above: *out (malloc'd,
 * the caller frees it) and *len, or NULL and 0 when no IR call table list
 * fitted (it found nothing).  0 or -ENOMEM. */
int funcs__save(const struct funcs *f, uint8_t **out, size_t *len);

/* 0 when saved (len bytes) is in the format above, else -EINVAL. */
int funcs__saved_check(const uint8_t *saved, size_t len);

/* The range containing vaddr, or NULL. */
const struct func_range *funcs__at(const struct funcs *f, uint64_t vaddr);

/* All ranges in address order (*n set to their count). */
const struct func_range *funcs__all(const struct funcs *f, size_t *n);

/* The IR call table's LuaJIT version (ljnames.h), or NULL if none fitted. */
const char *funcs__lj_version(const struct funcs *f);

/* The interpreter's call targets when they fitted that version's list
 * (ljnames__vmcalls), else 0. */
size_t funcs__lj_vmcalls(const struct funcs *f);

/* Ranges named by the calls between them (ljcallgraph.h), when the file was
 * read; 0 for a copy named by its saved names. */
size_t funcs__lj_cgnames(const struct funcs *f);

/* The signature (ljsig.h) of every range of f, from the code of ef (f's
 * file): sig[i], when has[i] is 1 (both as long as f has ranges).  0 or
 * -ENOMEM. */
int funcs__signatures(const struct funcs *f, struct elf_file *ef, uint64_t *sig, uint8_t *has);

/* Ranges named by their code's signature (ljsig.h), when the file was read;
 * 0 for a copy named by its saved names. */
size_t funcs__lj_signames(const struct funcs *f);

/* Ranges named from LuaJIT's library tables (ljlibcf.h), when the file was
 * read; 0 for a copy named by its saved names. */
size_t funcs__lj_cfnames(const struct funcs *f);

const char *func_how__name(enum func_how how);

#endif /* LJSNAP_SYMTAB_FUNCS_H */
