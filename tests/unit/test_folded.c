/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_folded.c -- frame naming, stack aggregation, the folded writer and
 * the text summary, from synthetic walker results.
 *
 * Ground truth: names spelled out by the rules of aggregate.h; for random
 * stacks, the expected folded lines are built by the test from those
 * spelled-out names and counted with a plain list, independently of the
 * aggregate's hashing and sorting.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/output/aggregate.h"
#include "formats/output/folded.h"
#include "formats/output/output.h"
#include "unwind/frame_name.h"
#include "unwind/pipeline.h"
#include "tests/unit/check.h"

int failures, checks;

#define CHECK_STR(got, want) do {						\
	const char *g_ = (got), *w_ = (want);					\
	checks++;								\
	if (strcmp(g_, w_)) {							\
		failures++;							\
		fprintf(stderr, "%s:%d: got '%s', want '%s'\n", __FILE__, __LINE__, g_, w_); \
	}									\
} while (0)

/* A Lua frame. */
static struct ljw_frame lua(const char *name, const char *chunkname, int linedefined, int line,
			    uint32_t flags)
{
	struct ljw_frame f;

	memset(&f, 0, sizeof(f));
	f.kind = LJW_FRAME_LUA;
	f.name = name;
	f.what = name ? "global" : NULL;
	f.chunkname = chunkname;
	f.chunk = chunkname && (chunkname[0] == '@' || chunkname[0] == '=') ? chunkname + 1 :
		  chunkname;
	f.linedefined = linedefined;
	f.line = line;
	f.flags = flags;
	return f;
}

/* A frame of another kind. */
static struct ljw_frame other(enum ljw_kind kind)
{
	struct ljw_frame f;

	memset(&f, 0, sizeof(f));
	f.kind = kind;
	f.line = -1;
	return f;
}

/* The name of a frame (function mode, or lines when lines != 0), as the
 * profile keeps it: named by unwind/frame_name.c, made safe when interned. */
static const char *nm(const struct ljw_frame *f, int lines)
{
	static char buf[4][AGG_NAME_MAX];
	static int i;
	char tmp[LJS_NAME_MAX];
	struct agg *a = agg__new(0);
	size_t n = ljs_name__lua(f, lines ? LJS_NAME_LINES : 0, tmp, sizeof(tmp));
	long id = a ? agg__frame(a, tmp, n, ljs_name__lua_kind(f)) : -1;

	i = (i + 1) & 3;
	snprintf(buf[i], sizeof(buf[i]), "%s", id >= 0 ? agg__frame_name(a, (uint32_t)id, NULL) : "?");
	agg__delete(a);
	return buf[i];
}

