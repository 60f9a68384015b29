/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_ljlayout.c -- the built-in LuaJIT layouts (unwind/ljlayout.c).
 *
 * 1. Internal consistency of all ten tables: every offset inside its struct,
 *    fields in LuaJIT's declaration order, the GG_State relations, the
 *    C-frame and VM-state numbering rules.
 * 2. Ground truth: the tarantool-2.6 non-GC64 table against the DWARF that
 *    Debian ships inside /usr/bin/tarantool (struct member offsets, sizes,
 *    GG_State, and the LJ_VMST_* / BC_FUNCF enumerators), read with libdw.
 * Exit 77 only when /usr/bin/tarantool is missing and CI is not set.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/ljlayout.h"
#include "tests/unit/check.h"

int failures, checks;

#define ABSENT UINT32_MAX

/* Value of a named field through the field table. */
static uint32_t field(const struct lj_layout *l, const char *name)
{
	size_t i;

	for (i = 0; i < lj_layout__nfields; i++)
		if (strcmp(lj_layout__fields[i].name, name) == 0)
			return *(const uint32_t *)((const char *)l + lj_layout__fields[i].offset);
	fprintf(stderr, "no field %s\n", name);
	abort();
}

/* Check that the named fields have strictly increasing offsets. */
static void ordered(const struct lj_layout *l, const char *what, const char *const *names)
{
	uint32_t prev = 0;
	size_t i;

	for (i = 0; names[i]; i++) {
		uint32_t v = field(l, names[i]);

		if (v == ABSENT)
			continue;
		CHECKF(i == 0 || v > prev, "%s: %s (%u) not after the previous field (%u)", what,
		      names[i], v, prev);
		prev = v;
	}
}

/* -- 1. internal consistency --------------------------------------------- */

/* Every offset lies inside its struct (via the field table); jsize is the
 * implied sizeof(jit_State). */
static void check_field_bounds(const struct lj_layout *l, const char *fn, int gc64, int32_t jsize)
{
	size_t i;

	for (i = 0; i < lj_layout__nfields; i++) {
		const char *n = lj_layout__fields[i].name;
		uint32_t v = field(l, n), lim = 0;

		if (v == ABSENT && (!strcmp(n, "snap_mcofs") || !strcmp(n, "cf_vmstate")))
			continue;
		if (!strncmp(n, "g_", 2) && strcmp(n, "g_size"))
			lim = l->g_size;
		else if (!strncmp(n, "l_", 2) && strcmp(n, "l_size"))
			lim = l->l_size;
		else if (!strncmp(n, "pt_", 3) && strcmp(n, "pt_size"))
			lim = l->pt_size;
		else if (!strncmp(n, "t_", 2) && strcmp(n, "t_size"))
			lim = l->t_size;
		else if (!strncmp(n, "snap_", 5) && strcmp(n, "snap_size"))
			lim = l->snap_size;
		else if (!strncmp(n, "cf_", 3) && strcmp(n, "cf_size"))
			lim = l->cf_size;
		else if (!strncmp(n, "j_", 2))
			lim = (uint32_t)jsize;
		else if (!strcmp(n, "str_len"))
			lim = l->str_size;
		else if (!strncmp(n, "fn_", 3))
			lim = l->fn_upvalue + 8;	/* sizeof(GCfuncC) with one upvalue */
		if (lim)
			CHECKF(v < lim, "%s gc64=%d: %s = %u outside its struct (size %u)", fn, gc64, n, v, lim);
	}
}

