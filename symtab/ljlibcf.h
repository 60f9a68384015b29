/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljlibcf.h -- names of the C functions of LuaJIT's standard library in a
 * stripped ELF file, from the library tables.
 *
 * buildvm writes, for each library (base, string, table, ffi, jit.util,
 * ...), an array lj_lib_cf_LIB[] of the C functions behind its Lua
 * functions (lj_libdef.h: lj_cf_string_format, lj_cf_table_sort, the fast
 * functions' C fallbacks lj_ffh_*), which lj_lib_register() reads.  In a
 * position-independent build each entry is a slot that an
 * R_X86_64_RELATIVE relocation fills with the function's address
 * (elfrel.h).  ljlibcf_names.h lists every array's entries per LuaJIT
 * source.  A list of n names fits a run of n consecutive relocated slots
 * when every slot points to the first address of a function (an FDE
 * range), at least one of those functions is already named (by a symbol,
 * ljnames.h or ljcallgraph.h) and every named one has the list's name at
 * that position, and no other function has one of the list's names.  A
 * list that fits exactly one place, and no other list there, names the
 * rest.  Nothing else is named.
 *
 * Pure: the ELF file and the ranges' names in, names out.
 */
#ifndef LJSNAP_SYMTAB_LJLIBCF_H
#define LJSNAP_SYMTAB_LJLIBCF_H

#include <stddef.h>
#include <stdint.h>

struct elf_rels;

/* What ljnames__libcf asks of the function ranges. */
struct ljcf_ranges {
	/* 0 when a range starts at addr (*name: its name, or NULL), else -ENOENT */
	int (*at)(void *arg, uint64_t addr, const char **name);
	/* non-zero when some range is named name */
	int (*has)(void *arg, const char *name);
	/* name the range at addr (name: a static string); 0 or -errno */
	int (*set)(void *arg, uint64_t addr, const char *name);
	void *arg;
};

/* Name the unnamed functions of the library tables that fit in a file's
 * relocations rels (elf_rels__read), for the LuaJIT source version
 * (ljnames__ircall's list name); *named counts them.  Returns 0 (also when
 * nothing fits or version has no lists), or what set returned. */
int ljnames__libcf(const struct elf_rels *rels, const char *version, const struct ljcf_ranges *r,
		   size_t *named);

#endif /* LJSNAP_SYMTAB_LJLIBCF_H */
