/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pprof_synth.c -- a profile with every kind of frame, for tests/output/pprof.sh:
 *   pprof_synth OUT.pb.gz OUT.folded
 * writes it with the pprof and the folded formats of formats/output/output.c.
 * The golden captures have inlined native frames only where this machine's
 * files are there; these stacks have them everywhere: a native frame with two
 * levels of inlined functions, the same frame with another chain and with
 * none, kernel frames, every Lua-side kind, two processes, samples without
 * LuaJIT state, a stack of the root alone; the frequency is unknown (pprof
 * then takes 99 Hz).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/output/aggregate.h"
#include "formats/output/output.h"
#include "unwind/stack.h"

struct sframe {
	const char *name;
	enum ljs_fkind kind;
	const char *file;
	int line;
	uint64_t addr;
	const char *module;
};

#define LIBX	"/usr/lib/libx.so.1"
#define APP	"/usr/bin/app"

/* Frames by letter, for the stacks below. */
static const struct sframe frames[] = {
	['r'] = { "app", LJS_FK_ROOT, NULL, 0, 0, NULL },
	['R'] = { "worker 2", LJS_FK_ROOT, NULL, 0, 0, NULL },
	['s'] = { "_start", LJS_FK_NATIVE, NULL, 0, 0x401010, APP },
	['m'] = { "main", LJS_FK_NATIVE, "app.c", 40, 0x401234, APP },
	['h'] = { "helper_[i]", LJS_FK_NATIVE_INLINED, "app.c", 12, 0, APP },
	['i'] = { "inner_[i]", LJS_FK_NATIVE_INLINED, "inner.h", 3, 0, APP },
	['o'] = { "other_[i]", LJS_FK_NATIVE_INLINED, "app.c", 20, 0, APP },
	['p'] = { "lua_pcall", LJS_FK_NATIVE, NULL, 0, 0x7f0000001100, LIBX },
	['I'] = { "[LuaJIT interpreter]", LJS_FK_NATIVE, NULL, 0, 0x7f0000002200, LIBX },
	['J'] = { "[JIT code]", LJS_FK_NATIVE, NULL, 0, 0x7e0000000040, NULL },
	['M'] = { "main chunk", LJS_FK_LUA, "x.lua", 0, 0, NULL },
	['f'] = { "run x.lua:10", LJS_FK_LUA, "x.lua", 10, 0, NULL },
	['t'] = { "hot x.lua:20_[j]", LJS_FK_LUA_TRACE, "x.lua", 20, 0, NULL },
	['n'] = { "function <x.lua:30>_[i]", LJS_FK_LUA_INLINED, "x.lua", 30, 0, NULL },
	['b'] = { "string.gsub", LJS_FK_BUILTIN, NULL, 0, 0, NULL },
	['c'] = { "C:0x7f0000003300", LJS_FK_C, NULL, 0, 0, NULL },
	['g'] = { "[GC]", LJS_FK_PSEUDO, NULL, 0, 0, NULL },
	['u'] = { "[unknown: bad frame]", LJS_FK_UNKNOWN, NULL, 0, 0, NULL },
	['k'] = { "do_syscall_64_[k]", LJS_FK_KERNEL, NULL, 0, 0xffffffff81000100, NULL },
	['K'] = { "entry_SYSCALL_64_[k]", LJS_FK_KERNEL, NULL, 0, 0xffffffff81000200, NULL },
	['x'] = { "main", LJS_FK_LUA, "main.lua", 1, 0, NULL },	/* a Lua frame named as a native one */
	['X'] = { "ns::Foo<int>::bar(int) const", LJS_FK_NATIVE, "foo.cc", 7, 0x7f0000004400, LIBX },
};

/* Stacks, root first, with their labels and counts. */
static const struct {
	const char *frames;
	struct agg_labels l;
	unsigned count;
} stacks[] = {
	{ "rsmhipIMft", { 100, 100, LJS_VM_TRACE }, 7 },
	{ "rsmhipIMft", { 100, 101, LJS_VM_TRACE }, 5 },
	{ "rsmhipIMfn", { 100, 100, LJS_VM_TRACE }, 3 },
	{ "rsmopIMfb", { 100, 100, LJS_VM_C }, 4 },
	{ "rsmpIMfc", { 100, 100, LJS_VM_C }, 2 },
	{ "rsmhpIMfbKk", { 100, 100, LJS_VM_C }, 6 },
	{ "rsmhipIMg", { 100, 100, LJS_VM_GC }, 1 },
	{ "rJ", { 100, 100, -1 }, 2 },
	{ "rsmhipu", { 100, 100, LJS_VM_OTHER }, 1 },
	{ "Rsmhi", { 200, 201, -1 }, 15 },
	{ "RsmhipIx", { 200, 201, LJS_VM_INTERP }, 2 },
	{ "RKk", { 200, 202, -1 }, 1 },
	{ "R", { 200, 203, -1 }, 1 },
	{ "RsmXpIMf", { 200, 201, LJS_VM_INTERP }, 3 },
};

/* Add one stack. */
static int add(struct agg *a, struct ljs_stack *st, const char *spec, const struct agg_labels *l,
	       unsigned count)
{
	const char *c;
	int err = 0;

	ljs_stack__reset(st);
	for (c = spec; *c && !err; c++) {
		const struct sframe *f = &frames[(unsigned char)*c];
		struct ljs_frame_src src = { 0 };

		src.func = f->name;
		src.file = f->file;
		src.line = f->line;
		src.start_line = ljs_fkind__is_lua(f->kind) ? f->line : 0;
		src.module = f->module;
		src.addr = f->addr;
		if (f->module) {
			src.build_id = f->module[5] == 'l' ? "1111aaaa" : "2222bbbb";
			src.map_start = f->addr & ~(uint64_t)0xfffff;
			src.map_limit = src.map_start + 0x100000;
			src.map_offset = 0x1000;
		}
		err = f->kind == LJS_FK_ROOT ?
		      ljs_stack__push(st, f->name, strlen(f->name), f->kind) :
		      ljs_stack__push_src(st, f->name, strlen(f->name), f->kind, &src);
	}
	return err ? err : agg__add_stack(a, st, l, count);
}

/* Write a with format name to path. */
static int write_as(const struct agg *a, const char *name, const char *path)
{
	const struct output_format *fmt = output__find(name);
	FILE *f = fopen(path, "w");
	int err = -1;

	if (f && fmt)
		err = fmt->write(a, NULL, f);
	if (f && fclose(f))
		err = -1;
	return err;
}

int main(int argc, char **argv)
{
	struct agg *a = agg__new(0);
	struct ljs_stack st = { 0 };
	struct agg_time t = { .start_ns = 1700000000000000000ull, .duration_ns = 2000000000ull };
	size_t i;
	int err = 0;

	if (argc != 3 || !a) {
		fprintf(stderr, "usage: pprof_synth OUT.pb.gz OUT.folded\n");
		return 2;
	}
	agg__set_time(a, &t);
	for (i = 0; i < sizeof(stacks) / sizeof(stacks[0]) && !err; i++)
		err = add(a, &st, stacks[i].frames, &stacks[i].l, stacks[i].count);
	if (!err)
		err = agg__add_note(a, "a synthetic profile");
	if (!err)
		err = write_as(a, "pprof", argv[1]) || write_as(a, "folded", argv[2]);
	ljs_stack__exit(&st);
	agg__delete(a);
	if (err)
		fprintf(stderr, "pprof_synth: failed (%d)\n", err);
	return err ? 1 : 0;
}