/* Fields in their declaration order in lj_obj.h / lj_jit.h / lj_frame.h. */
static void check_decl_order(const struct lj_layout *l, const char *fn)
{
	static const char *const l_order[] = { "l_glref", "l_base", "l_top", "l_maxstack", "l_stack",
		"l_cframe", "l_stacksize", "l_size", NULL };
	static const char *const pt_order[] = { "pt_numparams", "pt_framesize", "pt_sizebc", "pt_k",
		"pt_uv", "pt_sizekgc", "pt_sizekn", "pt_sizept", "pt_sizeuv", "pt_flags", "pt_trace",
		"pt_chunkname", "pt_firstline", "pt_numline", "pt_lineinfo", "pt_uvinfo", "pt_varinfo",
		"pt_size", NULL };
	static const char *const t_order[] = { "t_nsnap", "t_nins", "t_ir", "t_nk", "t_nsnapmap",
		"t_snap", "t_snapmap", "t_startpt", "t_startpc", "t_startins", "t_szmcode", "t_mcode",
		"t_mcloop", "t_spadjust", "t_traceno", "t_link", "t_root", "t_linktype", "t_size", NULL };
	static const char *const snap_order[] = { "snap_mapofs", "snap_ref", "snap_mcofs",
		"snap_nslots", "snap_topslot", "snap_nent", "snap_count", "snap_size", NULL };
	static const char *const fn_order[] = { "fn_ffid", "fn_nupvalues", "fn_pc", "fn_f",
		"fn_upvalue", NULL };
	static const char *const cf_order[] = { "cf_nres", "cf_errf", "cf_l", "cf_pc", "cf_vmstate",
		"cf_prev", "cf_size", NULL };
	static const char *const j_order[] = { "j_L", "j_state", "j_trace", "j_sizetrace", "j_parent",
		"j_exitno", NULL };

	ordered(l, fn, l_order);
	ordered(l, fn, pt_order);
	ordered(l, fn, t_order);
	ordered(l, fn, snap_order);
	ordered(l, fn, fn_order);
	ordered(l, fn, cf_order);
	ordered(l, fn, j_order);
}

