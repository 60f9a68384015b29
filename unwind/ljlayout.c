/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljlayout.c -- built-in byte layouts of the LuaJIT builds ljsnap knows.
 *
 * One table per (family, GC64/non-GC64).  Struct offsets were transcribed
 * from `gdb ptype /o` dumps of each source tree's own headers, compiled for
 * x86_64 with the JIT and FFI enabled and no GDBJIT/TABLE_BUMP (trees:
 * upstream v2.1 2022-03-20 as in Debian bookworm, upstream v2.1 2025+,
 * OpenResty v2.1-20230119, Tarantool 2.6.0 and tarantool/luajit 2024-08
 * with LUAJIT_SMART_STRINGS).  The interpreter C-frame layout is from
 * lj_frame.h / vm_x64.dasc / vm_x86.dasc, the VM-state numbering from
 * lj_obj.h (Tarantool >= 2.7 renumbered it).  disp2g and g2j are the tree's
 * GG_DISP2G and GG_G2J.  Detection (unwind/detect/ljdetect.c) calibrates the
 * DISPATCH-relative values against the binary and uses these tables for
 * everything that code patterns cannot show.
 */
#include <stddef.h>
#include <stdint.h>
#include "unwind/ljlayout.h"

/* -- Built-in tables ----------------------------------------------------- */

