/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljircall_names.h -- data: the function names of LuaJIT's IR call table,
 * lj_ir_callinfo[], in index order, one list per LuaJIT source (included
 * by ljnames.c only).
 *
 * lj_ir.c builds the table from IRCALLDEF in lj_ircall.h: one entry
 * { func, flags } per line whatever the build, func NULL where the line's
 * condition (FPMATH, SOFTFP, FFI, BUFFER, ...) is off, then { NULL, 0 }.
 * The lists are IRCALLDEF's second column, copied from the lj_ircall.h of
 * each source; a condition is noted where it is not ANY.  To add a LuaJIT
 * version, add its list and a line in ljirc_lists[] (ljnames.c).
 */

/* Upstream LuaJIT 2.1 (Debian's luajit 2.1.0~beta3+git20220320). */
static const char *const ljirc_upstream_2022[] = {
	"lj_str_cmp",
	"lj_str_find",
	"lj_str_new",
	"lj_strscan_num",
	"lj_strfmt_int",
	"lj_strfmt_num",
	"lj_strfmt_char",
	"lj_strfmt_putint",
	"lj_strfmt_putnum",
	"lj_strfmt_putquoted",
	"lj_strfmt_putfxint",
	"lj_strfmt_putfnum_int",
	"lj_strfmt_putfnum_uint",
	"lj_strfmt_putfnum",
	"lj_strfmt_putfstr",
	"lj_strfmt_putfchar",
	"lj_buf_putmem",
	"lj_buf_putstr",
	"lj_buf_putchar",
	"lj_buf_putstr_reverse",
	"lj_buf_putstr_lower",
	"lj_buf_putstr_upper",
	"lj_buf_putstr_rep",
	"lj_buf_puttab",
	"lj_bufx_set",	/* BUFFER */
	"lj_bufx_more",	/* BUFFFI */
	"lj_serialize_put",	/* BUFFER */
	"lj_serialize_get",	/* BUFFER */
	"lj_serialize_encode",	/* BUFFER */
	"lj_serialize_decode",	/* BUFFER */
	"lj_buf_tostr",
	"lj_tab_new_ah",
	"lj_tab_new1",
	"lj_tab_dup",
	"lj_tab_clear",
	"lj_tab_newkey",
	"lj_tab_keyindex",
	"lj_vm_next",
	"lj_tab_len",
	"lj_tab_len_hint",
	"lj_gc_step_jit",
	"lj_gc_barrieruv",
	"lj_mem_newgco",
	"lj_prng_u64d",
	"lj_vm_modi",
	"log10",
	"exp",
	"sin",
	"cos",
	"tan",
	"asin",
	"acos",
	"atan",
	"sinh",
	"cosh",
	"tanh",
	"fputc",
	"fwrite",
	"fflush",
	"lj_vm_floor",	/* FPMATH */
	"lj_vm_ceil",	/* FPMATH */
	"lj_vm_trunc",	/* FPMATH */
	"sqrt",	/* FPMATH */
	"log",
	"lj_vm_log2",
	"pow",
	"atan2",
	"ldexp",
	"lj_vm_tobit",	/* SOFTFP */
	"softfp_add",	/* SOFTFP */
	"softfp_sub",	/* SOFTFP */
	"softfp_mul",	/* SOFTFP */
	"softfp_div",	/* SOFTFP */
	"softfp_cmp",	/* SOFTFP */
	"softfp_i2d",	/* SOFTFP */
	"softfp_d2i",	/* SOFTFP */
	"lj_vm_sfmin",	/* SOFTFP_MIPS */
	"lj_vm_sfmax",	/* SOFTFP_MIPS */
	"lj_vm_tointg",	/* SOFTFP_MIPS64 */
	"softfp_ui2d",	/* SOFTFP_FFI */
	"softfp_f2d",	/* SOFTFP_FFI */
	"softfp_d2ui",	/* SOFTFP_FFI */
	"softfp_d2f",	/* SOFTFP_FFI */
	"softfp_i2f",	/* SOFTFP_FFI */
	"softfp_ui2f",	/* SOFTFP_FFI */
	"softfp_f2i",	/* SOFTFP_FFI */
	"softfp_f2ui",	/* SOFTFP_FFI */
	"fp64_l2d",	/* FP64_FFI */
	"fp64_ul2d",	/* FP64_FFI */
	"fp64_l2f",	/* FP64_FFI */
	"fp64_ul2f",	/* FP64_FFI */
	"fp64_d2l",	/* FP64_FFI */
	"fp64_d2ul",	/* FP64_FFI */
	"fp64_f2l",	/* FP64_FFI */
	"fp64_f2ul",	/* FP64_FFI */
	"lj_carith_divi64",	/* FFI */
	"lj_carith_divu64",	/* FFI */
	"lj_carith_modi64",	/* FFI */
	"lj_carith_modu64",	/* FFI */
	"lj_carith_powi64",	/* FFI */
	"lj_carith_powu64",	/* FFI */
	"lj_cdata_newv",	/* FFI */
	"lj_cdata_setfin",	/* FFI */
	"strlen",	/* FFI */
	"memcpy",	/* FFI */
	"memset",	/* FFI */
	"lj_vm_errno",	/* FFI */
	"lj_carith_mul64",	/* FFI32 */
	"lj_carith_shl64",	/* FFI32 */
	"lj_carith_shr64",	/* FFI32 */
	"lj_carith_sar64",	/* FFI32 */
	"lj_carith_rol64",	/* FFI32 */
	"lj_carith_ror64",	/* FFI32 */
	NULL
};

