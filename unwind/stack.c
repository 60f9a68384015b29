/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stack.c -- named stacks, and the walk statistics and trace attribution
 * of a walk in the terms of stack.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/vec.h"
#include "unwind/ljwalk.h"
#include "unwind/pipeline.h"
#include "unwind/stack.h"

_Static_assert(LJW_R__MAX <= LJS_REASONS_MAX, "ljs_walk_stats.unknown is too small");
_Static_assert(LJW__TS_MAX <= LJS_TRACE_SRC_MAX, "LJS_TRACE_SRC_MAX is too small");

void ljs_stack__reset(struct ljs_stack *st)
{
	st->n = 0;
	st->tlen = 0;
}

void ljs_stack__exit(struct ljs_stack *st)
{
	free(st->f);
	free(st->text);
	memset(st, 0, sizeof(*st));
}

int ljs_src_ref__set(struct ljs_src_ref *r, const struct ljs_frame_src *src,
		     int (*put)(void *ctx, const char *s, uint64_t *off), void *ctx)
{
	if (put(ctx, src->func, &r->func) || put(ctx, src->file, &r->file) ||
	    put(ctx, src->module, &r->module) || put(ctx, src->build_id, &r->build_id))
		return -ENOMEM;
	r->line = src->line;
	r->start_line = src->start_line;
	r->addr = src->addr;
	r->map_start = src->map_start;
	r->map_limit = src->map_limit;
	r->map_offset = src->map_offset;
	return 0;
}

void ljs_src_ref__get(const struct ljs_src_ref *r, const char *text, struct ljs_frame_src *out)
{
	out->func = r->func == LJS_NOSTR ? NULL : text + r->func;
	out->file = r->file == LJS_NOSTR ? NULL : text + r->file;
	out->module = r->module == LJS_NOSTR ? NULL : text + r->module;
	out->build_id = r->build_id == LJS_NOSTR ? NULL : text + r->build_id;
	out->line = r->line;
	out->start_line = r->start_line;
	out->addr = r->addr;
	out->map_start = r->map_start;
	out->map_limit = r->map_limit;
	out->map_offset = r->map_offset;
}

/* Append len bytes of s and a NUL to the stack's text; *off = where. */
static int stack__text(struct ljs_stack *st, const char *s, size_t len, uint32_t *off)
{
	if (st->tlen > UINT32_MAX - LJS_NAME_MAX || VEC_GROW(st->text, &st->tcap, st->tlen + len + 1))
		return -ENOMEM;
	memcpy(st->text + st->tlen, s, len);
	st->text[st->tlen + len] = '\0';
	*off = (uint32_t)st->tlen;
	st->tlen += len + 1;
	return 0;
}

/* ljs_src_ref__set's put: copy a string into the stack's text. */
static int stack__put(void *ctx, const char *s, uint64_t *off)
{
	uint32_t o;

	if (!s) {
		*off = LJS_NOSTR;
		return 0;
	}
	if (stack__text(ctx, s, strnlen(s, LJS_NAME_MAX - 1), &o))
		return -ENOMEM;
	*off = o;
	return 0;
}

int ljs_stack__push_src(struct ljs_stack *st, const char *name, size_t len, enum ljs_fkind kind,
			const struct ljs_frame_src *src)
{
	int err = ljs_stack__push(st, name, len, kind);

	if (err || !src)
		return err;
	err = ljs_src_ref__set(&st->f[st->n - 1].src, src, stack__put, st);
	if (err)
		return err;
	st->f[st->n - 1].has_src = 1;
	return 0;
}

int ljs_stack__src(const struct ljs_stack *st, size_t i, struct ljs_frame_src *out)
{
	memset(out, 0, sizeof(*out));
	if (!st->f[i].has_src)
		return 0;
	ljs_src_ref__get(&st->f[i].src, st->text, out);
	return 1;
}

int ljs_stack__push(struct ljs_stack *st, const char *name, size_t len, enum ljs_fkind kind)
{
	struct ljs_frame *f;
	uint32_t off;

	if (len > LJS_NAME_MAX - 1)
		len = LJS_NAME_MAX - 1;
	if (VEC_GROW(st->f, &st->cap, st->n + 1) || stack__text(st, name, len, &off))
		return -ENOMEM;
	f = &st->f[st->n++];
	f->off = off;
	f->len = (uint32_t)len;
	f->kind = kind;
	f->has_src = 0;
	return 0;
}

void ljs_stack__reverse(struct ljs_stack *st)
{
	size_t i, j;

	for (i = 0, j = st->n; j > i + 1; i++, j--) {
		struct ljs_frame t = st->f[i];

		st->f[i] = st->f[j - 1];
		st->f[j - 1] = t;
	}
}

