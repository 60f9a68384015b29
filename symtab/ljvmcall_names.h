/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljvmcall_names.h -- data: the C functions LuaJIT's interpreter calls, in
 * the order of their first direct call (call/jmp rel32) in its machine
 * code, one list per LuaJIT source (included by ljnames.c only).
 *
 * buildvm assembles the interpreter from vm_x64.dasc (vm_x86.dasc without
 * GC64), where each `call extern lj_...` and `jmp extern lj_...` names its
 * target; the order of the handlers and of their calls is the .dasc's, the
 * same for every compiler.  The lists are the targets of those calls in the
 * unstripped builds of tests/variants/prepare.sh (up-nogc64 and up-unknown,
 * GC64 or not, give the same list; or-dualnum for luajit2), each target the
 * first address of an FDE outside the interpreter's own.  "a|b": the
 * interpreter calls a or b depending on the build (dual-number mode calls
 * lj_strfmt_number, luajit2's or-dualnum, where Debian's luajit2 calls
 * lj_strfmt_num); such a target must be named already to count, and is
 * given no name.  To add a version, add its list and a line in
 * ljvm_lists[] (ljnames.c), keyed by the IR call table list of the same
 * source.
 */

/* Upstream LuaJIT 2.1 (Debian's luajit 2.1.0~beta3+git20220320) and
 * OpenResty's luajit2 2.1-20230119: the same list. */
static const char *const ljvm_2_1_2022[] = {
	"lj_tab_len",
	"lj_meta_cat",
	"lj_gc_barrieruv",
	"lj_func_closeuv",
	"lj_func_newL_gc",
	"lj_tab_new",
	"lj_gc_step_fixtop",
	"lj_tab_dup",
	"lj_tab_newkey",
	"lj_tab_reasize",
	"lj_state_growstack",
	"lj_err_throw",
	"lj_meta_tget",
	"lj_tab_getinth",
	"lj_meta_tset",
	"lj_tab_setinth",
	"lj_meta_comp",
	"lj_meta_equal",
	"lj_meta_equal_cd",
	"lj_meta_istype",
	"lj_meta_arith",
	"lj_meta_len",
	"lj_meta_call",
	"lj_meta_for",
	"lj_tab_get",
	"lj_strfmt_num|lj_strfmt_number",	/* LUAJIT_NUMMODE=2: _number */
	"lj_tab_next",
	"lj_ffh_coroutine_wrap_err",
	"lj_str_new",
	"lj_buf_putstr_reverse",
	"lj_buf_tostr",
	"lj_buf_putstr_lower",
	"lj_buf_putstr_upper",
	"lj_gc_step",
	"lj_dispatch_ins",
	"lj_trace_hot",
	"lj_dispatch_call",
	"lj_dispatch_stitch",
	"lj_dispatch_profile",
	"lj_trace_exit",
	"lj_err_trace",
	"lj_ccallback_enter",
	"lj_ccallback_leave",
	NULL
};
