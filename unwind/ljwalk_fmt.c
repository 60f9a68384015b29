/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljwalk_fmt.c -- render walker frames the way LuaJIT's luaL_traceback does,
 * and the names of the walker's enums.
 *
 * Facts from LuaJIT (lj_debug_shortname, luaL_traceback, lj_strfmt_wptr):
 * short_src is at most LUA_IDSIZE (60) bytes: "=name" -> name, "@file" ->
 * file or "..." + its last 56 bytes, source text -> [string "first line..."],
 * bytecode builtins (firstline == -1) -> [builtin:...].  A traceback line is
 * "short_src:line: in function 'name'" (line only when > 0), "in main
 * chunk", "in function <short_src:linedefined>", or for unnamed C functions
 * "[C]: at 0x..." and unnamed builtins "[builtin#N]: at 0x...".
 */
#include <stdio.h>
#include <string.h>

#include "unwind/ljwalk.h"

#define LUA_IDSIZE 60

/* LuaJIT's short_src for a frame, written into buf.  Returns buf. */
char *ljw_frame__short_src(const struct ljw_frame *f, char *buf, size_t size)
{
	char out[LUA_IDSIZE + 8];
	const char *src;
	size_t len, n;
	int builtin;

	if (!buf || size == 0)
		return buf;
	if (f->kind != LJW_FRAME_LUA) {
		snprintf(buf, size, "[C]");
		return buf;
	}
	src = f->chunkname ? f->chunkname : "?";
	builtin = f->linedefined == -1;
	if (*src == '=') {
		snprintf(out, LUA_IDSIZE, "%s", src + 1);
	} else if (*src == '@') {
		len = strlen(src) - 1;
		src++;
		if (len >= LUA_IDSIZE)
			snprintf(out, sizeof(out), "...%s", src + len - (LUA_IDSIZE - 4));
		else
			snprintf(out, sizeof(out), "%s", src);
	} else {
		for (len = 0; len < LUA_IDSIZE - 12; len++)
			if ((unsigned char)src[len] < ' ')
				break;
		n = len;
		if (src[len] != '\0') {
			if (n > LUA_IDSIZE - 15)
				n = LUA_IDSIZE - 15;
			snprintf(out, sizeof(out), "%s%.*s...%s", builtin ? "[builtin:" : "[string \"",
				 (int)n, src, builtin ? "]" : "\"]");
		} else {
			snprintf(out, sizeof(out), "%s%s%s", builtin ? "[builtin:" : "[string \"",
				 src, builtin ? "]" : "\"]");
		}
	}
	snprintf(buf, size, "%s", out);
	return buf;
}

/* A pointer the way LuaJIT's %p prints it (shortened for 64-bit). */
static void fmt__ptr(char *p, uint64_t x)
{
	unsigned n = 10, i;
	uint32_t hi = (uint32_t)(x >> 32);

	if (x == 0) {
		strcpy(p, "NULL");
		return;
	}
	if (hi) {
		unsigned fls = 31 - (unsigned)__builtin_clz(hi);

		n += 2 + 2 * (fls >> 3);
	}
	p[0] = '0';
	p[1] = 'x';
	for (i = n - 1; i >= 2; i--, x >>= 4)
		p[i] = "0123456789abcdef"[x & 15];
	p[n] = '\0';
}

/* Format a frame exactly like one line of luaL_traceback. */
int ljw_frame__format(const struct ljw_frame *f, char *buf, size_t size)
{
	char src[LUA_IDSIZE + 8], head[LUA_IDSIZE + 32], ptr[24];

	switch (f->kind) {
	case LJW_FRAME_PSEUDO:
		return snprintf(buf, size, "%s", f->pseudo ? f->pseudo : "[?]");
	case LJW_FRAME_UNKNOWN:
		return snprintf(buf, size, "[unknown: %s]", ljw_reason__name(f->reason));
	default:
		break;
	}
	if (f->kind == LJW_FRAME_FF && !f->what)
		snprintf(head, sizeof(head), "[builtin#%d]:", f->ffid);
	else
		snprintf(head, sizeof(head), "%s:", ljw_frame__short_src(f, src, sizeof(src)));
	if (f->line > 0)
		snprintf(head + strlen(head), sizeof(head) - strlen(head), "%d:", f->line);
	if (f->what)
		return snprintf(buf, size, "%s in function '%s'", head, f->name ? f->name : "?");
	if (f->kind == LJW_FRAME_LUA && (f->flags & LJW_F_MAIN))
		return snprintf(buf, size, "%s in main chunk", head);
	if (f->kind != LJW_FRAME_LUA) {
		fmt__ptr(ptr, f->cfunc);
		return snprintf(buf, size, "%s at %s", head, ptr);
	}
	return snprintf(buf, size, "%s in function <%s:%d>", head,
			ljw_frame__short_src(f, src, sizeof(src)), f->linedefined);
}