/* Every frame kind named by the rules. */
static void test_names(void)
{
	struct ljw_frame f;
	char big[3000], out[AGG_NAME_MAX], small[8];

	f = lua("hot_a", "@cpu.lua", 12, 15, 0);
	CHECK_STR(nm(&f, 0), "hot_a cpu.lua:12");
	CHECK_STR(nm(&f, 1), "hot_a cpu.lua:15");
	f.flags |= LJW_F_TRACE;
	CHECK_STR(nm(&f, 0), "hot_a cpu.lua:12_[j]");
	f.flags = LJW_F_INLINED;
	CHECK_STR(nm(&f, 1), "hot_a cpu.lua:15_[i]");
	f.flags = LJW_F_INLINED | LJW_F_TRACE;
	CHECK_STR(nm(&f, 0), "hot_a cpu.lua:12_[i]");
	f = lua(NULL, "@/srv/app/x.lua", 30, 33, 0);
	CHECK_STR(nm(&f, 0), "function </srv/app/x.lua:30>");
	CHECK_STR(nm(&f, 1), "function </srv/app/x.lua:30> /srv/app/x.lua:33");
	f = lua(NULL, "@cpu.lua", 0, 40, LJW_F_MAIN);
	CHECK_STR(nm(&f, 0), "main cpu.lua");
	CHECK_STR(nm(&f, 1), "main cpu.lua:40");
	f = lua("m", "=stdin", 3, -1, LJW_F_NOPC);
	CHECK_STR(nm(&f, 0), "m stdin:3");
	CHECK_STR(nm(&f, 1), "m stdin:?");
	/* Source-text chunks: LuaJIT's [string "..."], made folded-safe. */
	f = lua("f", "return 1; end\nlocal x", 1, 1, 0);
	CHECK_STR(nm(&f, 0), "f [string \"return 1, end...\"]:1");
	f = lua("a;b\nc", "@we;ird.lua", 7, 8, 0);
	CHECK_STR(nm(&f, 0), "a,b?c we,ird.lua:7");
	f = lua("", "@x.lua", 5, 6, 0);		/* empty name: unnamed */
	CHECK_STR(nm(&f, 0), "function <x.lua:5>");

	f = other(LJW_FRAME_FF);
	f.ffid = 77;
	CHECK_STR(nm(&f, 0), "builtin#77");
	f.ffname = "string.gsub";
	CHECK_STR(nm(&f, 0), "string.gsub");
	f.flags = LJW_F_TRACE;
	CHECK_STR(nm(&f, 0), "string.gsub_[j]");
	f = other(LJW_FRAME_C);
	f.cfunc = 0x55d0c0ffee10ull;
	CHECK_STR(nm(&f, 0), "C:0x55d0c0ffee10");
	f = other(LJW_FRAME_PSEUDO);
	f.pseudo = "[GC]";
	CHECK_STR(nm(&f, 0), "[GC]");
	f.flags = LJW_F_TRACE;			/* pseudo frames take no suffix */
	CHECK_STR(nm(&f, 0), "[GC]");
	f = other(LJW_FRAME_UNKNOWN);
	f.reason = LJW_R_PROTO_UNREADABLE;
	CHECK_STR(nm(&f, 0), "[unknown: proto_unreadable]");

	/* Every byte value at every position of a word-sized scan. */
	{
		struct agg *a = agg__new(0);
		int c, pos, bad = 0;

		for (c = 0; c < 256; c++) {
			for (pos = 0; pos < 21; pos++) {
				char in[21], want;
				const char *got;
				size_t glen;
				long id;

				memset(in, 'x', sizeof(in));
				in[pos] = (char)c;
				id = agg__frame(a, in, sizeof(in), LJS_FK_LUA);
				got = id >= 0 ? agg__frame_name(a, (uint32_t)id, &glen) : NULL;
				want = c == ';' ? ',' : (c < 0x20 || c == 0x7f) ? '?' : (char)c;
				if (c == 'x')
					continue;
				if (c == ' ' && pos == 20)	/* trailing blank dropped */
					bad += !got || glen != 20 || strspn(got, "x") != 20;
				else
					bad += !got || glen != 21 || got[pos] != want ||
					       strspn(got, "x") != (size_t)pos ||
					       strspn(got + pos + 1, "x") != (size_t)(20 - pos);
			}
		}
		CHECK(bad == 0);
		agg__delete(a);
	}
	/* Long names are cut, never overflow; small buffers are respected. */
	memset(big, 'n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	f = lua(big, "@x.lua", 1, 1, 0);
	CHECK(ljs_name__lua(&f, 0, out, sizeof(out)) == AGG_NAME_MAX - 1);
	CHECK(strlen(out) == AGG_NAME_MAX - 1);
	CHECK(ljs_name__lua(&f, 0, small, sizeof(small)) == 7 && !strcmp(small, "nnnnnnn"));
}

/* A walk result over frames (innermost first). */
static struct ljw_stack walk(struct ljw_frame *fr, size_t n, enum ljw_end end)
{
	struct ljw_stack st;
	size_t i;

	memset(&st, 0, sizeof(st));
	st.frames = fr;
	st.nframes = n;
	st.end = end;
	st.complete = end == LJW_END_COMPLETE;
	st.vmstate_name = "interp";
	for (i = 0; i < n; i++)
		if (fr[i].kind == LJW_FRAME_UNKNOWN) {
			st.nunknown++;
			st.unknown[fr[i].reason]++;
		}
	return st;
}

/* Walk statistics of the samples add() added (set on the profile by done()). */
static struct ljs_walk_stats ws;

/* Add a walk under a root name, count times: its frames outermost first. */
static void add(struct agg *a, const char *root, const struct ljw_stack *st, int count)
{
	struct ljs_stack sb = { 0 };
	char name[LJS_NAME_MAX];
	size_t k, n;
	int i;

	for (i = 0; i < count; i++) {
		ljs_walk_stats__count(&ws, st);
		ljs_stack__reset(&sb);
		CHECK(ljs_stack__push(&sb, root, strlen(root), LJS_FK_ROOT) == 0);
		for (k = st->nframes; k > 0; k--) {
			n = ljs_name__lua(&st->frames[k - 1],
					  (agg__flags(a) & AGG_LINES) ? LJS_NAME_LINES : 0, name,
					  sizeof(name));
			CHECK(ljs_stack__push(&sb, name, n, ljs_name__lua_kind(&st->frames[k - 1])) == 0);
		}
		CHECK(agg__add_stack(a, &sb, NULL, 1) == 0);
	}
	ljs_stack__exit(&sb);
}

/* The folded output of an aggregate as a malloc'ed string. */
static char *folded(const struct agg *a)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f && folded__write(a, NULL, f) == 0);
	fclose(f);
	return buf;
}

