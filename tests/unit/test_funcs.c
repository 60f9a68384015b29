/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_funcs.c -- function ranges and their names without debug symbols
 * (symtab/funcs.h, symtab/ljnames.h), against the unstripped twin.
 *
 *   test_funcs STRIPPED UNSTRIPPED [VERSION]
 *
 * STRIPPED is `objcopy --strip-all` of UNSTRIPPED (same build id).  Every
 * FDE range of STRIPPED that gets a name must be named, in UNSTRIPPED's
 * .symtab, by the symbol that starts there (0 wrong names; a copy gcc made
 * of a function, e.g. hashkey.isra.0 or lua_settop.part.0, counts as that
 * function, which is what the call graph of ljcallgraph.h names); every range
 * named from LuaJIT's IR call table must be a function of that name in
 * lj_ircall.h's list; VERSION, when given, must be the list that fitted,
 * and the interpreter's calls must fit that source's ljvmcall_names.h list.
 * Also: the ranges are sorted and disjoint, an address inside a range finds
 * that range, an exported symbol never names a range past its st_size, and
 * the symbolizer names the middle of every range by the range (its
 * recovered name, else module+0xSTART) where no symbol covers it.
 * The capture's copy of STRIPPED (symtab/elfcopy.h, with the names saved by
 * elfcopy__names) names every range as STRIPPED does (funcs__new_saved: the
 * same ranges, names, sources, IR call table list and interpreter calls),
 * and the symbolizer, given only the copy, names the first, middle and last
 * address of every range as it does with the file; without the saved names
 * the copy names nothing from LuaJIT's tables (the recovery is not run on
 * it: it has no code nor data).
 * Prints "named N/M (luajit K, dynsym D)" for the report of issue 14.
 * Without arguments the test runs on its own binary (unstripped: every
 * range named by .symtab, no IR call table); with STRIPPED and UNSTRIPPED
 * the same file (a stripped build that has no twin), the names are only
 * counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symtab/elf.h"
#include "symtab/elfcopy.h"
#include "symtab/funcs.h"
#include "symtab/ljcallgraph.h"
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

/* name is sym, or sym is name plus gcc's clone suffixes (.isra.0,
 * .constprop.0, .part.0, .cold: pieces or copies of that function). */
static int same_function(const char *name, const char *sym)
{
	size_t n = strlen(name);
	const char *p;

	if (strncmp(name, sym, n))
		return 0;
	for (p = sym + n; *p; ) {
		static const char *const sfx[] = { ".isra", ".constprop", ".part", ".cold" };
		size_t k, l = 0;

		for (k = 0; k < sizeof(sfx) / sizeof(sfx[0]) && !l; k++)
			if (!strncmp(p, sfx[k], strlen(sfx[k])))
				l = strlen(sfx[k]);
		if (!l)
			return 0;
		p += l;
		if (*p == '.' && p[1] >= '0' && p[1] <= '9')
			for (p++; *p >= '0' && *p <= '9'; p++)
				;
	}
	return 1;
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
			     !same_function(v[i].name, s.name))) {
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
	       "vm calls %zu, signatures %zu, call graph %zu, library tables %zu\n", named, n,
	       byhow[FUNC_LUAJIT], byhow[FUNC_DYNSYM], byhow[FUNC_SYMTAB], wrong,
	       funcs__lj_version(f) ? funcs__lj_version(f) : "none", funcs__lj_vmcalls(f),
	       funcs__lj_signames(f), funcs__lj_cgnames(f), funcs__lj_cfnames(f));
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

/* The same ranges, named the same way, in f and g. */
static void same_funcs(const struct funcs *f, const struct funcs *g, const char *what)
{
	const struct func_range *v, *w;
	size_t n, m, i, bad = 0;

	v = funcs__all(f, &n);
	w = funcs__all(g, &m);
	CHECKF(n == m, "%s: %zu ranges, the file %zu", what, m, n);
	for (i = 0; i < n && n == m; i++)
		if (v[i].lo != w[i].lo || v[i].hi != w[i].hi || v[i].how != w[i].how ||
		    strcmp(v[i].name ? v[i].name : "", w[i].name ? w[i].name : "")) {
			if (bad++ < 5)
				fprintf(stderr, "%s: 0x%llx %s (%s), the file: %s (%s)\n", what,
					(unsigned long long)w[i].lo, w[i].name ? w[i].name : "-",
					func_how__name(w[i].how), v[i].name ? v[i].name : "-",
					func_how__name(v[i].how));
		}
	CHECKF(bad == 0, "%s: %zu ranges named otherwise than by the file", what, bad);
	CHECK(funcs__lj_vmcalls(f) == funcs__lj_vmcalls(g));
	CHECK(!funcs__lj_version(f) == !funcs__lj_version(g));
	if (funcs__lj_version(f) && funcs__lj_version(g))
		CHECK(!strcmp(funcs__lj_version(f), funcs__lj_version(g)));
}

