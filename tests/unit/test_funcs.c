/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_funcs.c -- function ranges and their names without debug symbols
 * (symtab/funcs.h, symtab/ljnames.h), against the unstripped twin.
 *
 *   test_funcs STRIPPED UNSTRIPPED [VERSION]
 *
 * STRIPPED is `objcopy --strip-all` of UNSTRIPPED (same build id).  Every
 * FDE range of STRIPPED that gets a name must be named, in UNSTRIPPED's
 * .symtab, by the symbol that starts there (0 wrong names); every range
 * named from LuaJIT's IR call table must be a function of that name in
 * lj_ircall.h's list; VERSION, when given, must be the list that fitted,
 * and the interpreter's calls must fit that source's ljvmcall_names.h list.
 * Also: the ranges are sorted and disjoint, an address inside a range finds
 * that range, an exported symbol never names a range past its st_size, and
 * the symbolizer names the middle of every range by the range (its
 * recovered name, else module+0xSTART) where no symbol covers it.
 * Prints "named N/M (luajit K, dynsym D)" for the report of issue 14.
 * Without arguments the test runs on its own binary (unstripped: every
 * range named by .symtab, no IR call table); with STRIPPED and UNSTRIPPED
 * the same file (a stripped build that has no twin), the names are only
 * counted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/elf.h"
#include "symtab/funcs.h"
#include "symtab/ljnames.h"
#include "symtab/objfile.h"
#include "symtab/symbolize.h"
#include "tests/unit/check.h"

int failures, checks;

/* Ranges sorted, disjoint, each found by its own addresses. */
static void check_shape(const struct funcs *f)
{
	const struct func_range *v;
	size_t n, i;

	v = funcs__all(f, &n);
	CHECK(n > 0);
	for (i = 0; i < n; i++) {
		CHECKF(v[i].lo < v[i].hi, "range %zu empty", i);
		if (i)
			CHECKF(v[i - 1].hi <= v[i].lo, "ranges %zu and %zu overlap", i - 1, i);
		CHECK(funcs__at(f, v[i].lo) == &v[i]);
		CHECK(funcs__at(f, v[i].hi - 1) == &v[i]);
		CHECK(funcs__at(f, v[i].lo + (v[i].hi - v[i].lo) / 2) == &v[i]);
	}
	CHECK(funcs__at(f, 0) == NULL);
}

/* Every named range against the symbol of the unstripped file. */
static void check_names(const struct funcs *f, struct elf_file *stripped, struct elf_file *full)
{
	const struct func_range *v;
	struct elf_symbol s;
	size_t n, i, named = 0, wrong = 0, byhow[FUNC__MAX] = { 0 };

	v = funcs__all(f, &n);
	for (i = 0; i < n; i++) {
		byhow[v[i].how]++;
		if (!v[i].name)
			continue;
		named++;
		if (full && (elf_file__sym_at(full, v[i].lo, &s) != 0 || s.value != v[i].lo ||
			     strcmp(s.name, v[i].name))) {
			wrong++;
			fprintf(stderr, "wrong: 0x%llx named %s (%s), unstripped: %s\n",
				(unsigned long long)v[i].lo, v[i].name, func_how__name(v[i].how),
				elf_file__sym_at(full, v[i].lo, &s) == 0 ? s.name : "(none)");
		}
		if (v[i].how == FUNC_DYNSYM)	/* within st_size */
			CHECK(elf_file__sym_at(stripped, v[i].lo, &s) == 0 && s.value == v[i].lo);
	}
	CHECKF(wrong == 0, "%zu wrong names", wrong);
	printf("named %zu/%zu (luajit %zu, dynsym %zu, symtab %zu), wrong %zu, ircall %s, "
	       "vm calls %zu\n", named, n, byhow[FUNC_LUAJIT], byhow[FUNC_DYNSYM],
	       byhow[FUNC_SYMTAB], wrong, funcs__lj_version(f) ? funcs__lj_version(f) : "none",
	       funcs__lj_vmcalls(f));
}

/* Addresses past an exported symbol's st_size but inside its FDE are not
 * given its name by the range list (the symbol covers only its own bytes). */
static void check_clamp(const struct funcs *f, struct elf_file *ef)
{
	const struct func_range *v;
	struct elf_symbol s;
	size_t n, i;

	v = funcs__all(f, &n);
	for (i = 0; i < n; i++) {
		if (v[i].how != FUNC_DYNSYM && v[i].how != FUNC_SYMTAB)
			continue;
		CHECK(elf_file__sym_at(ef, v[i].lo, &s) == 0);
		if (s.size && v[i].lo + s.size < v[i].hi)
			CHECK(elf_file__sym_at(ef, v[i].lo + s.size, &s) != 0 ||
			      s.value > v[i].lo);
	}
}

/* The symbolizer names every address of a range as the range says: its
 * recovered name, else module+0xSTART (START's file offset); a symbol only
 * within its st_size. */