/* OpenResty's luajit2 2.1-20230119 (Debian's luajit2): upstream's list with
 * lj_tab_clone, lj_tab_isarray, lj_tab_nkeys and lj_tab_isempty after
 * lj_tab_len_hint. */
static const char *const ljirc_luajit2_20230119[] = {
	"lj_str_cmp",
	"lj_str_find",
	"lj_str_new",
	"lj_strscan_num",
	"lj_strfmt_int",
	"lj_strfmt_num",
	"lj_strfmt_char",
	"lj_strfmt_putint",
	"lj_strfmt_putnum",
	"lj_strfmt_putquoted",
	"lj_strfmt_putfxint",
	"lj_strfmt_putfnum_int",
	"lj_strfmt_putfnum_uint",
	"lj_strfmt_putfnum",
	"lj_strfmt_putfstr",
	"lj_strfmt_putfchar",
	"lj_buf_putmem",
	"lj_buf_putstr",
	"lj_buf_putchar",
	"lj_buf_putstr_reverse",
	"lj_buf_putstr_lower",
	"lj_buf_putstr_upper",
	"lj_buf_putstr_rep",
	"lj_buf_puttab",
	"lj_bufx_set",	/* BUFFER */
	"lj_bufx_more",	/* BUFFFI */
	"lj_serialize_put",	/* BUFFER */
	"lj_serialize_get",	/* BUFFER */
	"lj_serialize_encode",	/* BUFFER */
	"lj_serialize_decode",	/* BUFFER */
	"lj_buf_tostr",
	"lj_tab_new_ah",
	"lj_tab_new1",
	"lj_tab_dup",
	"lj_tab_clear",
	"lj_tab_newkey",
	"lj_tab_keyindex",
	"lj_vm_next",
	"lj_tab_len",
	"lj_tab_clone",
	"lj_tab_isarray",
	"lj_tab_nkeys",
	"lj_tab_isempty",
	"lj_tab_len_hint",
	"lj_gc_step_jit",
	"lj_gc_barrieruv",
	"lj_mem_newgco",
	"lj_prng_u64d",
	"lj_vm_modi",
	"log10",
	"exp",
	"sin",
	"cos",
	"tan",
	"asin",
	"acos",
	"atan",
	"sinh",
	"cosh",
	"tanh",
	"fputc",
	"fwrite",
	"fflush",
	"lj_vm_floor",	/* FPMATH */
	"lj_vm_ceil",	/* FPMATH */
	"lj_vm_trunc",	/* FPMATH */
	"sqrt",	/* FPMATH */
	"log",
	"lj_vm_log2",
	"pow",
	"atan2",
	"ldexp",
	"lj_vm_tobit",	/* SOFTFP */
	"softfp_add",	/* SOFTFP */
	"softfp_sub",	/* SOFTFP */
	"softfp_mul",	/* SOFTFP */
	"softfp_div",	/* SOFTFP */
	"softfp_cmp",	/* SOFTFP */
	"softfp_i2d",	/* SOFTFP */
	"softfp_d2i",	/* SOFTFP */
	"lj_vm_sfmin",	/* SOFTFP_MIPS */
	"lj_vm_sfmax",	/* SOFTFP_MIPS */
	"lj_vm_tointg",	/* SOFTFP_MIPS64 */
	"softfp_ui2d",	/* SOFTFP_FFI */
	"softfp_f2d",	/* SOFTFP_FFI */
	"softfp_d2ui",	/* SOFTFP_FFI */
	"softfp_d2f",	/* SOFTFP_FFI */
	"softfp_i2f",	/* SOFTFP_FFI */
	"softfp_ui2f",	/* SOFTFP_FFI */
	"softfp_f2i",	/* SOFTFP_FFI */
	"softfp_f2ui",	/* SOFTFP_FFI */
	"fp64_l2d",	/* FP64_FFI */
	"fp64_ul2d",	/* FP64_FFI */
	"fp64_l2f",	/* FP64_FFI */
	"fp64_ul2f",	/* FP64_FFI */
	"fp64_d2l",	/* FP64_FFI */
	"fp64_d2ul",	/* FP64_FFI */
	"fp64_f2l",	/* FP64_FFI */
	"fp64_f2ul",	/* FP64_FFI */
	"lj_carith_divi64",	/* FFI */
	"lj_carith_divu64",	/* FFI */
	"lj_carith_modi64",	/* FFI */
	"lj_carith_modu64",	/* FFI */
	"lj_carith_powi64",	/* FFI */
	"lj_carith_powu64",	/* FFI */
	"lj_cdata_newv",	/* FFI */
	"lj_cdata_setfin",	/* FFI */
	"strlen",	/* FFI */
	"memcpy",	/* FFI */
	"memset",	/* FFI */
	"lj_vm_errno",	/* FFI */
	"lj_carith_mul64",	/* FFI32 */
	"lj_carith_shl64",	/* FFI32 */
	"lj_carith_shr64",	/* FFI32 */
	"lj_carith_sar64",	/* FFI32 */
	"lj_carith_rol64",	/* FFI32 */
	"lj_carith_ror64",	/* FFI32 */
	NULL
};