/* A hand-checked aggregate: grouping, suffixes, ordering, root escaping. */
static void test_folded_basic(void)
{
	struct agg *a = agg__new(0), *l = agg__new(AGG_LINES);
	struct ljw_frame s1[3], s2[3], s3[3], s4[3];
	struct ljw_stack w1, w2, w3, w4;
	char *out;

	s1[0] = lua("hot_a", "@cpu.lua", 12, 13, 0);
	s1[1] = lua("driver", "@cpu.lua", 5, 7, 0);
	s1[2] = lua(NULL, "@cpu.lua", 0, 30, LJW_F_MAIN);
	memcpy(s2, s1, sizeof(s1));
	s2[0].line = 14;			/* same function, other line */
	memcpy(s3, s1, sizeof(s1));
	s3[0].flags = LJW_F_TRACE;
	memcpy(s4, s1, sizeof(s1));
	s4[0] = lua("hot_b", "@cpu.lua", 20, 21, 0);
	w1 = walk(s1, 3, LJW_END_COMPLETE);
	w2 = walk(s2, 3, LJW_END_COMPLETE);
	w3 = walk(s3, 3, LJW_END_COMPLETE);
	w4 = walk(s4, 3, LJW_END_COMPLETE);
	add(a, "luajit", &w4, 2);
	add(a, "luajit", &w1, 2);
	add(a, "luajit", &w3, 1);
	add(a, "luajit", &w2, 1);
	add(a, "we;ird\ncomm", &w4, 1);
	add(l, "luajit", &w1, 2);
	add(l, "luajit", &w2, 1);
	add(l, "luajit", &w3, 1);

	out = folded(a);
	CHECK_STR(out,
		  "luajit;main cpu.lua;driver cpu.lua:5;hot_a cpu.lua:12 3\n"
		  "luajit;main cpu.lua;driver cpu.lua:5;hot_a cpu.lua:12_[j] 1\n"
		  "luajit;main cpu.lua;driver cpu.lua:5;hot_b cpu.lua:20 2\n"
		  "we,ird?comm;main cpu.lua;driver cpu.lua:5;hot_b cpu.lua:20 1\n");
	free(out);
	CHECK(agg__total(a) == 7 && agg__nstacks(a) == 4);
	out = folded(l);
	CHECK_STR(out,
		  "luajit;main cpu.lua:30;driver cpu.lua:7;hot_a cpu.lua:13 2\n"
		  "luajit;main cpu.lua:30;driver cpu.lua:7;hot_a cpu.lua:13_[j] 1\n"
		  "luajit;main cpu.lua:30;driver cpu.lua:7;hot_a cpu.lua:14 1\n");
	free(out);
	/* Frame ids: the suffixed name knows its base, classes are kept. */
	{
		long j = agg__frame(a, "hot_a cpu.lua:12_[j]", 20, LJS_FK_LUA_TRACE);
		long b = agg__frame(a, "hot_a cpu.lua:12", 16, LJS_FK_LUA);
		long r = agg__frame(a, "luajit", 6, LJS_FK_ROOT);
		long r2 = agg__frame(a, "luajit", 6, LJS_FK_LUA);

		CHECK(j >= 0 && b >= 0 && j != b && agg__frame_base(a, (uint32_t)j) == (uint32_t)b);
		CHECK(agg__frame_base(a, (uint32_t)b) == (uint32_t)b);
		CHECK(agg__frame_kind(a, (uint32_t)r) == LJS_FK_ROOT && r2 != r);
	}
	/* Bad input. */
	{
		struct agg_stack sb = { 0 };
		uint32_t bad = 999999;
		struct agg_stack bs = { &bad, 1, 1 };

		CHECK(agg__add(a, &sb, 1) == -EINVAL);
		CHECK(agg__add(a, &bs, 1) == -EINVAL);
	}
	agg__delete(a);
	agg__delete(l);
}

