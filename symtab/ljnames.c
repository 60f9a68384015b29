/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljnames.c -- LuaJIT's internal function names from lj_ir_callinfo[], read
 * through the dynamic relocations of a stripped ELF file.  See ljnames.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/elf.h"
#include "symtab/elfrel.h"
#include "symtab/ljnames.h"
#include "symtab/vec.h"

#include "symtab/ljircall_names.h"
#include "symtab/ljvmcall_names.h"

#define LJN_ENTRY	16	/* sizeof(CCallInfo) on 64-bit targets (lj_ircall.h) */
#define LJN_MIN_LIB	12	/* library entries that must be found at their index */

static const struct {
	const char *version;
	const char *const *names;
} ljirc_lists[] = {
	{ "LuaJIT 2.1 (2022-03)", ljirc_upstream_2022 },
	{ "OpenResty luajit2 2.1-20230119", ljirc_luajit2_20230119 },
};

#define LJN_MIN_ANCHORS	8	/* interpreter targets already named that must agree */

/* The interpreter's call lists, by the IR call table list of the same source. */
static const struct {
	const char *version;
	const char *const *names;
} ljvm_lists[] = {
	{ "LuaJIT 2.1 (2022-03)", ljvm_2_1_2022 },
	{ "OpenResty luajit2 2.1-20230119", ljvm_2_1_2022 },
};

/* The C library functions IRCALLDEF names (lj_ircall.h); every other name
 * is one of LuaJIT's own. */
static const char *const ljn_libc[] = {
	"log10", "exp", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
	"fputc", "fwrite", "fflush", "sqrt", "log", "pow", "atan2", "ldexp", "strlen", "memcpy",
	"memset",
};

/* Is name one of the C library's? */
static int ljn__is_libc(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(ljn_libc) / sizeof(ljn_libc[0]); i++)
		if (!strcmp(name, ljn_libc[i]))
			return 1;
	return 0;
}

/* Does a symbolic relocation to sym stand for name?  lj_vm.h maps some
 * lj_vm_* helpers to the C library's (lj_vm_log2 to log2, ...). */
static int ljn__same(const char *sym, const char *name)
{
	return !strcmp(sym, name) || (!strncmp(name, "lj_vm_", 6) && !strcmp(sym, name + 6));
}

/* Does list fit a table at base?  The number of library entries found at
 * their index, or -1 on any disagreement. */
static int ljn__fit(struct elf_file *ef, const struct elf_rels *r, const char *const *list,
		    uint64_t base)
{
	const struct elf_rel *x;
	uint64_t v;
	int nlib = 0;
	size_t i;

	/* A pointer fixed up just before: the table starts earlier (another
	 * list, with more entries before this one's first, may fit there). */
	if (base >= LJN_ENTRY && elf_rels__at(r, base - LJN_ENTRY))
		return -1;
	for (i = 0;; i++) {
		uint64_t slot = base + i * LJN_ENTRY;

		if (elf_rels__at(r, slot + 8))	/* the flags word is never relocated */
			return -1;
		x = elf_rels__at(r, slot);
		if (!list[i]) {		/* the terminator, { NULL, 0 } */
			if (x || elf_file__read(ef, slot, &v, 8) || v)
				return -1;
			return nlib;
		}
		if (x && x->sym) {
			if (!ljn__same(x->sym, list[i]))
				return -1;
			nlib++;
		} else if (x) {
			if (ljn__is_libc(list[i]))
				return -1;
		} else if (elf_file__read(ef, slot, &v, 8) || v) {
			return -1;	/* a pointer no relocation fixes up */
		}
	}
}

/* The base of the one table that list fits (0 if none or several). */
static uint64_t ljn__find(struct elf_file *ef, const struct elf_rels *r, const char *const *list)
{
	uint64_t base = 0, b;
	size_t anchor, i;

	for (anchor = 0; list[anchor] && strcmp(list[anchor], "log10"); anchor++)
		;
	if (!list[anchor])
		return 0;
	for (i = 0; i < r->n; i++) {
		if (!r->v[i].sym || strcmp(r->v[i].sym, "log10") ||
		    r->v[i].off < anchor * LJN_ENTRY)
			continue;
		b = r->v[i].off - anchor * LJN_ENTRY;
		if (ljn__fit(ef, r, list, b) < LJN_MIN_LIB)
			continue;
		if (base && base != b)
			return 0;
		base = b;
	}
	return base;
}

/* Name LuaJIT's functions from its IR call table; see ljnames.h. */
int ljnames__ircall(struct elf_file *ef, const struct elf_rels *r,
		    int (*cb)(uint64_t addr, const char *name, void *arg), void *arg,
		    const char **version)
{
	const char *const *list = NULL;
	uint64_t base = 0, b;
	size_t k, i, which = 0;
	int err = -ENOENT;

	for (k = 0; k < sizeof(ljirc_lists) / sizeof(ljirc_lists[0]); k++) {
		if (!(b = ljn__find(ef, r, ljirc_lists[k].names)))
			continue;
		if (list) {	/* two lists fit: trust neither */
			list = NULL;
			break;
		}
		list = ljirc_lists[k].names;
		base = b;
		which = k;
	}
	if (!list)
		return -ENOENT;
	if (version)
		*version = ljirc_lists[which].version;
	err = 0;
	for (i = 0; cb && list[i] && !err; i++) {
		const struct elf_rel *x = elf_rels__at(r, base + i * LJN_ENTRY);

		if (x && !x->sym && !ljn__is_libc(list[i]))
			err = cb(x->val, list[i], arg);
	}
	return err;
}

/* Is name one of the '|'-separated alternatives of entry? */
static int ljn__alt(const char *entry, const char *name)
{
	size_t n = strlen(name);
	const char *p = entry, *bar;

	for (;;) {
		bar = strchr(p, '|');
		if ((size_t)((bar ? bar : p + strlen(p)) - p) == n && !strncmp(p, name, n))
			return 1;
		if (!bar)
			return 0;
		p = bar + 1;
	}
}

/* Name the interpreter's call targets; see ljnames.h. */
int ljnames__vmcalls(const char *version, const char **names, size_t n)
{
	const char *const *list = NULL;
	size_t k, i, anchors = 0;

	for (k = 0; version && k < sizeof(ljvm_lists) / sizeof(ljvm_lists[0]); k++)
		if (!strcmp(version, ljvm_lists[k].version))
			list = ljvm_lists[k].names;
	if (!list)
		return -ENOENT;
	for (i = 0; i < n && list[i]; i++) {
		if (!names[i])
			continue;
		if (!ljn__alt(list[i], names[i]))
			return -ENOENT;	/* another order: another source or build */
		anchors++;
	}
	if (i != n || list[i] || anchors < LJN_MIN_ANCHORS)
		return -ENOENT;
	for (i = 0; i < n; i++)
		if (!names[i] && !strchr(list[i], '|'))
			names[i] = list[i];
	return 0;
}