/* The symbolizer's answers for addr with the file (a) and with the copy (b). */
static int same_answer(const struct sym_info *a, const struct sym_info *b)
{
	return a->status == b->status && a->in_func == b->in_func && a->func_lo == b->func_lo &&
	       a->recovered == b->recovered && a->sym_addr == b->sym_addr &&
	       a->offset == b->offset && !strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

/* Per address: the symbolizer with the file and with only its copy. */
static void same_symbolizer(const struct funcs *f, const char *path, const uint8_t *id,
			    size_t idlen, struct elfcopy *copy)
{
	struct symbolizer_opts o = { .no_lines = 1 };
	struct symbolizer *sa = symbolizer__new(&o), *sb = symbolizer__new(&o);
	struct objcache *ca = objcache__new(NULL), *cb = objcache__new(NULL);
	struct objfile *a = NULL, *b = NULL;
	const struct func_range *v;
	size_t n, i, k, bad = 0, asked = 0, recovered = 0;

	CHECK(sa && sb && ca && cb && objcache__add_copy(cb, id, idlen, copy) == 0);
	if (ca && cb) {
		a = objcache__get(ca, path, id, idlen);
		b = objcache__get(cb, "/nonexistent/ljsnap-test-funcs", id, idlen);
	}
	CHECK(a && a->status == OBJFILE_OK && !a->from_copy);
	CHECK(b && b->status == OBJFILE_OK && b->from_copy);
	if (!sa || !sb || !a || !b || !a->from_copy == !b->from_copy)
		goto out;
	v = funcs__all(f, &n);
	for (i = 0; i < n; i++)
		for (k = 0; k < 3; k++) {
			uint64_t addr = k == 0 ? v[i].lo : k == 1 ? v[i].lo + (v[i].hi - v[i].lo) / 2
								 : v[i].hi - 1;
			const struct sym_info *x, *y;

			if (symbolizer__obj(sa, a, addr, &x) || symbolizer__obj(sb, b, addr, &y)) {
				CHECK(0);
				continue;
			}
			asked++;
			recovered += x->recovered;
			if (!same_answer(x, y) && bad++ < 5)
				fprintf(stderr, "copy: 0x%llx named %s, the file: %s\n",
					(unsigned long long)addr, y->name ? y->name : "-",
					x->name ? x->name : "-");
		}
	CHECKF(bad == 0, "%zu of %zu addresses named otherwise with the copy", bad, asked);
	printf("copy: %zu addresses named as with the file (%zu recovered), %zu otherwise\n",
	       asked - bad, recovered, bad);
out:
	symbolizer__delete(sa);
	symbolizer__delete(sb);
	objcache__delete(ca);
	objcache__delete(cb);
}

/* The copy of path names what the file names (see the top of this file). */
static void check_copy(const struct funcs *f, struct elf_file *ef, const char *path)
{
	struct elfcopy c = { 0 };
	struct elf_file *cf = NULL;
	struct funcs *g = NULL, *bare = NULL;
	uint8_t id[64];
	char mpath[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC), mfd = -1, idlen;
	size_t n, i, luajit = 0;
	const struct func_range *v;

	idlen = elf_file__build_id(ef, id, sizeof(id));
	CHECK(fd >= 0 && idlen > 0 && elfcopy__extract(fd, ELFCOPY_UNWIND | ELFCOPY_SYMBOLS, &c) == 0);
	CHECK(elfcopy__names(&c, ef) == 0);
	CHECK(!c.names_len == !funcs__lj_version(f));
	CHECK(elfcopy__memfd(&c, &mfd) == 0);
	snprintf(mpath, sizeof(mpath), "/proc/self/fd/%d", mfd);
	CHECK(elf_file__open(mpath, &cf) == 0);
	if (!cf || idlen <= 0)
		goto out;
	CHECK(funcs__new_saved(cf, c.names, c.names_len, &g) == 0 && g);
	CHECK(funcs__new_saved(cf, NULL, 0, &bare) == 0 && bare);
	if (g)
		same_funcs(f, g, "copy");
	v = bare ? funcs__all(bare, &n) : NULL;
	for (i = 0; v && i < n; i++)
		luajit += v[i].how == FUNC_LUAJIT;
	CHECK(bare && luajit == 0 && !funcs__lj_version(bare));
	CHECK(funcs__new_saved(cf, (const uint8_t *)"x", 1, &g) == -EINVAL && !g);
	printf("copy: names saved %zu bytes\n", c.names_len);
	same_symbolizer(f, path, id, (size_t)idlen, &c);
out:
	funcs__delete(g);
	funcs__delete(bare);
	elf_file__delete(cf);
	elfcopy__exit(&c);
	if (mfd >= 0)
		close(mfd);
	if (fd >= 0)
		close(fd);
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

/* ljnames__callgraph on made-up ranges, with upstream's call graph: two
 * named callers pin their one common callee; a range the constraints
 * leave to a function another range has is not named; calls that
 * contradict the graph (through an unnamed range, or between two named
 * ones) name nothing; bad edges and unknown versions; references to an
 * address (LJCG_EDGE_ADDR) against the source's references. */
static void check_callgraph(void)
{
	const char *v = "LuaJIT 2.1 (2022-03)", *names[4];
	uint32_t e[8];
	size_t named = 99;

	/* lj_strfmt_putint and lj_strfmt_int both call only lj_strfmt_wint */
	names[0] = "lj_strfmt_putint";
	names[1] = "lj_strfmt_int";
	names[2] = NULL;
	e[0] = 0, e[1] = 2, e[2] = 1, e[3] = 2;
	CHECK(ljnames__callgraph(v, names, 3, LJCG_NO_RANGE, e, NULL, 2, &named) == 0);
	CHECK(named == 1 && names[2] && !strcmp(names[2], "lj_strfmt_wint"));
	/* called by lj_strfmt_putfnum and lj_strfmt_num, calling lj_strfmt_wint:
	 * lj_strfmt_wfnum, or a piece of lj_strfmt_wint if it jumps there; a
	 * call leaves only lj_strfmt_wfnum (lj_strfmt_wint is not recursive) */
	{
		const char *w[4] = { "lj_strfmt_putfnum", "lj_strfmt_num", NULL, "lj_strfmt_wint" };
		uint32_t we[6] = { 0, 2, 1, 2, 2, 3 };
		uint8_t jmp[3] = { 1, 1, 1 };

		CHECK(ljnames__callgraph(v, w, 4, LJCG_NO_RANGE, we, jmp, 3, &named) == 0);
		CHECK(named == 0 && !w[2]);
		jmp[2] = 0;
		CHECK(ljnames__callgraph(v, w, 4, LJCG_NO_RANGE, we, jmp, 3, &named) == 0);
		CHECK(named == 1 && w[2] && !strcmp(w[2], "lj_strfmt_wfnum"));
	}
	/* one caller: the callee may be a piece of it, or what it calls */
	names[2] = NULL;
	CHECK(ljnames__callgraph(v, names, 3, LJCG_NO_RANGE, e, NULL, 1, &named) == 0);
	CHECK(named == 0 && !names[2]);
	/* the interpreter's range is left out */
	CHECK(ljnames__callgraph(v, names, 3, 1, e, NULL, 2, &named) == 0);
	CHECK(named == 0 && !names[2]);
	/* hash_sparse calls nothing: what it calls can only be a piece of
	 * itself, which range 0 is already */
	names[0] = "hash_sparse";
	names[1] = NULL;
	e[0] = 0, e[1] = 1;
	CHECK(ljnames__callgraph(v, names, 2, LJCG_NO_RANGE, e, NULL, 1, &named) == 0);
	CHECK(named == 0 && !names[1]);
	/* ... so that piece calling lua_close contradicts the graph */
	names[2] = "lua_close";
	e[2] = 1, e[3] = 2;
	CHECK(ljnames__callgraph(v, names, 3, LJCG_NO_RANGE, e, NULL, 2, &named) == -ENOENT);
	CHECK(named == 0 && !names[1]);
	/* two named ranges whose call the graph does not have: another source */
	names[1] = "lua_close";
	e[0] = 0, e[1] = 1;
	CHECK(ljnames__callgraph(v, names, 2, LJCG_NO_RANGE, e, NULL, 1, &named) == -ENOENT);
	names[1] = NULL;
	e[0] = 0, e[1] = 1, e[2] = 1, e[3] = 3;	/* no range 3 */
	CHECK(ljnames__callgraph(v, names, 3, LJCG_NO_RANGE, e, NULL, 2, &named) == -EINVAL);
	CHECK(ljnames__callgraph("LuaJIT 9", names, 3, LJCG_NO_RANGE, e, NULL, 1, &named) == -ENOENT);
	CHECK(ljnames__callgraph(NULL, names, 3, LJCG_NO_RANGE, e, NULL, 1, &named) == -ENOENT);
	CHECK(!names[1]);
	/* luaL_newstate takes panic's address (lib_aux.c: lua_atpanic) and
	 * panic calls lua_tolstring: as a reference the edge pins panic; as a
	 * call it leaves no candidate (luaL_newstate calls nothing that calls
	 * lua_tolstring) */
	{
		const char *w[3] = { "luaL_newstate", NULL, "lua_tolstring" };
		uint32_t we[4] = { 0, 1, 1, 2 };
		uint8_t kind[2] = { LJCG_EDGE_ADDR, LJCG_EDGE_CALL };

		CHECK(ljnames__callgraph(v, w, 3, LJCG_NO_RANGE, we, kind, 2, &named) == 0);
		CHECKF(named == 1 && w[1] && !strcmp(w[1], "panic"), "named %s", w[1] ? w[1] : "-");
		w[1] = NULL;
		kind[0] = LJCG_EDGE_CALL;
		CHECK(ljnames__callgraph(v, w, 3, LJCG_NO_RANGE, we, kind, 2, &named) == -ENOENT);
		CHECK(!w[1]);
	}
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
	check_callgraph();
	CHECK(funcs__new(stripped, &f) == 0 && f);
	if (f) {
		check_shape(f);
		if (strcmp(spath, fpath) || argc <= 2)
			check_names(f, stripped, full);
		else
			check_names(f, stripped, NULL);
		check_clamp(f, stripped);
		check_symbolizer(f, stripped, spath);
		check_copy(f, stripped, spath);
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