const char *ljs_fkind__name(enum ljs_fkind k)
{
	static const char *const names[LJS_FK__MAX] = {
		[LJS_FK_ROOT] = "root", [LJS_FK_LUA] = "lua", [LJS_FK_LUA_TRACE] = "lua-trace",
		[LJS_FK_LUA_INLINED] = "lua-inlined", [LJS_FK_C] = "c", [LJS_FK_BUILTIN] = "builtin",
		[LJS_FK_PSEUDO] = "pseudo", [LJS_FK_UNKNOWN] = "unknown", [LJS_FK_NATIVE] = "native",
		[LJS_FK_NATIVE_INLINED] = "native-inlined", [LJS_FK_KERNEL] = "kernel",
	};

	return (unsigned)k < LJS_FK__MAX ? names[k] : "?";
}

const char *ljs_vm__name(enum ljs_vm v)
{
	static const char *const names[LJS_VM__MAX] = {
		"interpreter", "C code", "garbage collector", "JIT-compiled (trace)",
		"JIT compiler", "trace exit", "other",
	};

	return (unsigned)v < LJS_VM__MAX ? names[v] : "?";
}

const char *ljs_walk__reason_name(unsigned r)
{
	return r < LJW_R__MAX ? ljw_reason__name((enum ljw_reason)r) : NULL;
}

const char *ljs_trace__src_name(unsigned src)
{
	return src < LJW__TS_MAX ? ljw_tsrc__name((enum ljw_tsrc)src) : NULL;
}

/* VM state group of a walk (from the walker's vmstate class name). */
enum ljs_vm ljs_walk__vm(const struct ljw_stack *st)
{
	static const struct { const char *name; enum ljs_vm vm; } map[] = {
		{ "interp", LJS_VM_INTERP }, { "c", LJS_VM_C }, { "gc", LJS_VM_GC },
		{ "trace", LJS_VM_TRACE }, { "compiler", LJS_VM_COMPILER },
		{ "exit", LJS_VM_EXIT },
	};
	size_t i;

	if (!st->vmstate_name)
		return LJS_VM_OTHER;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(st->vmstate_name, map[i].name))
			return map[i].vm;
	return LJS_VM_OTHER;
}

/* Count one sample's walk (st NULL: the process has no usable LuaJIT). */
void ljs_walk_stats__count(struct ljs_walk_stats *s, const struct ljw_stack *st)
{
	size_t r, i;

	s->samples++;
	if (!st) {
		s->no_luajit++;
		return;
	}
	s->end_coroutine += st->end == LJW_END_COROUTINE;
	s->end_c_resume += st->end == LJW_END_C_RESUME;
	s->end_not_in_lua += st->end == LJW_END_NOT_IN_LUA;
	s->end_error += st->end == LJW_END_ERROR;
	for (r = 0; r < LJW_R__MAX; r++)
		s->unknown[r] += st->unknown[r];
	if (st->nunknown)
		s->with_unknown++;
	if (st->end == LJW_END_NO_LUA) {
		s->no_state++;
		return;
	}
	if (st->end == LJW_END_OTHER_THREAD) {
		s->other_thread++;
		return;
	}
	s->lua_state++;
	s->vm[ljs_walk__vm(st)]++;
	s->truncated += st->truncated != 0;
	s->frames += st->nframes;
	if (st->nframes > s->max_depth)
		s->max_depth = (uint32_t)st->nframes;
	if (st->complete && st->nunknown == 0) {
		s->clean++;
		/* The main chunk may sit above C frames (luajit's pmain, an embedder). */
		for (i = st->nframes; i > 0; i--)
			if (st->frames[i - 1].kind == LJW_FRAME_LUA &&
			    (st->frames[i - 1].flags & LJW_F_MAIN))
				break;
		s->to_main += i > 0;
	}
}

/* The trace a walk attributed its sample to: 1 (hit filled) or 0. */
int ljs_trace_hit__from_walk(struct ljs_trace_hit *hit, const struct ljw_stack *ls)
{
	const struct ljw_trace *tr = &ls->trace;
	size_t k;

	if (tr->traceno < 0 || tr->src == LJW_TS_NONE)
		return 0;
	hit->traceno = tr->traceno;
	hit->root = tr->root;
	hit->startline = tr->startline;
	hit->linedefined = tr->linedefined;
	hit->chunk = tr->chunk;
	hit->src = (unsigned)tr->src < LJW__TS_MAX ? (unsigned)tr->src : 0;
	hit->start_fn = NULL;
	for (k = 0; k < ls->nframes && !hit->start_fn; k++)
		if (tr->startpt && ls->frames[k].pt == tr->startpt)
			hit->start_fn = ls->frames[k].name;
	return 1;
}