/* All checks for one table. */
static void check_table(enum lj_family fam, int gc64)
{
	const struct lj_layout *l = lj_layout__builtin(fam, gc64);
	const char *fn = lj_layout__family_name(fam);
	int tth = fam == LJ_FAMILY_TARANTOOL_HEAD;
	uint32_t r = gc64 ? 8 : 4;
	int32_t jsize;

	CHECKF(l != NULL, "%s gc64=%d: no table", fn, gc64);
	if (!l)
		return;
	CHECKF(l->family == (uint32_t)fam, "%s: family %u", fn, l->family);
	CHECKF(!!(l->flags & LJ_LAYOUT_F_GC64) == gc64, "%s: GC64 flag", fn);
	CHECKF(l->ref_size == r, "%s: ref_size %u", fn, l->ref_size);

	/* GG_State = { L, g, J, hotcount[64] (128 bytes), dispatch[], bcff[] } */
	CHECKF(l->gg_ofs_g == l->l_size, "%s: GG_OFS(g) %u != sizeof(lua_State) %u", fn, l->gg_ofs_g,
	      l->l_size);
	CHECKF(l->g2j == (int32_t)l->g_size, "%s: J does not follow g (g2j %d, sizeof g %u)", fn, l->g2j,
	      l->g_size);
	jsize = -l->disp2g - l->g2j - 128;
	CHECKF(jsize > (int32_t)l->j_exitno && jsize < 4096 && jsize % 8 == 0,
	      "%s: implied sizeof(jit_State) %d from disp2g %d is implausible", fn, jsize, l->disp2g);
	CHECKF(l->l_size == (fam == LJ_FAMILY_OPENRESTY ? (gc64 ? 112u : 80u) : (gc64 ? 96u : 64u)),
	      "%s: sizeof(lua_State) %u", fn, l->l_size);

	check_field_bounds(l, fn, gc64, jsize);
	check_decl_order(l, fn);

	/* Object headers: GCHeader is { nextgc ref, marked, gct }. */
	CHECKF(l->fn_ffid == r + 2 && l->fn_nupvalues == r + 3, "%s: GCfuncC header", fn);
	CHECKF(l->l_glref == 2 * r, "%s: lua_State glref %u", fn, l->l_glref);
	CHECKF(l->pt_size == (gc64 ? 104u : 64u) && l->t_size == (gc64 ? 120u : 96u),
	      "%s: sizeof GCproto %u / GCtrace %u", fn, l->pt_size, l->t_size);
	CHECKF(l->str_size == (gc64 ? 24u : (fam == LJ_FAMILY_TARANTOOL_26 || tth) ? 16u : 20u),
	      "%s: sizeof(GCstr) %u", fn, l->str_size);
	/* global_State neighbours: bc_cfunc_int, bc_cfunc_ext, cur_L; strempty, stremptyz, hookmask. */
	CHECKF(l->g_bc_cfunc_ext == l->g_bc_cfunc_int + 4 && l->g_cur_L == l->g_bc_cfunc_ext + 4,
	      "%s: bc_cfunc_int/ext/cur_L not adjacent", fn);
	CHECKF(l->g_hookmask == l->g_strempty + l->str_size + 1, "%s: strempty/hookmask", fn);
	CHECKF(l->g_jit_base > l->g_cur_L, "%s: jit_base before cur_L", fn);

	/* SnapShot.mcofs and its flag agree; absent only in Tarantool 2.6. */
	CHECKF(!!(l->flags & LJ_LAYOUT_F_MCOFS) == (l->snap_mcofs != ABSENT), "%s: MCOFS flag", fn);
	CHECKF((l->snap_mcofs == ABSENT) == (fam == LJ_FAMILY_TARANTOOL_26), "%s: mcofs presence", fn);

	/* C frame: 80 bytes, or 96 with SAVE_VMSTATE in Tarantool >= 2.7. */
	CHECKF(l->cf_size == (tth ? 96u : 80u), "%s: cf_size %u", fn, l->cf_size);
	CHECKF((l->cf_vmstate != ABSENT) == tth, "%s: cf_vmstate", fn);
	CHECKF(l->cf_l == (gc64 ? 16u : 24u) && l->cf_pc == (gc64 ? 24u : 28u),
	      "%s: SAVE_L %u SAVE_PC %u", fn, l->cf_l, l->cf_pc);
	CHECKF(l->bc_funcf == (fam == LJ_FAMILY_UPSTREAM_HEAD ? 96u : 89u), "%s: bc_funcf", fn);

	/* VM states: distinct, negative, ~LJ_VMST_x in declaration order. */
	CHECKF(l->vmst.interp == -1, "%s: INTERP", fn);
	if (tth) {
		CHECKF(l->vmst.lfunc == -2 && l->vmst.ffunc == -3 && l->vmst.cfunc == -4 &&
		      l->vmst.gc == -5 && l->vmst.exit == -6 && l->vmst.record == -7 &&
		      l->vmst.opt == -8 && l->vmst.asm_ == -9 && l->vmst.c == 0, "%s: tt>=2.7 vmstates", fn);
		CHECKF(!strcmp(lj_layout__vmstate_name(l, -2), "lfunc"), "%s: -2 is lfunc", fn);
		CHECKF(!strcmp(lj_layout__vmstate_name(l, -4), "cfunc"), "%s: -4 is cfunc", fn);
		CHECKF(!strcmp(lj_layout__vmstate_name(l, -9), "asm"), "%s: -9 is asm", fn);
	} else {
		CHECKF(l->vmst.c == -2 && l->vmst.gc == -3 && l->vmst.exit == -4 && l->vmst.record == -5 &&
		      l->vmst.opt == -6 && l->vmst.asm_ == -7 && !l->vmst.lfunc && !l->vmst.ffunc &&
		      !l->vmst.cfunc, "%s: classic vmstates", fn);
		CHECKF(!strcmp(lj_layout__vmstate_name(l, -2), "c"), "%s: -2 is c", fn);
		CHECKF(!strcmp(lj_layout__vmstate_name(l, -4), "exit"), "%s: -4 is exit", fn);
		CHECKF(!strcmp(lj_layout__vmstate_name(l, -9), "unknown"), "%s: -9 unknown", fn);
	}
	CHECKF(!strcmp(lj_layout__vmstate_name(l, 0), "trace") &&
	      !strcmp(lj_layout__vmstate_name(l, 17), "trace"), "%s: traces", fn);
	CHECKF(!strcmp(lj_layout__vmstate_name(l, -1), "interp"), "%s: interp name", fn);
}