/* Random stacks from a fixed frame set against an independent count. */
static void test_folded_random(void)
{
	static const struct { const char *name, *chunk; int def, flags; const char *want; } set[] = {
		{ "alpha", "@a.lua", 3, 0, "alpha a.lua:3" },
		{ "beta", "@a.lua", 9, 0, "beta a.lua:9" },
		{ "beta", "@a.lua", 9, LJW_F_TRACE, "beta a.lua:9_[j]" },
		{ NULL, "@b.lua", 14, 0, "function <b.lua:14>" },
		{ "g;h", "@b.lua", 20, 0, "g,h b.lua:20" },
		{ "Zed", "@b.lua", 1, 0, "Zed b.lua:1" },
	};
	enum { NSET = sizeof(set) / sizeof(set[0]), NS = 3000, MAXD = 6, MAXU = 4096 };
	struct agg *a = agg__new(0), *b = agg__new(0);
	char *want[MAXU], line[2048], *out, *out2, *p, *nl;
	unsigned long cnt[MAXU];
	size_t nu = 0, i, nlines = 0, bad = 0;
	unsigned seed = 99;
	struct ljw_frame fr[MAXD + 1];
	struct ljw_stack st;

	/* Stacks: main at the bottom, then 0..MAXD random frames. */
	for (i = 0; i < NS; i++) {
		size_t d = (size_t)rand_r(&seed) % (MAXD + 1), k, u;

		snprintf(line, sizeof(line), "proc;main m.lua");
		fr[d] = lua(NULL, "@m.lua", 0, 1, LJW_F_MAIN);
		for (k = d; k > 0; k--) {	/* fr[k-1] is called by fr[k] */
			int s = rand_r(&seed) % NSET;

			fr[k - 1] = lua(set[s].name, set[s].chunk, set[s].def, 1,
					(uint32_t)set[s].flags);
			strcat(line, ";");
			strcat(line, set[s].want);
		}
		st = walk(fr, d + 1, LJW_END_COMPLETE);
		add(a, "proc", &st, 1);
		for (u = 0; u < nu; u++)
			if (!strcmp(want[u], line))
				break;
		if (u == nu && nu < MAXU) {
			want[nu] = strdup(line);
			cnt[nu++] = 0;
		}
		if (u < MAXU)
			cnt[u]++;
	}
	/* Every output line: well formed, expected, with the expected count. */
	out = folded(a);
	for (p = out; *p; p = nl + 1) {
		char *sp;
		unsigned long c;
		size_t u;

		nl = strchr(p, '\n');
		if (!nl)
			break;
		*nl = '\0';
		sp = strrchr(p, ' ');
		nlines++;
		if (!sp || sp == p || sp[-1] == ' ' || sscanf(sp + 1, "%lu", &c) != 1 ||
		    strspn(sp + 1, "0123456789") != strlen(sp + 1) || strstr(p, ";;")) {
			bad++;
			continue;
		}
		*sp = '\0';
		for (u = 0; u < nu; u++)
			if (!strcmp(want[u], p))
				break;
		if (u == nu || cnt[u] != c)
			bad++;
		else
			cnt[u] = 0;	/* each expected line once */
		*nl = '\n';
		*sp = ' ';
	}
	CHECK(bad == 0);
	CHECK(nlines == nu);
	CHECK(agg__total(a) == NS);
	/* The same stacks in reverse order give byte-identical output. */
	seed = 99;
	{
		struct ljw_frame (*all)[MAXD + 1] = calloc(NS, sizeof(*all));
		size_t depth[NS];

		for (i = 0; i < NS; i++) {
			size_t d = (size_t)rand_r(&seed) % (MAXD + 1), k;

			depth[i] = d + 1;
			all[i][d] = lua(NULL, "@m.lua", 0, 1, LJW_F_MAIN);
			for (k = d; k > 0; k--) {
				int s = rand_r(&seed) % NSET;

				all[i][k - 1] = lua(set[s].name, set[s].chunk, set[s].def, 1,
						    (uint32_t)set[s].flags);
			}
		}
		for (i = NS; i > 0; i--) {
			st = walk(all[i - 1], depth[i - 1], LJW_END_COMPLETE);
			add(b, "proc", &st, 1);
		}
		free(all);
	}
	free(out);
	out2 = folded(b);
	out = folded(a);
	CHECK(!strcmp(out, out2));
	free(out);
	free(out2);
	for (i = 0; i < nu; i++)
		free(want[i]);
	agg__delete(a);
	agg__delete(b);
}