/* Name of an unknown-frame reason. */
const char *ljw_reason__name(enum ljw_reason r)
{
	static const char *const names[LJW_R__MAX] = {
		[LJW_R_NONE] = "none",
		[LJW_R_NO_G] = "no_g",
		[LJW_R_G_UNREADABLE] = "g_unreadable",
		[LJW_R_BAD_G] = "bad_g",
		[LJW_R_L_UNREADABLE] = "L_unreadable",
		[LJW_R_BAD_L] = "bad_L",
		[LJW_R_NO_BASE] = "no_base",
		[LJW_R_STACK_CUT] = "stack_cut",
		[LJW_R_BAD_FUNC] = "bad_func",
		[LJW_R_FUNC_UNREADABLE] = "func_unreadable",
		[LJW_R_PROTO_UNREADABLE] = "proto_unreadable",
		[LJW_R_BAD_PROTO] = "bad_proto",
		[LJW_R_BAD_LINK] = "bad_link",
		[LJW_R_BAD_CALL] = "bad_call",
		[LJW_R_CALLER_MISMATCH] = "caller_mismatch",
		[LJW_R_BAD_RESUMER] = "bad_resumer",
		[LJW_R_TRACE_UNREADABLE] = "trace_unreadable",
		[LJW_R_BAD_VMSTATE] = "bad_vmstate",
		[LJW_R_FRAME_LIMIT] = "frame_limit",
		[LJW_R_NOMEM] = "nomem",
		[LJW_R_CALL_FRAMES] = "call_frames",
	};

	if ((unsigned)r >= LJW_R__MAX || !names[r])
		return "?";
	return names[r];
}

/* Name of a walk end. */
const char *ljw_end__name(enum ljw_end e)
{
	static const char *const names[LJW__END_MAX] = {
		[LJW_END_NONE] = "none",
		[LJW_END_COMPLETE] = "complete",
		[LJW_END_COROUTINE] = "coroutine",
		[LJW_END_NOT_IN_LUA] = "not_in_lua",
		[LJW_END_NO_LUA] = "no_lua",
		[LJW_END_ERROR] = "error",
		[LJW_END_C_RESUME] = "c_resume",
		[LJW_END_OTHER_THREAD] = "other_thread",
	};

	if ((unsigned)e >= LJW__END_MAX || !names[e])
		return "?";
	return names[e];
}

/* Name of a BASE/PC source. */
const char *ljw_src__name(enum ljw_src s)
{
	static const char *const names[LJW__SRC_MAX] = {
		[LJW_SRC_NONE] = "none",
		[LJW_SRC_REGS] = "regs",
		[LJW_SRC_VM_REGS] = "vm_regs",
		[LJW_SRC_L_BASE] = "L_base",
		[LJW_SRC_JIT_BASE] = "jit_base",
		[LJW_SRC_SAVE_PC] = "save_pc",
		[LJW_SRC_TRACE_START] = "trace_start",
		[LJW_SRC_SNAPSHOT] = "snapshot",
		[LJW_SRC_RETURN] = "return",
	};

	if ((unsigned)s >= LJW__SRC_MAX || !names[s])
		return "?";
	return names[s];
}

/* Name of a trace attribution source. */
const char *ljw_tsrc__name(enum ljw_tsrc s)
{
	static const char *const names[LJW__TS_MAX] = {
		[LJW_TS_NONE] = "none",
		[LJW_TS_SNAP] = "snap",
		[LJW_TS_SNAP_CALL] = "snap_call",
		[LJW_TS_START] = "start",
		[LJW_TS_NOSNAP] = "nosnap",
		[LJW_TS_STALE] = "stale",
		[LJW_TS_BADSNAP] = "badsnap",
		[LJW_TS_NOHDR] = "nohdr",
		[LJW_TS_EXIT] = "exit",
		[LJW_TS_SNAP_CALL_UNSURE] = "snap_call_unsure",
		[LJW_TS_SNAP_CALL_PRIOR] = "snap_call_prior",
		[LJW_TS_SNAP_CALL_SPLIT] = "snap_call_split",
		[LJW_TS_SNAP_CALL_UNSEEN] = "snap_call_unseen",
		[LJW_TS_SNAP_CALL_ALIKE] = "snap_call_alike",
	};

	if ((unsigned)s >= LJW__TS_MAX || !names[s])
		return "?";
	return names[s];
}

/* Name of how a trace was found. */
const char *ljw_tfound__name(enum ljw_tfound f)
{
	static const char *const names[LJW__TF_MAX] = {
		[LJW_TF_NONE] = "none",
		[LJW_TF_VMSTATE] = "vmstate",
		[LJW_TF_LINK] = "link",
		[LJW_TF_JLOOP] = "jloop",
		[LJW_TF_SCAN] = "scan",
		[LJW_TF_PARENT] = "parent",
	};

	if ((unsigned)f >= LJW__TF_MAX || !names[f])
		return "?";
	return names[f];
}