/* -- 2. DWARF ground truth ----------------------------------------------- */

#define DW_NSTRUCTS 10
static const char *const dw_names[DW_NSTRUCTS] = {
	"global_State", "lua_State", "jit_State", "GCfuncC", "GCproto", "GCstr", "GCtrace",
	"SnapShot", "GG_State", "SBuf",
};

struct dw_ctx {
	Dwarf_Die die[DW_NSTRUCTS];
	int found[DW_NSTRUCTS];
	int nfound;
	int64_t en_vmst_interp, en_vmst_c, en_vmst_asm, en_bc_funcf;
};

/* Record an enumerator of interest. */
static void dw_enum(struct dw_ctx *x, Dwarf_Die *en)
{
	Dwarf_Die e;
	int guard = 0;

	if (dwarf_child(en, &e) != 0)
		return;
	do {
		Dwarf_Attribute a;
		Dwarf_Sword v;
		const char *n = dwarf_diename(&e);

		if (!n || !dwarf_attr(&e, DW_AT_const_value, &a) || dwarf_formsdata(&a, &v) != 0)
			continue;
		if (!strcmp(n, "LJ_VMST_INTERP"))
			x->en_vmst_interp = v;
		else if (!strcmp(n, "LJ_VMST_C"))
			x->en_vmst_c = v;
		else if (!strcmp(n, "LJ_VMST_ASM"))
			x->en_vmst_asm = v;
		else if (!strcmp(n, "BC_FUNCF"))
			x->en_bc_funcf = v;
	} while (guard++ < 100000 && dwarf_siblingof(&e, &e) == 0);
}

/* Walk the top-level DIEs of every CU until all structs are found. */
static void dw_collect(Dwarf *dw, struct dw_ctx *x)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (x->nfound < DW_NSTRUCTS &&
	       dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, d;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &d) == 0) {
			do {
				const char *n = dwarf_diename(&d);
				int i, tag = dwarf_tag(&d);

				if (tag == DW_TAG_enumeration_type)
					dw_enum(x, &d);
				if (tag != DW_TAG_structure_type || !n || dwarf_hasattr(&d, DW_AT_declaration))
					continue;
				for (i = 0; i < DW_NSTRUCTS; i++) {
					if (!x->found[i] && !strcmp(n, dw_names[i])) {
						x->die[i] = d;
						x->found[i] = 1;
						x->nfound++;
					}
				}
			} while (dwarf_siblingof(&d, &d) == 0);
		}
		off = next;
	}
}

/* Offset of member m of struct i (or sizeof when m is NULL); -1 if absent. */
static int64_t dw_off(struct dw_ctx *x, int i, const char *m)
{
	Dwarf_Die c;
	int guard = 0;

	if (!x->found[i])
		return -1;
	if (!m)
		return dwarf_bytesize(&x->die[i]);
	if (dwarf_child(&x->die[i], &c) != 0)
		return -1;
	do {
		Dwarf_Attribute a;
		Dwarf_Word v;
		const char *n = dwarf_diename(&c);

		if (dwarf_tag(&c) == DW_TAG_member && n && !strcmp(n, m) &&
		    dwarf_attr(&c, DW_AT_data_member_location, &a) && dwarf_formudata(&a, &v) == 0)
			return (int64_t)v;
	} while (guard++ < 10000 && dwarf_siblingof(&c, &c) == 0);
	return -1;
}

enum { G, L, J, FC, PT, STR, TR, SN, GG, SB };

#define DWCHECK(field, s, m) CHECKF((int64_t)l->field == dw_off(&x, s, m), \
	"tt-260 %s = %u, DWARF %s.%s = %lld", #field, (unsigned)l->field, dw_names[s], \
	(m) ? (m) : "sizeof", (long long)dw_off(&x, s, m))