/* Order: for each family in enum order, GC64 first, then non-GC64. */
static const struct lj_layout lj_layout_builtin[] = {
	/* up-deb, GC64 */
	{
		.family = LJ_FAMILY_UPSTREAM, .flags = LJ_LAYOUT_F_GC64 | LJ_LAYOUT_F_MCOFS,
		.ref_size = 8, .disp2g = -3968, .gg_ofs_g = 96, .g2j = 728, .g_size = 728,
		.g_vmstate = 184, .g_cur_L = 368, .g_jit_base = 376, .g_mainthref = 192,
		.g_tmpbuf_L = 224, .g_bc_cfunc_int = 360, .g_bc_cfunc_ext = 364, .g_strempty = 120,
		.g_hookmask = 145, .j_trace = 384, .j_sizetrace = 396, .j_parent = 3016,
		.j_exitno = 3020, .j_L = 128, .j_state = 236, .l_size = 96, .l_glref = 16, .l_base = 32,
		.l_top = 40, .l_maxstack = 48, .l_stack = 56, .l_cframe = 80, .l_stacksize = 88,
		.fn_ffid = 10, .fn_pc = 32, .fn_f = 40, .fn_nupvalues = 11, .fn_upvalue = 48,
		.pt_size = 104, .pt_numparams = 10, .pt_framesize = 11, .pt_sizebc = 12, .pt_k = 32,
		.pt_uv = 40, .pt_sizekgc = 48, .pt_sizekn = 52, .pt_sizept = 56, .pt_sizeuv = 60,
		.pt_flags = 61, .pt_trace = 62, .pt_chunkname = 64, .pt_firstline = 72, .pt_numline = 76,
		.pt_lineinfo = 80, .pt_uvinfo = 88, .pt_varinfo = 96, .str_len = 20, .str_size = 24,
		.t_size = 120, .t_nsnap = 10, .t_nins = 12, .t_ir = 32, .t_nk = 40, .t_nsnapmap = 44,
		.t_snap = 48, .t_snapmap = 56, .t_startpt = 64, .t_startpc = 72, .t_startins = 80,
		.t_szmcode = 84, .t_mcode = 88, .t_mcloop = 96, .t_spadjust = 102, .t_traceno = 104,
		.t_link = 106, .t_root = 108, .t_linktype = 116, .snap_size = 12, .snap_mapofs = 0,
		.snap_ref = 4, .snap_mcofs = 6, .snap_nslots = 8, .snap_topslot = 9, .snap_nent = 10,
		.snap_count = 11, .cf_size = 80, .cf_nres = 8, .cf_errf = 12, .cf_l = 16, .cf_pc = 24,
		.cf_prev = 32, .cf_vmstate = UINT32_MAX, .bc_funcf = 89,
		.vmst = { .interp = -1, .c = -2, .gc = -3, .exit = -4, .record = -5, .opt = -6,
			  .asm_ = -7, .lfunc = 0, .ffunc = 0, .cfunc = 0 },
	},
	/* up-deb, non-GC64 */
	{
		.family = LJ_FAMILY_UPSTREAM, .flags = LJ_LAYOUT_F_MCOFS, .ref_size = 4, .disp2g = -3176,
		.gg_ofs_g = 64, .g2j = 488, .g_size = 488, .g_vmstate = 136, .g_cur_L = 288,
		.g_jit_base = 292, .g_mainthref = 140, .g_tmpbuf_L = 168, .g_bc_cfunc_int = 280,
		.g_bc_cfunc_ext = 284, .g_strempty = 76, .g_hookmask = 97, .j_trace = 360,
		.j_sizetrace = 372, .j_parent = 2464, .j_exitno = 2468, .j_L = 104, .j_state = 212,
		.l_size = 64, .l_glref = 8, .l_base = 16, .l_top = 24, .l_maxstack = 32, .l_stack = 36,
		.l_cframe = 48, .l_stacksize = 56, .fn_ffid = 6, .fn_pc = 16, .fn_f = 24,
		.fn_nupvalues = 7, .fn_upvalue = 32, .pt_size = 64, .pt_numparams = 6, .pt_framesize = 7,
		.pt_sizebc = 8, .pt_k = 16, .pt_uv = 20, .pt_sizekgc = 24, .pt_sizekn = 28,
		.pt_sizept = 32, .pt_sizeuv = 36, .pt_flags = 37, .pt_trace = 38, .pt_chunkname = 40,
		.pt_firstline = 44, .pt_numline = 48, .pt_lineinfo = 52, .pt_uvinfo = 56,
		.pt_varinfo = 60, .str_len = 16, .str_size = 20, .t_size = 96, .t_nsnap = 6, .t_nins = 8,
		.t_ir = 16, .t_nk = 24, .t_nsnapmap = 28, .t_snap = 32, .t_snapmap = 40, .t_startpt = 48,
		.t_startpc = 52, .t_startins = 56, .t_szmcode = 60, .t_mcode = 64, .t_mcloop = 72,
		.t_spadjust = 78, .t_traceno = 80, .t_link = 82, .t_root = 84, .t_linktype = 92,
		.snap_size = 12, .snap_mapofs = 0, .snap_ref = 4, .snap_mcofs = 6, .snap_nslots = 8,
		.snap_topslot = 9, .snap_nent = 10, .snap_count = 11, .cf_size = 80, .cf_nres = 16,
		.cf_errf = 20, .cf_l = 24, .cf_pc = 28, .cf_prev = 32, .cf_vmstate = UINT32_MAX,
		.bc_funcf = 89,
		.vmst = { .interp = -1, .c = -2, .gc = -3, .exit = -4, .record = -5, .opt = -6,
			  .asm_ = -7, .lfunc = 0, .ffunc = 0, .cfunc = 0 },
	},
	/* up-head, GC64 */
	{
		.family = LJ_FAMILY_UPSTREAM_HEAD, .flags = LJ_LAYOUT_F_GC64 | LJ_LAYOUT_F_MCOFS,
		.ref_size = 8, .disp2g = -4000, .gg_ofs_g = 96, .g2j = 744, .g_size = 744,
		.g_vmstate = 184, .g_cur_L = 376, .g_jit_base = 384, .g_mainthref = 192,
		.g_tmpbuf_L = 224, .g_bc_cfunc_int = 368, .g_bc_cfunc_ext = 372, .g_strempty = 120,
		.g_hookmask = 145, .j_trace = 384, .j_sizetrace = 396, .j_parent = 3016,
		.j_exitno = 3020, .j_L = 128, .j_state = 236, .l_size = 96, .l_glref = 16, .l_base = 32,
		.l_top = 40, .l_maxstack = 48, .l_stack = 56, .l_cframe = 80, .l_stacksize = 88,
		.fn_ffid = 10, .fn_pc = 32, .fn_f = 40, .fn_nupvalues = 11, .fn_upvalue = 48,
		.pt_size = 104, .pt_numparams = 10, .pt_framesize = 11, .pt_sizebc = 12, .pt_k = 32,
		.pt_uv = 40, .pt_sizekgc = 48, .pt_sizekn = 52, .pt_sizept = 56, .pt_sizeuv = 60,
		.pt_flags = 61, .pt_trace = 62, .pt_chunkname = 64, .pt_firstline = 72, .pt_numline = 76,
		.pt_lineinfo = 80, .pt_uvinfo = 88, .pt_varinfo = 96, .str_len = 20, .str_size = 24,
		.t_size = 120, .t_nsnap = 10, .t_nins = 12, .t_ir = 32, .t_nk = 40, .t_nsnapmap = 44,
		.t_snap = 48, .t_snapmap = 56, .t_startpt = 64, .t_startpc = 72, .t_startins = 80,
		.t_szmcode = 84, .t_mcode = 88, .t_mcloop = 96, .t_spadjust = 102, .t_traceno = 104,
		.t_link = 106, .t_root = 108, .t_linktype = 116, .snap_size = 12, .snap_mapofs = 0,
		.snap_ref = 4, .snap_mcofs = 6, .snap_nslots = 8, .snap_topslot = 9, .snap_nent = 10,
		.snap_count = 11, .cf_size = 80, .cf_nres = 8, .cf_errf = 12, .cf_l = 16, .cf_pc = 24,
		.cf_prev = 32, .cf_vmstate = UINT32_MAX, .bc_funcf = 96,
		.vmst = { .interp = -1, .c = -2, .gc = -3, .exit = -4, .record = -5, .opt = -6,
			  .asm_ = -7, .lfunc = 0, .ffunc = 0, .cfunc = 0 },
	},
	/* up-head, non-GC64 */
	{
		.family = LJ_FAMILY_UPSTREAM_HEAD, .flags = LJ_LAYOUT_F_MCOFS, .ref_size = 4,
		.disp2g = -3208, .gg_ofs_g = 64, .g2j = 504, .g_size = 504, .g_vmstate = 136,
		.g_cur_L = 296, .g_jit_base = 300, .g_mainthref = 140, .g_tmpbuf_L = 168,
		.g_bc_cfunc_int = 288, .g_bc_cfunc_ext = 292, .g_strempty = 76, .g_hookmask = 97,
		.j_trace = 360, .j_sizetrace = 372, .j_parent = 2464, .j_exitno = 2468, .j_L = 104,
		.j_state = 212, .l_size = 64, .l_glref = 8, .l_base = 16, .l_top = 24, .l_maxstack = 32,
		.l_stack = 36, .l_cframe = 48, .l_stacksize = 56, .fn_ffid = 6, .fn_pc = 16, .fn_f = 24,
		.fn_nupvalues = 7, .fn_upvalue = 32, .pt_size = 64, .pt_numparams = 6, .pt_framesize = 7,
		.pt_sizebc = 8, .pt_k = 16, .pt_uv = 20, .pt_sizekgc = 24, .pt_sizekn = 28,
		.pt_sizept = 32, .pt_sizeuv = 36, .pt_flags = 37, .pt_trace = 38, .pt_chunkname = 40,
		.pt_firstline = 44, .pt_numline = 48, .pt_lineinfo = 52, .pt_uvinfo = 56,
		.pt_varinfo = 60, .str_len = 16, .str_size = 20, .t_size = 96, .t_nsnap = 6, .t_nins = 8,
		.t_ir = 16, .t_nk = 24, .t_nsnapmap = 28, .t_snap = 32, .t_snapmap = 40, .t_startpt = 48,
		.t_startpc = 52, .t_startins = 56, .t_szmcode = 60, .t_mcode = 64, .t_mcloop = 72,
		.t_spadjust = 78, .t_traceno = 80, .t_link = 82, .t_root = 84, .t_linktype = 92,
		.snap_size = 12, .snap_mapofs = 0, .snap_ref = 4, .snap_mcofs = 6, .snap_nslots = 8,
		.snap_topslot = 9, .snap_nent = 10, .snap_count = 11, .cf_size = 80, .cf_nres = 16,
		.cf_errf = 20, .cf_l = 24, .cf_pc = 28, .cf_prev = 32, .cf_vmstate = UINT32_MAX,
		.bc_funcf = 96,
		.vmst = { .interp = -1, .c = -2, .gc = -3, .exit = -4, .record = -5, .opt = -6,
			  .asm_ = -7, .lfunc = 0, .ffunc = 0, .cfunc = 0 },
	},
	/* or-deb, GC64 */
	{
		.family = LJ_FAMILY_OPENRESTY, .flags = LJ_LAYOUT_F_GC64 | LJ_LAYOUT_F_MCOFS,
		.ref_size = 8, .disp2g = -4008, .gg_ofs_g = 112, .g2j = 736, .g_size = 736,
		.g_vmstate = 184, .g_cur_L = 368, .g_jit_base = 376, .g_mainthref = 192,
		.g_tmpbuf_L = 224, .g_bc_cfunc_int = 360, .g_bc_cfunc_ext = 364, .g_strempty = 120,
		.g_hookmask = 145, .j_trace = 384, .j_sizetrace = 396, .j_parent = 3016,
		.j_exitno = 3020, .j_L = 128, .j_state = 236, .l_size = 112, .l_glref = 16, .l_base = 32,
		.l_top = 40, .l_maxstack = 48, .l_stack = 56, .l_cframe = 80, .l_stacksize = 88,
		.fn_ffid = 10, .fn_pc = 32, .fn_f = 40, .fn_nupvalues = 11, .fn_upvalue = 48,
		.pt_size = 104, .pt_numparams = 10, .pt_framesize = 11, .pt_sizebc = 12, .pt_k = 32,
		.pt_uv = 40, .pt_sizekgc = 48, .pt_sizekn = 52, .pt_sizept = 56, .pt_sizeuv = 60,
		.pt_flags = 61, .pt_trace = 62, .pt_chunkname = 64, .pt_firstline = 72, .pt_numline = 76,
		.pt_lineinfo = 80, .pt_uvinfo = 88, .pt_varinfo = 96, .str_len = 20, .str_size = 24,
		.t_size = 120, .t_nsnap = 10, .t_nins = 12, .t_ir = 32, .t_nk = 40, .t_nsnapmap = 44,
		.t_snap = 48, .t_snapmap = 56, .t_startpt = 64, .t_startpc = 72, .t_startins = 80,
		.t_szmcode = 84, .t_mcode = 88, .t_mcloop = 96, .t_spadjust = 102, .t_traceno = 104,
		.t_link = 106, .t_root = 108, .t_linktype = 116, .snap_size = 12, .snap_mapofs = 0,
		.snap_ref = 4, .snap_mcofs = 6, .snap_nslots = 8, .snap_topslot = 9, .snap_nent = 10,
		.snap_count = 11, .cf_size = 80, .cf_nres = 8, .cf_errf = 12, .cf_l = 16, .cf_pc = 24,
		.cf_prev = 32, .cf_vmstate = UINT32_MAX, .bc_funcf = 89,
		.vmst = { .interp = -1, .c = -2, .gc = -3, .exit = -4, .record = -5, .opt = -6,
			  .asm_ = -7, .lfunc = 0, .ffunc = 0, .cfunc = 0 },
	},
	/* or-deb, non-GC64 */
	{
		.family = LJ_FAMILY_OPENRESTY, .flags = LJ_LAYOUT_F_MCOFS, .ref_size = 4,
		.disp2g = -3216, .gg_ofs_g = 80, .g2j = 496, .g_size = 496, .g_vmstate = 136,
		.g_cur_L = 288, .g_jit_base = 292, .g_mainthref = 140, .g_tmpbuf_L = 168,
		.g_bc_cfunc_int = 280, .g_bc_cfunc_ext = 284, .g_strempty = 76, .g_hookmask = 97,
		.j_trace = 360, .j_sizetrace = 372, .j_parent = 2464, .j_exitno = 2468, .j_L = 104,
		.j_state = 212, .l_size = 80, .l_glref = 8, .l_base = 16, .l_top = 24, .l_maxstack = 32,
		.l_stack = 36, .l_cframe = 48, .l_stacksize = 56, .fn_ffid = 6, .fn_pc = 16, .fn_f = 24,
		.fn_nupvalues = 7, .fn_upvalue = 32, .pt_size = 64, .pt_numparams = 6, .pt_framesize = 7,
		.pt_sizebc = 8, .pt_k = 16, .pt_uv = 20, .pt_sizekgc = 24, .pt_sizekn = 28,
		.pt_sizept = 32, .pt_sizeuv = 36, .pt_flags = 37, .pt_trace = 38, .pt_chunkname = 40,
		.pt_firstline = 44, .pt_numline = 48, .pt_lineinfo = 52, .pt_uvinfo = 56,
		.pt_varinfo = 60, .str_len = 16, .str_size = 20, .t_size = 96, .t_nsnap = 6, .t_nins = 8,
		.t_ir = 16, .t_nk = 24, .t_nsnapmap = 28, .t_snap = 32, .t_snapmap = 40, .t_startpt = 48,
		.t_startpc = 52, .t_startins = 56, .t_szmcode = 60, .t_mcode = 64, .t_mcloop = 72,
		.t_spadjust = 78, .t_traceno = 80, .t_link = 82, .t_root = 84, .t_linktype = 92,
		.snap_size = 12, .snap_mapofs = 0, .snap_ref = 4, .snap_mcofs = 6, .snap_nslots = 8,
		.snap_topslot = 9, .snap_nent = 10, .snap_count = 11, .cf_size = 80, .cf_nres = 16,
		.cf_errf = 20, .cf_l = 24, .cf_pc = 28, .cf_prev = 32, .cf_vmstate = UINT32_MAX,
		.bc_funcf = 89,
		.vmst = { .interp = -1, .c = -2, .gc = -3, .exit = -4, .record = -5, .opt = -6,
			  .asm_ = -7, .lfunc = 0, .ffunc = 0, .cfunc = 0 },
	},
	/* tt-260, GC64 */
	{
		.family = LJ_FAMILY_TARANTOOL_26, .flags = LJ_LAYOUT_F_GC64, .ref_size = 8,
		.disp2g = -3952, .gg_ofs_g = 96, .g2j = 704, .g_size = 704, .g_vmstate = 160,
		.g_cur_L = 376, .g_jit_base = 384, .g_mainthref = 232, .g_tmpbuf_L = 192,
		.g_bc_cfunc_int = 368, .g_bc_cfunc_ext = 372, .g_strempty = 200, .g_hookmask = 225,
		.j_trace = 392, .j_sizetrace = 404, .j_parent = 3032, .j_exitno = 3036, .j_L = 128,
		.j_state = 236, .l_size = 96, .l_glref = 16, .l_base = 32, .l_top = 40, .l_maxstack = 48,
		.l_stack = 56, .l_cframe = 80, .l_stacksize = 88, .fn_ffid = 10, .fn_pc = 32, .fn_f = 40,
		.fn_nupvalues = 11, .fn_upvalue = 48, .pt_size = 104, .pt_numparams = 10,
		.pt_framesize = 11, .pt_sizebc = 12, .pt_k = 32, .pt_uv = 40, .pt_sizekgc = 48,
		.pt_sizekn = 52, .pt_sizept = 56, .pt_sizeuv = 60, .pt_flags = 61, .pt_trace = 62,
		.pt_chunkname = 64, .pt_firstline = 72, .pt_numline = 76, .pt_lineinfo = 80,
		.pt_uvinfo = 88, .pt_varinfo = 96, .str_len = 16, .str_size = 24, .t_size = 120,
		.t_nsnap = 10, .t_nins = 12, .t_ir = 32, .t_nk = 40, .t_nsnapmap = 44, .t_snap = 48,
		.t_snapmap = 56, .t_startpt = 64, .t_startpc = 72, .t_startins = 80, .t_szmcode = 84,
		.t_mcode = 88, .t_mcloop = 96, .t_spadjust = 102, .t_traceno = 104, .t_link = 106,
		.t_root = 108, .t_linktype = 116, .snap_size = 12, .snap_mapofs = 0, .snap_ref = 4,
		.snap_mcofs = UINT32_MAX, .snap_nslots = 6, .snap_topslot = 7, .snap_nent = 8,
		.snap_count = 9, .cf_size = 80, .cf_nres = 8, .cf_errf = 12, .cf_l = 16, .cf_pc = 24,
		.cf_prev = 32, .cf_vmstate = UINT32_MAX, .bc_funcf = 89,
		.vmst = { .interp = -1, .c = -2, .gc = -3, .exit = -4, .record = -5, .opt = -6,
			  .asm_ = -7, .lfunc = 0, .ffunc = 0, .cfunc = 0 },
	},
	/* tt-260, non-GC64 */
	{
		.family = LJ_FAMILY_TARANTOOL_26, .flags = 0, .ref_size = 4, .disp2g = -3144,
		.gg_ofs_g = 64, .g2j = 448, .g_size = 448, .g_vmstate = 120, .g_cur_L = 280,
		.g_jit_base = 284, .g_mainthref = 160, .g_tmpbuf_L = 136, .g_bc_cfunc_int = 272,
		.g_bc_cfunc_ext = 276, .g_strempty = 140, .g_hookmask = 157, .j_trace = 368,
		.j_sizetrace = 380, .j_parent = 2480, .j_exitno = 2484, .j_L = 104, .j_state = 212,
		.l_size = 64, .l_glref = 8, .l_base = 16, .l_top = 24, .l_maxstack = 32, .l_stack = 36,
		.l_cframe = 48, .l_stacksize = 56, .fn_ffid = 6, .fn_pc = 16, .fn_f = 24,
		.fn_nupvalues = 7, .fn_upvalue = 32, .pt_size = 64, .pt_numparams = 6, .pt_framesize = 7,
		.pt_sizebc = 8, .pt_k = 16, .pt_uv = 20, .pt_sizekgc = 24, .pt_sizekn = 28,
		.pt_sizept = 32, .pt_sizeuv = 36, .pt_flags = 37, .pt_trace = 38, .pt_chunkname = 40,
		.pt_firstline = 44, .pt_numline = 48, .pt_lineinfo = 52, .pt_uvinfo = 56,
		.pt_varinfo = 60, .str_len = 12, .str_size = 16, .t_size = 96, .t_nsnap = 6, .t_nins = 8,
		.t_ir = 16, .t_nk = 24, .t_nsnapmap = 28, .t_snap = 32, .t_snapmap = 40, .t_startpt = 48,
		.t_startpc = 52, .t_startins = 56, .t_szmcode = 60, .t_mcode = 64, .t_mcloop = 72,
		.t_spadjust = 78, .t_traceno = 80, .t_link = 82, .t_root = 84, .t_linktype = 92,
		.snap_size = 12, .snap_mapofs = 0, .snap_ref = 4, .snap_mcofs = UINT32_MAX,
		.snap_nslots = 6, .snap_topslot = 7, .snap_nent = 8, .snap_count = 9, .cf_size = 80,
		.cf_nres = 16, .cf_errf = 20, .cf_l = 24, .cf_pc = 28, .cf_prev = 32,
		.cf_vmstate = UINT32_MAX, .bc_funcf = 89,
		.vmst = { .interp = -1, .c = -2, .gc = -3, .exit = -4, .record = -5, .opt = -6,
			  .asm_ = -7, .lfunc = 0, .ffunc = 0, .cfunc = 0 },
	},
	/* tt-head, GC64 */
	{
		.family = LJ_FAMILY_TARANTOOL_HEAD, .flags = LJ_LAYOUT_F_GC64 | LJ_LAYOUT_F_MCOFS,
		.ref_size = 8, .disp2g = -4112, .gg_ofs_g = 96, .g2j = 840, .g_size = 840,
		.g_vmstate = 440, .g_cur_L = 480, .g_jit_base = 496, .g_mainthref = 336,
		.g_tmpbuf_L = 296, .g_bc_cfunc_int = 472, .g_bc_cfunc_ext = 476, .g_strempty = 304,
		.g_hookmask = 329, .j_trace = 392, .j_sizetrace = 404, .j_parent = 3024,
		.j_exitno = 3028, .j_L = 128, .j_state = 236, .l_size = 96, .l_glref = 16, .l_base = 32,
		.l_top = 40, .l_maxstack = 48, .l_stack = 56, .l_cframe = 80, .l_stacksize = 88,
		.fn_ffid = 10, .fn_pc = 32, .fn_f = 40, .fn_nupvalues = 11, .fn_upvalue = 48,
		.pt_size = 104, .pt_numparams = 10, .pt_framesize = 11, .pt_sizebc = 12, .pt_k = 32,
		.pt_uv = 40, .pt_sizekgc = 48, .pt_sizekn = 52, .pt_sizept = 56, .pt_sizeuv = 60,
		.pt_flags = 61, .pt_trace = 62, .pt_chunkname = 64, .pt_firstline = 72, .pt_numline = 76,
		.pt_lineinfo = 80, .pt_uvinfo = 88, .pt_varinfo = 96, .str_len = 16, .str_size = 24,
		.t_size = 120, .t_nsnap = 10, .t_nins = 12, .t_ir = 32, .t_nk = 40, .t_nsnapmap = 44,
		.t_snap = 48, .t_snapmap = 56, .t_startpt = 64, .t_startpc = 72, .t_startins = 80,
		.t_szmcode = 84, .t_mcode = 88, .t_mcloop = 96, .t_spadjust = 102, .t_traceno = 104,
		.t_link = 106, .t_root = 108, .t_linktype = 116, .snap_size = 12, .snap_mapofs = 0,
		.snap_ref = 4, .snap_mcofs = 6, .snap_nslots = 8, .snap_topslot = 9, .snap_nent = 10,
		.snap_count = 11, .cf_size = 96, .cf_nres = 8, .cf_errf = 12, .cf_l = 16, .cf_pc = 24,
		.cf_prev = 48, .cf_vmstate = 32, .bc_funcf = 89,
		.vmst = { .interp = -1, .c = 0, .gc = -5, .exit = -6, .record = -7, .opt = -8,
			  .asm_ = -9, .lfunc = -2, .ffunc = -3, .cfunc = -4 },
	},
	/* tt-head, non-GC64 */
	{
		.family = LJ_FAMILY_TARANTOOL_HEAD, .flags = LJ_LAYOUT_F_MCOFS, .ref_size = 4,
		.disp2g = -3304, .gg_ofs_g = 64, .g2j = 584, .g_size = 584, .g_vmstate = 352,
		.g_cur_L = 392, .g_jit_base = 400, .g_mainthref = 272, .g_tmpbuf_L = 244,
		.g_bc_cfunc_int = 384, .g_bc_cfunc_ext = 388, .g_strempty = 248, .g_hookmask = 265,
		.j_trace = 368, .j_sizetrace = 380, .j_parent = 2472, .j_exitno = 2476, .j_L = 104,
		.j_state = 212, .l_size = 64, .l_glref = 8, .l_base = 16, .l_top = 24, .l_maxstack = 32,
		.l_stack = 36, .l_cframe = 48, .l_stacksize = 56, .fn_ffid = 6, .fn_pc = 16, .fn_f = 24,
		.fn_nupvalues = 7, .fn_upvalue = 32, .pt_size = 64, .pt_numparams = 6, .pt_framesize = 7,
		.pt_sizebc = 8, .pt_k = 16, .pt_uv = 20, .pt_sizekgc = 24, .pt_sizekn = 28,
		.pt_sizept = 32, .pt_sizeuv = 36, .pt_flags = 37, .pt_trace = 38, .pt_chunkname = 40,
		.pt_firstline = 44, .pt_numline = 48, .pt_lineinfo = 52, .pt_uvinfo = 56,
		.pt_varinfo = 60, .str_len = 12, .str_size = 16, .t_size = 96, .t_nsnap = 6, .t_nins = 8,
		.t_ir = 16, .t_nk = 24, .t_nsnapmap = 28, .t_snap = 32, .t_snapmap = 40, .t_startpt = 48,
		.t_startpc = 52, .t_startins = 56, .t_szmcode = 60, .t_mcode = 64, .t_mcloop = 72,
		.t_spadjust = 78, .t_traceno = 80, .t_link = 82, .t_root = 84, .t_linktype = 92,
		.snap_size = 12, .snap_mapofs = 0, .snap_ref = 4, .snap_mcofs = 6, .snap_nslots = 8,
		.snap_topslot = 9, .snap_nent = 10, .snap_count = 11, .cf_size = 96, .cf_nres = 16,
		.cf_errf = 20, .cf_l = 24, .cf_pc = 28, .cf_prev = 48, .cf_vmstate = 32, .bc_funcf = 89,
		.vmst = { .interp = -1, .c = 0, .gc = -5, .exit = -6, .record = -7, .opt = -8,
			  .asm_ = -9, .lfunc = -2, .ffunc = -3, .cfunc = -4 },
	},
};