static void check_symbolizer(const struct funcs *f, struct elf_file *ef, const char *path)
{
	struct symbolizer_opts o = { .no_lines = 1 };
	struct symbolizer *sy = symbolizer__new(&o);
	struct objcache *c = objcache__new(NULL);
	struct objfile *obj = c ? objcache__get(c, path, NULL, 0) : NULL;
	const struct func_range *v;
	const struct sym_info *si;
	struct elf_symbol s;
	char buf[256], want[256];
	size_t n, i;
	uint64_t off;

	CHECK(sy && obj && obj->status == OBJFILE_OK);
	if (!sy || !obj)
		goto out;
	v = funcs__all(f, &n);
	for (i = 0; i < n; i++) {
		uint64_t a = v[i].lo + (v[i].hi - v[i].lo) / 2;

		if (symbolizer__obj(sy, obj, a, &si) != 0) {
			CHECK(0);
			continue;
		}
		if (elf_file__sym_at(ef, a, &s) == 0) {
			CHECK(si->name && !si->recovered && si->sym_addr == s.value);
			continue;
		}
		CHECK(si->in_func && si->func_lo == v[i].lo);
		if (v[i].how == FUNC_LUAJIT) {
			CHECKF(si->name && !strcmp(si->name, v[i].name) && si->recovered &&
			       si->offset == a - v[i].lo, "0x%llx: %s, range %s",
			       (unsigned long long)a, si->name ? si->name : "(none)", v[i].name);
			continue;
		}
		CHECKF(!si->name, "0x%llx named %s past its symbol", (unsigned long long)a,
		       si->name);
		if (elf_file__vaddr_to_offset(ef, a, &off) != 0)
			continue;
		((struct sym_info *)si)->file_off = off;	/* as symbolizer__pc sets it */
		sym_info__format(si, buf, sizeof(buf));
		elf_file__vaddr_to_offset(ef, v[i].lo, &off);
		snprintf(want, sizeof(want), "%s+0x%llx", si->module, (unsigned long long)off);
		CHECKF(!strcmp(buf, want), "%s, expected %s", buf, want);
	}
out:
	symbolizer__delete(sy);
	objcache__delete(c);
}

/* ljnames__vmcalls on made-up target lists: the anchors must agree and be
 * enough, the length must be the list's, an "a|b" entry names nothing. */
static void check_vmcalls(void)
{
	const char *v = "LuaJIT 2.1 (2022-03)", *names[64], *orig[64];
	size_t n, i;

	/* the list itself, through the function: all 43 named, every 4th known */
	for (n = 0; n < 64; n++)
		names[n] = "?";
	CHECK(ljnames__vmcalls(v, names, 43) == -ENOENT);	/* "?" agrees with nothing */
	for (i = 0; i < 43; i++)
		names[i] = NULL;
	CHECK(ljnames__vmcalls(v, names, 43) == -ENOENT);	/* no anchors */
	names[0] = "lj_tab_len";
	names[8] = "lj_tab_newkey";
	names[28] = "lj_str_new";
	names[30] = "lj_buf_tostr";
	names[2] = "lj_gc_barrieruv";
	names[7] = "lj_tab_dup";
	names[25] = "lj_strfmt_num";
	CHECK(ljnames__vmcalls(v, names, 43) == -ENOENT);	/* 7 anchors < 8 */
	names[29] = "lj_buf_putstr_reverse";
	memcpy(orig, names, sizeof(names));
	CHECK(ljnames__vmcalls(v, names, 42) == -ENOENT);	/* another length */
	CHECK(!memcmp(orig, names, sizeof(names)));
	CHECK(ljnames__vmcalls("LuaJIT 9", names, 43) == -ENOENT);
	CHECK(ljnames__vmcalls(v, names, 43) == 0);
	CHECK(names[16] && !strcmp(names[16], "lj_meta_comp"));
	CHECK(names[33] && !strcmp(names[33], "lj_gc_step"));
	for (i = 0; i < 43; i++)
		CHECK(names[i] != NULL || i == 25);
	memcpy(names, orig, sizeof(names));
	names[25] = "lj_strfmt_number";	/* the other alternative */
	CHECK(ljnames__vmcalls(v, names, 43) == 0);
	memcpy(names, orig, sizeof(names));
	names[25] = NULL;		/* unknown there: stays unnamed */
	names[31] = "lj_buf_putstr_lower";
	CHECK(ljnames__vmcalls(v, names, 43) == 0 && names[25] == NULL);
	memcpy(names, orig, sizeof(names));
	names[16] = "lj_meta_equal";	/* out of order */
	CHECK(ljnames__vmcalls(v, names, 43) == -ENOENT);
}

int main(int argc, char **argv)
{
	const char *spath = argc > 2 ? argv[1] : "/proc/self/exe";
	const char *fpath = argc > 2 ? argv[2] : "/proc/self/exe";
	struct elf_file *stripped = NULL, *full = NULL;
	struct funcs *f = NULL;

	if (elf_file__open(spath, &stripped) || elf_file__open(fpath, &full)) {
		fprintf(stderr, "cannot open %s or %s\n", spath, fpath);
		return 99;
	}
	check_vmcalls();
	CHECK(funcs__new(stripped, &f) == 0 && f);
	if (f) {
		check_shape(f);
		if (strcmp(spath, fpath) || argc <= 2)
			check_names(f, stripped, full);
		else
			check_names(f, stripped, NULL);
		check_clamp(f, stripped);
		check_symbolizer(f, stripped, spath);
		if (argc > 3)	/* the interpreter's calls fitted that source's list */
			CHECKF(funcs__lj_vmcalls(f) >= 40, "%zu vm calls", funcs__lj_vmcalls(f));
		if (argc > 3)
			CHECKF(funcs__lj_version(f) && !strcmp(funcs__lj_version(f), argv[3]),
			       "IR call table list: %s, expected %s",
			       funcs__lj_version(f) ? funcs__lj_version(f) : "none", argv[3]);
		if (argc <= 2)
			CHECK(!funcs__lj_version(f));
	}
	funcs__delete(f);
	elf_file__delete(stripped);
	elf_file__delete(full);
	printf("test_funcs: %d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