/* Compare the tarantool-2.6 non-GC64 table with the binary's DWARF. */
static int check_tarantool_dwarf(const char *path)
{
	const struct lj_layout *l = lj_layout__builtin(LJ_FAMILY_TARANTOOL_26, 0);
	struct dw_ctx x;
	Dwarf *dw;
	int fd, i;

	memset(&x, 0, sizeof(x));
	x.en_vmst_interp = x.en_vmst_c = x.en_vmst_asm = x.en_bc_funcf = -100;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	dw = dwarf_begin(fd, DWARF_C_READ);
	CHECKF(dw != NULL, "%s has no readable DWARF: %s", path, dwarf_errmsg(-1));
	if (!dw) {
		close(fd);
		return 0;
	}
	dw_collect(dw, &x);
	for (i = 0; i < DW_NSTRUCTS; i++)
		CHECKF(x.found[i], "struct %s not in the DWARF of %s", dw_names[i], path);

	DWCHECK(g_size, G, NULL);
	DWCHECK(g_vmstate, G, "vmstate");
	DWCHECK(g_cur_L, G, "cur_L");
	DWCHECK(g_jit_base, G, "jit_base");
	DWCHECK(g_mainthref, G, "mainthref");
	CHECKF((int64_t)l->g_tmpbuf_L == dw_off(&x, G, "tmpbuf") + dw_off(&x, SB, "L"), "tmpbuf.L");
	DWCHECK(g_bc_cfunc_int, G, "bc_cfunc_int");
	DWCHECK(g_bc_cfunc_ext, G, "bc_cfunc_ext");
	DWCHECK(g_strempty, G, "strempty");
	DWCHECK(g_hookmask, G, "hookmask");
	DWCHECK(j_trace, J, "trace");
	DWCHECK(j_sizetrace, J, "sizetrace");
	DWCHECK(j_parent, J, "parent");
	DWCHECK(j_exitno, J, "exitno");
	DWCHECK(j_L, J, "L");
	DWCHECK(j_state, J, "state");
	DWCHECK(l_size, L, NULL);
	DWCHECK(l_glref, L, "glref");
	DWCHECK(l_base, L, "base");
	DWCHECK(l_top, L, "top");
	DWCHECK(l_maxstack, L, "maxstack");
	DWCHECK(l_stack, L, "stack");
	DWCHECK(l_cframe, L, "cframe");
	DWCHECK(l_stacksize, L, "stacksize");
	DWCHECK(fn_ffid, FC, "ffid");
	DWCHECK(fn_pc, FC, "pc");
	DWCHECK(fn_f, FC, "f");
	DWCHECK(fn_nupvalues, FC, "nupvalues");
	DWCHECK(fn_upvalue, FC, "upvalue");
	DWCHECK(pt_size, PT, NULL);
	DWCHECK(pt_numparams, PT, "numparams");
	DWCHECK(pt_framesize, PT, "framesize");
	DWCHECK(pt_sizebc, PT, "sizebc");
	DWCHECK(pt_k, PT, "k");
	DWCHECK(pt_uv, PT, "uv");
	DWCHECK(pt_sizekgc, PT, "sizekgc");
	DWCHECK(pt_sizekn, PT, "sizekn");
	DWCHECK(pt_sizept, PT, "sizept");
	DWCHECK(pt_sizeuv, PT, "sizeuv");
	DWCHECK(pt_flags, PT, "flags");
	DWCHECK(pt_trace, PT, "trace");
	DWCHECK(pt_chunkname, PT, "chunkname");
	DWCHECK(pt_firstline, PT, "firstline");
	DWCHECK(pt_numline, PT, "numline");
	DWCHECK(pt_lineinfo, PT, "lineinfo");
	DWCHECK(pt_uvinfo, PT, "uvinfo");
	DWCHECK(pt_varinfo, PT, "varinfo");
	DWCHECK(str_len, STR, "len");
	DWCHECK(str_size, STR, NULL);
	DWCHECK(t_size, TR, NULL);
	DWCHECK(t_nsnap, TR, "nsnap");
	DWCHECK(t_nins, TR, "nins");
	DWCHECK(t_ir, TR, "ir");
	DWCHECK(t_nk, TR, "nk");
	DWCHECK(t_nsnapmap, TR, "nsnapmap");
	DWCHECK(t_snap, TR, "snap");
	DWCHECK(t_snapmap, TR, "snapmap");
	DWCHECK(t_startpt, TR, "startpt");
	DWCHECK(t_startpc, TR, "startpc");
	DWCHECK(t_startins, TR, "startins");
	DWCHECK(t_szmcode, TR, "szmcode");
	DWCHECK(t_mcode, TR, "mcode");
	DWCHECK(t_mcloop, TR, "mcloop");
	DWCHECK(t_spadjust, TR, "spadjust");
	DWCHECK(t_traceno, TR, "traceno");
	DWCHECK(t_link, TR, "link");
	DWCHECK(t_root, TR, "root");
	DWCHECK(t_linktype, TR, "linktype");
	DWCHECK(snap_size, SN, NULL);
	DWCHECK(snap_mapofs, SN, "mapofs");
	DWCHECK(snap_ref, SN, "ref");
	CHECKF(dw_off(&x, SN, "mcofs") == -1 && l->snap_mcofs == ABSENT, "SnapShot.mcofs absent");
	DWCHECK(snap_nslots, SN, "nslots");
	DWCHECK(snap_topslot, SN, "topslot");
	DWCHECK(snap_nent, SN, "nent");
	DWCHECK(snap_count, SN, "count");
	DWCHECK(gg_ofs_g, GG, "g");
	CHECKF(l->g2j == dw_off(&x, GG, "J") - dw_off(&x, GG, "g"), "g2j %d", l->g2j);
	CHECKF(l->disp2g == dw_off(&x, GG, "g") - dw_off(&x, GG, "dispatch"), "disp2g %d", l->disp2g);
	CHECKF(l->vmst.interp == ~x.en_vmst_interp && l->vmst.c == ~x.en_vmst_c &&
	      l->vmst.asm_ == ~x.en_vmst_asm, "vmstates vs LJ_VMST_* enumerators (%lld %lld %lld)",
	      (long long)x.en_vmst_interp, (long long)x.en_vmst_c, (long long)x.en_vmst_asm);
	CHECKF(l->bc_funcf == x.en_bc_funcf, "bc_funcf %u vs BC_FUNCF %lld", l->bc_funcf,
	      (long long)x.en_bc_funcf);
	dwarf_end(dw);
	close(fd);
	return 1;
}

