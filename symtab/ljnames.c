/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljnames.c -- LuaJIT's internal function names from lj_ir_callinfo[], read
 * through the dynamic relocations of a stripped ELF file.  See ljnames.h.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/elf.h"
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

/* One relocated 8-byte slot: symbolic (sym) or relative (val = target). */
struct ljn_rel {
	uint64_t off;
	uint64_t val;
	const char *sym;
};

struct ljn_rels {
	struct ljn_rel *v;
	size_t n, cap;
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

/* Order relocations by slot. */
static int ljn_rel__cmp(const void *a, const void *b)
{
	const struct ljn_rel *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Append one relocation. */
static int ljn_rels__add(struct ljn_rels *r, uint64_t off, uint64_t val, const char *sym)
{
	int err = VEC_GROW(r->v, &r->cap, r->n + 1);

	if (err)
		return err;
	r->v[r->n].off = off;
	r->v[r->n].val = val;
	r->v[r->n].sym = sym;
	r->n++;
	return 0;
}

/* The name of .dynsym entry i ("" when out of bounds). */
static const char *ljn__dynname(const uint8_t *sym, size_t nsym, const char *str, size_t nstr,
				uint64_t i)
{
	Elf64_Sym s;

	if (i >= nsym / sizeof(s))
		return "";
	memcpy(&s, sym + i * sizeof(s), sizeof(s));
	if (s.st_name >= nstr || !memchr(str + s.st_name, 0, nstr - s.st_name))
		return "";
	return str + s.st_name;
}

/* R_X86_64_RELATIVE, _64 and GLOB_DAT relocations of .rela.dyn. */
static int ljn__rela(struct elf_file *ef, struct ljn_rels *r)
{
	struct elf_section sec;
	const uint8_t *rel, *sym = NULL, *str = NULL;	/* str: .dynstr's bytes */
	size_t nrel, nsym = 0, nstr = 0, i;
	int err;

	if (elf_file__section_data(ef, ".rela.dyn", &sec, &rel, &nrel) != 0)
		return 0;
	if (elf_file__section_data(ef, ".dynsym", &sec, &sym, &nsym) != 0 ||
	    elf_file__section_data(ef, ".dynstr", &sec, &str, &nstr) != 0)
		nsym = nstr = 0;
	for (i = 0; i + sizeof(Elf64_Rela) <= nrel; i += sizeof(Elf64_Rela)) {
		Elf64_Rela a;
		uint32_t type;

		memcpy(&a, rel + i, sizeof(a));
		type = ELF64_R_TYPE(a.r_info);
		if (type == R_X86_64_RELATIVE)
			err = ljn_rels__add(r, a.r_offset, (uint64_t)a.r_addend, NULL);
		else if (type == R_X86_64_64 || type == R_X86_64_GLOB_DAT)
			err = ljn_rels__add(r, a.r_offset, 0,
					    ljn__dynname(sym, nsym, (const char *)str, nstr,
							 ELF64_R_SYM(a.r_info)));
		else
			continue;
		if (err)
			return err;
	}
	return 0;
}

/* Relative relocations packed in .relr.dyn (the addend is in the slot). */
static int ljn__relr(struct elf_file *ef, struct ljn_rels *r)
{
	struct elf_section sec;
	const uint8_t *d;
	size_t n, i;
	uint64_t where = 0, e, v;
	int err, bit;

	if (elf_file__section_data(ef, ".relr.dyn", &sec, &d, &n) != 0)
		return 0;
	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&e, d + i, 8);
		if (!(e & 1)) {		/* an address, then the next slot */
			if (elf_file__read(ef, e, &v, 8) == 0 && (err = ljn_rels__add(r, e, v, NULL)))
				return err;
			where = e + 8;
			continue;
		}
		for (bit = 1; bit < 64; bit++) {	/* a bitmap of the next 63 slots */
			uint64_t a = where + (uint64_t)(bit - 1) * 8;

			if (((e >> bit) & 1) && elf_file__read(ef, a, &v, 8) == 0 &&
			    (err = ljn_rels__add(r, a, v, NULL)))
				return err;
		}
		where += 63 * 8;
	}
	return 0;
}

/* The relocation of the slot at off, or NULL. */
static const struct ljn_rel *ljn_rels__at(const struct ljn_rels *r, uint64_t off)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->v[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n && r->v[lo].off == off ? &r->v[lo] : NULL;
}

/* Does a symbolic relocation to sym stand for name?  lj_vm.h maps some
 * lj_vm_* helpers to the C library's (lj_vm_log2 to log2, ...). */
static int ljn__same(const char *sym, const char *name)
{
	return !strcmp(sym, name) || (!strncmp(name, "lj_vm_", 6) && !strcmp(sym, name + 6));
}

/* Does list fit a table at base?  The number of library entries found at
 * their index, or -1 on any disagreement. */
static int ljn__fit(struct elf_file *ef, const struct ljn_rels *r, const char *const *list,
		    uint64_t base)
{
	const struct ljn_rel *x;
	uint64_t v;
	int nlib = 0;
	size_t i;

	/* A pointer fixed up just before: the table starts earlier (another
	 * list, with more entries before this one's first, may fit there). */
	if (base >= LJN_ENTRY && ljn_rels__at(r, base - LJN_ENTRY))
		return -1;
	for (i = 0;; i++) {
		uint64_t slot = base + i * LJN_ENTRY;

		if (ljn_rels__at(r, slot + 8))	/* the flags word is never relocated */
			return -1;
		x = ljn_rels__at(r, slot);
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
static uint64_t ljn__find(struct elf_file *ef, const struct ljn_rels *r, const char *const *list)
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
int ljnames__ircall(struct elf_file *ef, int (*cb)(uint64_t addr, const char *name, void *arg),
		    void *arg, const char **version)
{
	struct ljn_rels r = { NULL, 0, 0 };
	const char *const *list = NULL;
	uint64_t base = 0, b;
	size_t k, i, which = 0;
	int err = -ENOENT;

	if (elf_file__class(ef) != ELFCLASS64 || elf_file__machine(ef) != EM_X86_64)
		goto out;
	if ((err = ljn__rela(ef, &r)) != 0 || (err = ljn__relr(ef, &r)) != 0)
		goto out;
	qsort(r.v, r.n, sizeof(*r.v), ljn_rel__cmp);
	for (k = 0; k < sizeof(ljirc_lists) / sizeof(ljirc_lists[0]); k++) {
		if (!(b = ljn__find(ef, &r, ljirc_lists[k].names)))
			continue;
		if (list) {	/* two lists fit: trust neither */
			list = NULL;
			break;
		}
		list = ljirc_lists[k].names;
		base = b;
		which = k;
	}
	err = -ENOENT;
	if (!list)
		goto out;
	if (version)
		*version = ljirc_lists[which].version;
	err = 0;
	for (i = 0; cb && list[i] && !err; i++) {
		const struct ljn_rel *x = ljn_rels__at(&r, base + i * LJN_ENTRY);

		if (x && !x->sym && !ljn__is_libc(list[i]))
			err = cb(x->val, list[i], arg);
	}
out:
	free(r.v);
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
