/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * funcs_int.h -- what funcs.c and funcs_sig.c share: the ranges of a file
 * and the naming steps that live in funcs_sig.c.  Not part of funcs.h's
 * interface.
 */
#ifndef LJSNAP_SYMTAB_FUNCS_INT_H
#define LJSNAP_SYMTAB_FUNCS_INT_H

#include <stddef.h>

#include "symtab/funcs.h"

struct elf_file;

struct funcs {
	struct func_range *v;
	size_t n, cap;
	const char *lj_version;
	size_t lj_vmcalls;	/* interpreter call targets that fitted a list */
	size_t lj_cgnames;	/* ranges named from the call graph */
	size_t lj_cfnames;	/* ranges named from the library tables */
	size_t lj_signames;	/* ranges named by their code's signature */
	char *saved;		/* funcs__new_saved: the names' bytes, owned */
};

/* Name the unnamed ranges whose code has a signature in the data of
 * f->lj_version (symtab/ljsig.h; funcs_sig.c says when), and set bysig[i]
 * (f->n entries, NULL before) to the name given range i.  0 or -ENOMEM. */
int funcs__name_sigs(struct funcs *f, struct elf_file *ef, const char **bysig);

/* Give (on) or take back the names bysig[] lists (NULL: none for that
 * range). */
void funcs__set_names(struct funcs *f, const char **bysig, int on);

#endif /* LJSNAP_SYMTAB_FUNCS_INT_H */
