/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * symbolize.h -- native address -> symbol+offset, file:line, inlined
 * functions, demangled names.
 *
 * Symbols come from the object's .symtab (symtab/elf.h), else from its
 * separate debug file's .symtab, else from its .dynsym.  File, line and the
 * chain of inlined functions come from libbfd (bfd_find_nearest_line and
 * bfd_find_inliner_info) over the debug file, or the object itself when it
 * carries DWARF.  Where no symbol covers an address, the function around it
 * is its .eh_frame FDE (symtab/funcs.h): named by LuaJIT's IR call table when
 * it is one of LuaJIT's, else shown by its start (module+0xSTART), so that
 * one function is one frame.  C++ and Rust names are demangled with bfd_demangle.  Every
 * answer is cached per (object, address): a report asks about the same few
 * thousand pcs millions of times.  Results point into the symbolizer and stay
 * valid until symbolizer__delete.  Not thread-safe (nor is libbfd).
 *
 * libbfd prints DWARF complaints through a process-wide handler; the
 * symbolizer installs a silent one (the count of objects whose lines could
 * not be read is in symbolizer_stats instead).
 */
#ifndef LJSNAP_SYMTAB_SYMBOLIZE_H
#define LJSNAP_SYMTAB_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "symtab/objfile.h"
#include "symtab/procmap.h"

/* One level of the source position: a function and where in it. */
struct sym_line {
	const char *func;	/* demangled; NULL if DWARF does not name it */
	const char *file;	/* source file as DWARF names it; NULL if unknown */
	int line;		/* 0 if unknown */
};

enum sym_status {
	SYM_OK = 0,		/* symbol found */
	SYM_NO_SYMBOL,		/* object there, no symbol covers the address */
	SYM_NO_OBJECT,		/* object missing or another build (see obj->status) */
	SYM_ANON,		/* anonymous or [pseudo] mapping ([vdso], JIT code...) */
	SYM_NO_MAPPING,		/* address in no mapping of the process */
	SYM__MAX
};

struct sym_info {
	enum sym_status status;
	const char *name;	/* demangled symbol, or NULL */
	const char *raw_name;	/* symbol as in the ELF file, or NULL */
	uint64_t sym_addr;	/* symbol start (link-time) */
	uint64_t offset;	/* address - sym_addr */
	const char *module;	/* basename of the mapping's path ("" if anonymous) */
	const char *path;	/* mapping's path as recorded */
	uint64_t vaddr;		/* link-time address looked up */
	uint64_t file_off;	/* file offset of the address (from the mapping) */
	uint8_t bias_guessed;	/* binary missing: vaddr assumed = file offset */
	uint8_t from_debug;	/* symbol came from the separate debug file */
	uint8_t in_func;	/* no symbol: the address is in the FDE range at func_lo */
	uint8_t recovered;	/* name recovered without a symbol (symtab/funcs.h) */
	uint64_t func_lo;	/* start (link-time) of that range */
	const struct sym_line *lines;	/* innermost first: lines[0] is the code at the
					 * address (maybe inlined), lines[n-1] the function
					 * that contains it, at the call site of lines[n-2] */
	uint32_t nlines;	/* 0 when there is no line information */
	const struct objfile *obj;	/* NULL for anonymous mappings */
};

struct symbolizer_opts {
	int no_lines;		/* skip libbfd (symbols only) */
	int no_demangle;
	int no_inlines;		/* only the innermost file:line */
};

struct symbolizer_stats {
	uint64_t lookups, cache_hits;
	uint64_t status[SYM__MAX];
	uint64_t objects, objects_with_lines, objects_bfd_failed;
};

struct symbolizer;

/* Create / free (NULL opts = defaults).  NULL on -ENOMEM. */
struct symbolizer *symbolizer__new(const struct symbolizer_opts *o);
void symbolizer__delete(struct symbolizer *s);

/* Symbolize a link-time address of an object.  0 or -ENOMEM / -EINVAL. */
int symbolizer__obj(struct symbolizer *s, struct objfile *obj, uint64_t vaddr,
		    const struct sym_info **out);

/* Symbolize a runtime address of a process.  retaddr != 0: pc is a return
 * address (a caller frame), so pc - 1 is looked up (the call instruction:
 * its line and inline chain); vaddr, offset and file_off describe pc - 1.
 * 0 or -ENOMEM / -EINVAL; *out is never NULL on success (status says what
 * was found).  SYM_ANON / SYM_NO_MAPPING results live in a scratch slot valid
 * until the next call; all others until symbolizer__delete. */
int symbolizer__pc(struct symbolizer *s, const struct procmap *pm, uint64_t pc, int retaddr,
		   const struct sym_info **out);

/* Demangle a C++/Rust name (malloc'd result, or NULL if not mangled). */
char *symbolizer__demangle(const char *name);

/* Format "name+0xoff" (or "module+0xfileoff" without a symbol, the file
 * offset of the function's start when in_func) into buf.
 * Returns the length snprintf would have written. */
int sym_info__format(const struct sym_info *si, char *buf, size_t size);

const struct symbolizer_stats *symbolizer__stats(const struct symbolizer *s);
const char *sym_status__name(enum sym_status st);

#endif /* LJSNAP_SYMTAB_SYMBOLIZE_H */
