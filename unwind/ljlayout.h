/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljlayout.h -- the byte layout of one LuaJIT build, as data.
 *
 * Everything the walker and the BPF program need to know about a build
 * (struct offsets, GC64/FR2, C-frame layout, VM-state numbering) lives in
 * struct lj_layout.  Detection (unwind/detect/ljdetect.c) fills one in by
 * calibrating against the binary's code and validating against live memory;
 * the built-in tables (ljlayout.c) are the cross-check and the fallback.
 * The capture file stores the layout per process, so `report` never needs
 * the target binary to decode Lua frames.
 */
#ifndef LJSNAP_LJLAYOUT_H
#define LJSNAP_LJLAYOUT_H

#include <stdint.h>

enum lj_family {
	LJ_FAMILY_UNKNOWN = 0,
	LJ_FAMILY_UPSTREAM,	/* LuaJIT 2.1 (Debian luajit, 2022 snapshot) */
	LJ_FAMILY_UPSTREAM_HEAD,/* LuaJIT 2.1 rolling (2025+: vmthref, 39 gc roots) */
	LJ_FAMILY_OPENRESTY,	/* OpenResty luajit2 (exdata, saved_jit_base) */
	LJ_FAMILY_TARANTOOL_26,	/* Tarantool <= 2.6 */
	LJ_FAMILY_TARANTOOL_HEAD,/* Tarantool >= 2.7 (renumbered vmstates, 96-byte cframe) */
	LJ_FAMILY__MAX
};

#define LJ_LAYOUT_F_GC64	0x01	/* GC64: 8-byte GCRef, FR2 two-slot frames */
#define LJ_LAYOUT_F_DUALNUM	0x02	/* dual-number mode (int32 TValues) */
#define LJ_LAYOUT_F_MCOFS	0x04	/* SnapShot has mcofs */
#define LJ_LAYOUT_F_NOJIT	0x08	/* built without the JIT */

/* VM states as stored in g->vmstate (negative values, ~LJ_VMST_x). 0 = absent. */
struct lj_vmstates {
	int32_t interp, c, gc, exit, record, opt, asm_;
	int32_t lfunc, ffunc, cfunc;	/* Tarantool >= 2.7 only */
};

struct lj_layout {
	uint32_t family;		/* enum lj_family */
	uint32_t flags;			/* LJ_LAYOUT_F_* */
	uint32_t ref_size;		/* GCRef/MRef bytes: 8 (GC64) or 4 */
	int32_t disp2g;			/* g = DISPATCH + disp2g (0 = unknown) */
	uint32_t gg_ofs_g;		/* sizeof(lua_State) == GG_OFS(g) */
	int32_t g2j;			/* J = g + g2j (0 = no JIT) */

	/* global_State */
	uint32_t g_size;
	uint32_t g_vmstate, g_cur_L, g_jit_base, g_mainthref, g_tmpbuf_L;
	uint32_t g_bc_cfunc_int, g_bc_cfunc_ext, g_strempty, g_hookmask;

	/* jit_State */
	uint32_t j_trace, j_sizetrace, j_parent, j_exitno, j_L, j_state;

	/* lua_State */
	uint32_t l_size;
	uint32_t l_glref, l_base, l_top, l_maxstack, l_stack, l_cframe, l_stacksize;

	/* GCfunc (C and Lua) */
	uint32_t fn_ffid, fn_pc, fn_f, fn_nupvalues, fn_upvalue /* GCfuncC upvalue[0] */;

	/* GCproto; bytecode starts at pt + pt_size */
	uint32_t pt_size;
	uint32_t pt_numparams, pt_framesize, pt_sizebc, pt_k, pt_uv, pt_sizekgc, pt_sizekn,
		pt_sizept, pt_sizeuv, pt_flags, pt_trace, pt_chunkname, pt_firstline,
		pt_numline, pt_lineinfo, pt_uvinfo, pt_varinfo;

	/* GCstr; data at str + str_size */
	uint32_t str_len, str_size;

	/* GCtrace */
	uint32_t t_size;
	uint32_t t_nsnap, t_nins, t_ir, t_nk, t_nsnapmap, t_snap, t_snapmap, t_startpt,
		t_startpc, t_startins, t_szmcode, t_mcode, t_mcloop, t_spadjust, t_traceno,
		t_link, t_root, t_linktype;

	/* SnapShot */
	uint32_t snap_size, snap_mapofs, snap_ref, snap_mcofs /* UINT32_MAX if absent */,
		snap_nslots, snap_topslot, snap_nent, snap_count;

	/* Interpreter C frame (x86_64) */
	uint32_t cf_size, cf_nres, cf_errf, cf_l, cf_pc, cf_prev;
	uint32_t cf_vmstate;		/* SAVE_VMSTATE (Tarantool >= 2.7), UINT32_MAX if absent */

	/* Bytecode numbering that moved between trees */
	uint32_t bc_funcf;		/* first function-header opcode (89, or 96 in up-head) */

	struct lj_vmstates vmst;
};

/* Every member of struct lj_layout is a 32-bit integer; this table names
 * them so the layout can be stored as a self-describing map and printed. */
struct lj_layout_field {
	const char *name;
	uint32_t offset;	/* offsetof(struct lj_layout, ...) */
};
extern const struct lj_layout_field lj_layout__fields[];
extern const size_t lj_layout__nfields;

/* Built-in per-build tables (ljlayout.c). */
const struct lj_layout *lj_layout__builtin(enum lj_family family, int gc64);
const char *lj_layout__family_name(enum lj_family family);

/* Decode a vmstate value into a short name ("interp", "c", "gc", "trace"...). */
const char *lj_layout__vmstate_name(const struct lj_layout *lay, int32_t vmstate);

#endif /* LJSNAP_LJLAYOUT_H */
