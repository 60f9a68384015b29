/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * frame_name.c -- naming the walker's frames (see frame_name.h).
 */
#include <stdio.h>
#include <string.h>

#include "unwind/frame_name.h"

/* A bounded string builder. */
struct sbuf {
	char *p;
	size_t n, size;
};

/* Append n bytes (cut at the end of the buffer). */
static void sb__put(struct sbuf *b, const char *s, size_t n)
{
	if (b->n + 1 >= b->size)
		return;
	if (n > b->size - 1 - b->n)
		n = b->size - 1 - b->n;
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

/* Append a string. */
static void sb__str(struct sbuf *b, const char *s)
{
	sb__put(b, s, strlen(s));
}

/* Append an unsigned number in base 10 or 16, after an optional '-'. */
static void sb__num(struct sbuf *b, unsigned long long u, unsigned base, int neg)
{
	char t[24], *p = t + sizeof(t);

	do {
		*--p = "0123456789abcdef"[u % base];
		u /= base;
	} while (u && p > t + 1);
	if (neg)
		*--p = '-';
	sb__put(b, p, (size_t)(t + sizeof(t) - p));
}

/* Append a signed decimal. */
static void sb__int(struct sbuf *b, long long v)
{
	sb__num(b, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, 10, v < 0);
}

/* Append the chunk of a Lua frame: the file name of "@file" / "=name"
 * chunks, LuaJIT's short_src ([string "..."]) for source-text chunks. */
static void sb__chunk(struct sbuf *b, const struct ljw_frame *f)
{
	char src[80];

	if (!f->chunkname)
		sb__str(b, "?");
	else if (f->chunkname[0] == '@' || f->chunkname[0] == '=')
		sb__str(b, f->chunkname + 1);
	else
		sb__str(b, ljw_frame__short_src(f, src, sizeof(src)));
}

/* Append ":line" of a Lua frame in line mode ("?" when unknown). */
static void sb__line(struct sbuf *b, const struct ljw_frame *f)
{
	sb__put(b, ":", 1);
	if (f->line > 0)
		sb__int(b, f->line);
	else
		sb__put(b, "?", 1);
}

/* The function name of a Lua frame; see frame_name.h. */
const char *ljs_name__func(const struct ljw_frame *f, unsigned flags)
{
	if (!(flags & LJS_NAME_CALLSITE) && f->defname && f->defname[0])
		return f->defname;
	return f->name && f->name[0] ? f->name : NULL;
}

/* Name a Lua function frame. */
static void name__lua(struct sbuf *b, const struct ljw_frame *f, unsigned flags)
{
	const char *fname = ljs_name__func(f, flags);

	if (f->flags & LJW_F_MAIN) {
		sb__str(b, "main ");
		sb__chunk(b, f);
		if (flags & LJS_NAME_LINES)
			sb__line(b, f);
		return;
	}
	if (fname) {
		sb__str(b, fname);
		sb__put(b, " ", 1);
		sb__chunk(b, f);
		if (flags & LJS_NAME_LINES) {
			sb__line(b, f);
		} else {
			sb__put(b, ":", 1);
			sb__int(b, f->linedefined);
		}
		return;
	}
	sb__str(b, "function <");
	sb__chunk(b, f);
	sb__put(b, ":", 1);
	sb__int(b, f->linedefined);
	sb__put(b, ">", 1);
	if (flags & LJS_NAME_LINES) {
		sb__put(b, " ", 1);
		sb__chunk(b, f);
		sb__line(b, f);
	}
}

/* Name a walker frame; see frame_name.h. */
size_t ljs_name__lua(const struct ljw_frame *f, unsigned flags, char *buf, size_t size)
{
	return ljs_name__lua_as(f, NULL, flags, buf, size);
}

/* The same, a C function named cname; see frame_name.h. */
size_t ljs_name__lua_as(const struct ljw_frame *f, const char *cname, unsigned flags, char *buf,
			size_t size)
{
	struct sbuf b = { buf, 0, size };

	if (!buf || size == 0)
		return 0;
	buf[0] = '\0';
	switch (f->kind) {
	case LJW_FRAME_LUA:
		name__lua(&b, f, flags);
		break;
	case LJW_FRAME_C:
		if (cname) {
			sb__str(&b, cname);
		} else if (f->cfunc) {
			sb__str(&b, "C:0x");
			sb__num(&b, f->cfunc, 16, 0);
		} else {
			sb__str(&b, "C:?");
		}
		break;
	case LJW_FRAME_FF:
		if (f->ffname) {
			sb__str(&b, f->ffname);
		} else {
			sb__str(&b, "builtin#");
			sb__int(&b, f->ffid);
		}
		break;
	case LJW_FRAME_PSEUDO:
		sb__str(&b, f->pseudo ? f->pseudo : "[?]");
		break;
	default:
		sb__str(&b, "[unknown: ");
		sb__str(&b, ljw_reason__name(f->reason));
		sb__str(&b, "]");
		break;
	}
	/* Inlined into a trace (known from its snapshot, not on the Lua stack)
	 * is the more specific fact when a frame is also the trace's position. */
	if (f->kind != LJW_FRAME_PSEUDO && f->kind != LJW_FRAME_UNKNOWN) {
		if (f->flags & LJW_F_INLINED)
			sb__str(&b, "_[i]");
		else if (f->flags & LJW_F_TRACE)
			sb__str(&b, "_[j]");
	}
	return b.n;
}


/* The kind of a walker frame. */
enum ljs_fkind ljs_name__lua_kind(const struct ljw_frame *f)
{
	switch (f->kind) {
	case LJW_FRAME_LUA:
		if (f->flags & LJW_F_INLINED)
			return LJS_FK_LUA_INLINED;
		return (f->flags & LJW_F_TRACE) ? LJS_FK_LUA_TRACE : LJS_FK_LUA;
	case LJW_FRAME_C: return LJS_FK_C;
	case LJW_FRAME_FF: return LJS_FK_BUILTIN;
	case LJW_FRAME_PSEUDO: return LJS_FK_PSEUDO;
	default: return LJS_FK_UNKNOWN;
	}
}

/* A builtin's library name from its symbol; see frame_name.h. */
int ljs_name__ffsym(const char *sym, char *buf, size_t size)
{
	static const char *const libs[] = {	/* longest first where one prefixes another */
		"io_method_", "ffi_meta_", "ffi_clib_", "jit_util_", "jit_opt_", "jit_profile_",
		"buffer_method_", "string_", "table_", "math_", "os_", "io_", "coroutine_",
		"debug_", "jit_", "bit_", "ffi_", "package_", "buffer_", "misc_",
	};
	const char *rest;
	size_t i, k, n;

	if (!strncmp(sym, "lj_cf_", 6))
		rest = sym + 6;
	else if (!strncmp(sym, "lj_ffh_", 7))
		rest = sym + 7;
	else
		return 0;
	if (!*rest)
		return 0;
	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		n = strlen(libs[i]);
		if (strncmp(rest, libs[i], n) || !rest[n])
			continue;
		/* "io_method_" -> "io.method.": each '_' of the prefix becomes '.' */
		for (k = 0; k < n && k + 1 < size; k++)
			buf[k] = libs[i][k] == '_' ? '.' : libs[i][k];
		snprintf(buf + k, size - k, "%s", rest + n);
		return 1;
	}
	snprintf(buf, size, "%s", rest);
	return 1;
}