/* A line as text, for the reference order. */
struct rline {
	char *text;
	size_t idx;
	uint64_t count;
};

static int rline__cmp(const void *x, const void *y)
{
	const struct rline *a = x, *b = y;
	int c = strcmp(a->text, b->text);

	return c ? c : a->idx < b->idx ? -1 : 1;
}

/* The lines come in the byte order of their text, with names that are
 * prefixes of each other, bytes either side of ';' and one name under two
 * frame kinds: checked against strcmp of the printed lines, and the whole
 * output against a sort of the stacks' texts. */
static void test_folded_order(void)
{
	static const char *names[] = { "a", "a:", "a<", "ab", "a b", "b", "a+1", "" };
	enum { NN = sizeof(names) / sizeof(names[0]), NS = 4000, MAXD = 5 };
	struct agg *a = agg__new(0);
	char *out, *p, *nl, *prev = NULL;
	size_t i, nlines = 0, unsorted = 0;
	unsigned seed = 7;

	for (i = 0; i < NS; i++) {
		struct agg_stack sb = { 0 };
		size_t d = 1 + (size_t)rand_r(&seed) % MAXD, k;

		for (k = 0; k < d; k++) {
			int s = rand_r(&seed) % NN;
			enum ljs_fkind kind = rand_r(&seed) % 2 ? LJS_FK_LUA : LJS_FK_NATIVE;
			long id = agg__frame(a, names[s], strlen(names[s]), kind);

			CHECK(id >= 0 && agg_stack__push_id(&sb, (uint32_t)id) == 0);
		}
		CHECK(agg__add(a, &sb, 1) == 0);
		agg_stack__exit(&sb);
	}
	out = folded(a);
	for (p = out; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			break;
		*nl = '\0';
		*strrchr(p, ' ') = '\0';
		if (prev && strcmp(prev, p) > 0)
			unsorted++;	/* equal texts may repeat: a name under two kinds */
		prev = p;
		nlines++;
	}
	CHECK(unsorted == 0);
	CHECK(nlines > 100 && nlines == agg__nstacks(a));
	free(out);
	/* The whole output against the lines built one by one from agg__stack
	 * and sorted by text, equal texts in the order first seen. */
	{
		struct rline *r = calloc(agg__nstacks(a), sizeof(*r));
		struct agg_stack sb = { NULL, 0, 0 };
		char *want = NULL;
		size_t wlen = 0, k;
		FILE *f = open_memstream(&want, &wlen);

		CHECK(r && f);
		for (i = 0; r && i < agg__nstacks(a); i++) {
			uint64_t count;
			size_t len = 0;
			FILE *t = open_memstream(&r[i].text, &len);

			CHECK(agg__stack(a, i, &sb, &count) == 0);
			for (k = 0; k < sb.n; k++)
				fprintf(t, "%s%s", k ? ";" : "", agg__frame_name(a, sb.ids[k], NULL));
			fclose(t);
			r[i].idx = i;
			r[i].count = count;
		}
		qsort(r, agg__nstacks(a), sizeof(*r), rline__cmp);
		for (i = 0; r && i < agg__nstacks(a); i++) {
			fprintf(f, "%s %" PRIu64 "\n", r[i].text, r[i].count);
			free(r[i].text);
		}
		fclose(f);
		out = folded(a);
		CHECK(out && want && !strcmp(out, want));
		free(out);
		free(want);
		free(r);
		agg_stack__exit(&sb);
	}
	agg__delete(a);
}

