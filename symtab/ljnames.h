/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljnames.h -- names of LuaJIT's internal C functions in a stripped ELF file.
 *
 * LuaJIT's IR call table, lj_ir_callinfo[] (lj_ir.c, from IRCALLDEF in
 * lj_ircall.h), holds one { func, flags } entry of 16 bytes per line of
 * IRCALLDEF, in a fixed order per LuaJIT version.  Some entries point to
 * libm/libc functions (log10, exp, sin, ..., pow, atan2, ldexp), which a
 * position-independent build reaches through dynamic relocations that name
 * them (R_X86_64_64); the others through R_X86_64_RELATIVE relocations to
 * LuaJIT's own functions.  The named entries pin the table down: a list of
 * ljircall_names.h fits when every one of its library entries is at its
 * index, every relocation in the table agrees with the list, every other
 * slot is NULL, and the entry before the table holds no relocated pointer
 * (else a longer list may fit from further back).  The internal entries of
 * the one list that fits then name their targets (lj_str_new,
 * lj_tab_newkey, lj_strfmt_putfnum, ...).
 * A table that fits no list, or more than one, names nothing.
 *
 * The interpreter (one FDE, from vm_x64.dasc or vm_x86.dasc) calls some
 * fifty of LuaJIT's C functions directly (lj_meta_comp, lj_tab_get,
 * lj_gc_step, lj_dispatch_ins, ...), always in the same order for one
 * source: ljvmcall_names.h lists them per source, and ljnames__vmcalls
 * names the targets of a binary whose IR call table fitted that source's
 * list, when the targets already named (by symbols or the IR call table)
 * all agree with it.
 *
 * x86_64 ELF64 PIE executables and shared objects only (the relocations are
 * what is read); pure: the ELF file in, names out.
 */
#ifndef LJSNAP_SYMTAB_LJNAMES_H
#define LJSNAP_SYMTAB_LJNAMES_H

#include <stddef.h>
#include <stdint.h>

struct elf_file;
struct elf_rels;

/* Call cb(addr, name, arg) for every LuaJIT function that the IR call table
 * of ef names (addr: link-time address of the function; name: a static
 * string); a non-zero return from cb stops and is returned.  The table is
 * found in ef's relocations r (elf_rels__read).  *version (may be NULL) is
 * set to the list that fitted; a NULL cb only finds the table.  Returns 0,
 * or -ENOENT when ef has no table that fits exactly one list (or is not
 * x86_64 ELF64). */
int ljnames__ircall(struct elf_file *ef, const struct elf_rels *r,
		    int (*cb)(uint64_t addr, const char *name, void *arg), void *arg,
		    const char **version);

/* names[0 .. n): the distinct targets of the interpreter's direct calls in
 * the order of their first call, each named (by a symbol, the IR call
 * table) or NULL; version: what ljnames__ircall said.  When version has a
 * list of n names that agrees with every non-NULL names[i] (at least 8 of
 * them), the NULL ones are set to the list's (static strings); returns 0,
 * else -ENOENT and names is unchanged. */
int ljnames__vmcalls(const char *version, const char **names, size_t n);

#endif /* LJSNAP_SYMTAB_LJNAMES_H */