#define LJ_LAYOUT_NBUILTIN (sizeof(lj_layout_builtin) / sizeof(lj_layout_builtin[0]))

/* The built-in table for a family and mode, or NULL for an unknown family. */
const struct lj_layout *lj_layout__builtin(enum lj_family family, int gc64)
{
	size_t i;

	for (i = 0; i < LJ_LAYOUT_NBUILTIN; i++) {
		const struct lj_layout *lay = &lj_layout_builtin[i];

		if (lay->family == (uint32_t)family &&
		    !!(lay->flags & LJ_LAYOUT_F_GC64) == !!gc64)
			return lay;
	}
	return NULL;
}

/* -- Names --------------------------------------------------------------- */

/* Short stable name of a family ("upstream", "openresty", ...). */
const char *lj_layout__family_name(enum lj_family family)
{
	switch (family) {
	case LJ_FAMILY_UPSTREAM:	return "upstream";
	case LJ_FAMILY_UPSTREAM_HEAD:	return "upstream-head";
	case LJ_FAMILY_OPENRESTY:	return "openresty";
	case LJ_FAMILY_TARANTOOL_26:	return "tarantool-2.6";
	case LJ_FAMILY_TARANTOOL_HEAD:	return "tarantool-head";
	case LJ_FAMILY_UNKNOWN:
	case LJ_FAMILY__MAX:
		break;
	}
	return "unknown";
}

/* Decode g->vmstate with the layout's numbering: "trace" for >= 0. */
const char *lj_layout__vmstate_name(const struct lj_layout *lay, int32_t vmstate)
{
	const struct lj_vmstates *v;

	if (vmstate >= 0)
		return "trace";
	if (!lay)
		return "unknown";
	v = &lay->vmst;
	/* 0 marks a state the build does not have; vmstate < 0 never matches it. */
	if (vmstate == v->interp)	return "interp";
	if (vmstate == v->c)		return "c";
	if (vmstate == v->gc)		return "gc";
	if (vmstate == v->exit)		return "exit";
	if (vmstate == v->record)	return "record";
	if (vmstate == v->opt)		return "opt";
	if (vmstate == v->asm_)		return "asm";
	if (vmstate == v->lfunc)	return "lfunc";
	if (vmstate == v->ffunc)	return "ffunc";
	if (vmstate == v->cfunc)	return "cfunc";
	return "unknown";
}