/* Walk statistics. */
static void test_stats(void)
{
	struct agg *a = agg__new(0);

	memset(&ws, 0, sizeof(ws));
	struct ljw_frame ok[3], unk[3], co[1];
	struct ljw_stack st;
	const struct ljs_walk_stats *s;

	ok[0] = lua("f", "@x.lua", 2, 3, 0);
	ok[1] = lua(NULL, "@x.lua", 0, 9, LJW_F_MAIN);
	st = walk(ok, 2, LJW_END_COMPLETE);
	add(a, "p", &st, 5);
	st.vmstate_name = "trace";
	add(a, "p", &st, 2);
	/* Complete, the main chunk above a C frame (luajit's pmain). */
	ok[2] = other(LJW_FRAME_C);
	st = walk(ok, 3, LJW_END_COMPLETE);
	add(a, "p", &st, 1);
	/* Complete with no main chunk at all (an embedder's lua_pcall). */
	st = walk(ok, 1, LJW_END_COMPLETE);
	st.vmstate_name = "gc";
	add(a, "p", &st, 1);
	unk[0] = lua("f", "@x.lua", 2, 3, 0);
	unk[1] = other(LJW_FRAME_UNKNOWN);
	unk[1].reason = LJW_R_PROTO_UNREADABLE;
	unk[2] = other(LJW_FRAME_UNKNOWN);
	unk[2].reason = LJW_R_PROTO_UNREADABLE;
	st = walk(unk, 3, LJW_END_ERROR);
	st.truncated = 1;
	add(a, "p", &st, 1);
	co[0] = lua("g", "@x.lua", 7, 8, 0);
	st = walk(co, 1, LJW_END_COROUTINE);
	st.vmstate_name = "c";
	add(a, "p", &st, 1);
	st = walk(NULL, 0, LJW_END_NOT_IN_LUA);
	st.vmstate_name = NULL;
	add(a, "p", &st, 1);
	st = walk(NULL, 0, LJW_END_NO_LUA);
	ljs_walk_stats__count(&ws, &st);
	ljs_walk_stats__count(&ws, NULL);
	agg__set_walk(a, &ws);
	s = agg__walk(a);
	CHECK(s->samples == 14);
	CHECK(s->no_luajit == 1 && s->no_state == 1 && s->lua_state == 12);
	CHECK(s->clean == 9 && s->to_main == 8);
	CHECK(s->with_unknown == 1 && s->unknown[LJW_R_PROTO_UNREADABLE] == 2);
	CHECK(s->truncated == 1);
	CHECK(s->end_coroutine == 1 && s->end_not_in_lua == 1 && s->end_error == 1);
	CHECK(s->vm[LJS_VM_INTERP] == 7 && s->vm[LJS_VM_TRACE] == 2 && s->vm[LJS_VM_GC] == 1 &&
	      s->vm[LJS_VM_C] == 1 && s->vm[LJS_VM_OTHER] == 1);
	CHECK(s->max_depth == 3);
	agg__delete(a);
}

