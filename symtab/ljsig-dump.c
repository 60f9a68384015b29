/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljsig-dump.c -- the signatures (symtab/ljsig.h) of the functions of an
 * unstripped ELF file, for symtab/ljsig-gen.py:
 *
 *   ljsig-dump FILE
 *
 * prints "HASH NAME" (HASH in 16 hex digits) for every .eh_frame range
 * that one .symtab symbol covers from its first address to its last (not
 * the interpreter, one range of many symbols) and whose code has a
 * signature.  Exit status 1 when FILE cannot be read or has no .symtab.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "symtab/elf.h"
#include "symtab/funcs.h"

int main(int argc, char **argv)
{
	struct elf_file *ef = NULL;
	struct funcs *f = NULL;
	const struct func_range *v;
	uint64_t *sig = NULL;
	uint8_t *has = NULL;
	size_t n, i;
	int ret = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: ljsig-dump FILE\n");
		return 2;
	}
	if (elf_file__open(argv[1], &ef) != 0 || !elf_file__has_symtab(ef) ||
	    funcs__new(ef, &f) != 0 || !f) {
		fprintf(stderr, "ljsig-dump: %s: cannot read it, or it has no .symtab\n", argv[1]);
		goto out;
	}
	v = funcs__all(f, &n);
	sig = malloc((n + 1) * sizeof(*sig));
	has = malloc(n + 1);
	if (!sig || !has || funcs__signatures(f, ef, sig, has) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		struct elf_symbol s;

		if (has[i] && v[i].how == FUNC_SYMTAB && elf_file__sym_at(ef, v[i].hi - 1, &s) == 0 &&
		    s.value == v[i].lo)
			printf("%016" PRIx64 " %s\n", sig[i], v[i].name);
	}
	ret = 0;
out:
	free(sig);
	free(has);
	funcs__delete(f);
	elf_file__delete(ef);
	return ret;
}