/* Run both parts. */
int main(void)
{
	static const char tarantool[] = "/usr/bin/tarantool";
	const char *ci = getenv("CI");
	int fam, gc64, skipped = 0;

	for (fam = LJ_FAMILY_UPSTREAM; fam < LJ_FAMILY__MAX; fam++)
		for (gc64 = 0; gc64 <= 1; gc64++)
			check_table((enum lj_family)fam, gc64);
	CHECKF(lj_layout__builtin(LJ_FAMILY_UNKNOWN, 1) == NULL, "no table for unknown");
	CHECKF(!strcmp(lj_layout__family_name(LJ_FAMILY_UNKNOWN), "unknown"), "unknown name");
	CHECKF(!strcmp(lj_layout__vmstate_name(NULL, -2), "unknown"), "NULL layout");
	for (fam = LJ_FAMILY_UPSTREAM; fam < LJ_FAMILY__MAX; fam++) {
		int f2;

		for (f2 = fam + 1; f2 < LJ_FAMILY__MAX; f2++)
			CHECKF(strcmp(lj_layout__family_name((enum lj_family)fam),
				     lj_layout__family_name((enum lj_family)f2)) != 0, "family names distinct");
	}

	if (access(tarantool, R_OK) == 0) {
		check_tarantool_dwarf(tarantool);
	} else if (ci && !strcmp(ci, "true")) {
		CHECKF(0, "%s is missing on CI: install the Debian package 'tarantool'", tarantool);
	} else {
		fprintf(stderr, "SKIP: %s not installed (Debian package 'tarantool'): no DWARF check\n",
			tarantool);
		skipped = 1;
	}
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("test_ljlayout: all checks passed%s\n", skipped ? " (DWARF part skipped)" : "");
	return skipped ? 77 : 0;
}