/* The value of the row of a top list whose function is name: the n-th
 * number on the first line after the header that ends in "  name". */
static long row(const char *text, const char *header, const char *name, int nth)
{
	const char *p = strstr(text, header), *e;
	char want[256];
	long v[4];

	if (!p)
		return -1;
	snprintf(want, sizeof(want), "  %s\n", name);
	for (p = strchr(p, '\n'); p && p[1] && p[1] != '\n'; p = strchr(p + 1, '\n')) {
		e = strchr(p + 1, '\n');
		if (!e || (size_t)(e - p) < strlen(want) ||
		    strncmp(e - strlen(want) + 1, want, strlen(want)))
			continue;
		if (sscanf(p + 1, " %ld %*f%% %ld %*f%% %ld", &v[0], &v[1], &v[2]) < 2)
			return -2;
		return v[nth];
	}
	return -1;
}

/* Top functions: self, total once per sample under recursion, JIT merged. */
static void test_text(void)
{
	struct agg *a = agg__new(0);

	memset(&ws, 0, sizeof(ws));
	struct ljw_frame r[5], o[2];
	struct ljw_stack st;
	struct agg_proc procs[2] = { { 10, "luajit", "upstream GC64", 6 }, { 11, "sh", NULL, 1 } };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	r[0] = lua("leaf", "@r.lua", 1, 2, 0);
	r[1] = lua("rec", "@r.lua", 5, 6, 0);
	r[2] = lua("rec", "@r.lua", 5, 6, 0);
	r[3] = lua("rec", "@r.lua", 5, 6, 0);
	r[4] = lua(NULL, "@r.lua", 0, 9, LJW_F_MAIN);
	st = walk(r, 5, LJW_END_COMPLETE);
	add(a, "luajit", &st, 3);
	r[0].flags = LJW_F_TRACE;
	st = walk(r, 5, LJW_END_COMPLETE);
	add(a, "luajit", &st, 1);
	o[0] = lua("other", "@r.lua", 20, 21, 0);
	o[1] = r[4];
	st = walk(o, 2, LJW_END_COMPLETE);
	add(a, "luajit", &st, 2);
	agg__set_walk(a, &ws);
	CHECK(agg__set_source(a, "x.ljsnap", NULL) == 0);
	CHECK(agg__add_proc(a, &procs[0]) == 0 && agg__add_proc(a, &procs[1]) == 0);
	CHECK(agg__add_note(a, "truncated after 9 records") == 0);
	f = open_memstream(&buf, &len);
	CHECK(output__find("text") && output__find("text")->write(a, NULL, f) == 0);
	fclose(f);
	CHECK(row(buf, "top functions by self", "leaf r.lua:1", 0) == 4);	/* JIT merged */
	CHECK(row(buf, "top functions by self", "other r.lua:20", 0) == 2);
	CHECK(row(buf, "top functions by self", "rec r.lua:5", 0) == -1);	/* never a leaf */
	CHECK(row(buf, "top functions by total", "rec r.lua:5", 0) == 4);	/* once per sample */
	CHECK(row(buf, "top functions by total", "rec r.lua:5", 1) == 0);
	CHECK(row(buf, "top functions by total", "main r.lua", 0) == 6);
	CHECK(row(buf, "top functions by total", "luajit", 0) == -1);	/* root left out */
	CHECK(strstr(buf, "unwound to the main chunk with no unknown frame: 6 of 6 (100.0%)") != NULL);
	CHECK(strstr(buf, "pid 11 sh: 1 samples, no LuaJIT") != NULL);
	CHECK(strstr(buf, "truncated after 9 records") != NULL);
	if (failures)
		fputs(buf, stderr);
	free(buf);
	agg__delete(a);
}

int main(void)
{
	test_names();
	test_folded_basic();
	test_folded_random();
	test_folded_order();
	test_stats();
	test_text();
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
