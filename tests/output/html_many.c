/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * html_many -- a synthetic profile of N distinct stacks, written by the html
 * format and by the folded format, for tests/output/html.sh: the page must
 * stay usable with 100,000 distinct stacks, and its numbers must be the
 * folded output's.
 *
 *   html_many N PAGE.html FOLDED
 *
 * Stack i: "synth" (the root), "main chunk", then "hot x.lua:10_[j]" for a
 * third of the stacks ("work x.lua:20" for the rest), 3 to 11 frames shared
 * with neighbouring stacks (every kind in turn), in one stack of 1000 a frame
 * whose name holds "</script><!--", quotes and a backslash, and a leaf of
 * its own, so every stack is distinct.  Counts 1 to 7.  Deterministic.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/output/aggregate.h"
#include "formats/output/folded.h"
#include "formats/output/html.h"

static int push(struct agg *a, struct agg_stack *sb, const char *name, enum ljs_fkind kind)
{
	return agg__push(a, sb, name, strlen(name), kind);
}

/* Stack i of the profile. */
static int add_stack(struct agg *a, struct agg_stack *sb, unsigned i)
{
	static const enum ljs_fkind kinds[] = {
		LJS_FK_LUA, LJS_FK_LUA_TRACE, LJS_FK_LUA_INLINED, LJS_FK_BUILTIN, LJS_FK_C,
		LJS_FK_NATIVE, LJS_FK_NATIVE_INLINED, LJS_FK_PSEUDO, LJS_FK_UNKNOWN, LJS_FK_KERNEL,
	};
	unsigned depth = 3 + i % 9, l, h = i * 2654435761u;
	char name[64];
	int err;

	agg_stack__reset(sb);
	err = push(a, sb, "synth", LJS_FK_ROOT);
	if (!err)
		err = push(a, sb, "main chunk", LJS_FK_LUA);
	if (!err)
		err = i % 3 == 0 ? push(a, sb, "hot x.lua:10_[j]", LJS_FK_LUA_TRACE) :
			push(a, sb, "work x.lua:20", LJS_FK_LUA);
	for (l = 0; l < depth && !err; l++) {
		snprintf(name, sizeof(name), "f%u_%u x.lua:%u", l, (i >> (2 * l + 2)) % 4, 100 + l);
		err = push(a, sb, name, kinds[l % (sizeof(kinds) / sizeof(kinds[0]))]);
	}
	if (!err && i % 1000 == 7)	/* what the page must escape */
		err = push(a, sb, "function <x.lua:5> \"</script><!--\" \\ &amp;", LJS_FK_LUA);
	if (!err) {
		snprintf(name, sizeof(name), "leaf_%u x.lua:%u", i, 1000 + i % 50);
		err = push(a, sb, name, LJS_FK_LUA);
	}
	return err ? err : agg__add(a, sb, 1 + (h >> 13) % 7);
}

int main(int argc, char **argv)
{
	struct agg_stack sb = { 0 };
	struct agg *a = NULL;
	FILE *page = NULL, *folded = NULL;
	unsigned n, i;
	int err = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: html_many N PAGE.html FOLDED\n");
		return 2;
	}
	n = (unsigned)strtoul(argv[1], NULL, 10);
	a = agg__new(0);
	page = fopen(argv[2], "w");
	folded = fopen(argv[3], "w");
	if (!a || !page || !folded) {
		err = -errno;
		goto out;
	}
	err = agg__set_source(a, "synthetic", NULL);
	for (i = 0; i < n && !err; i++)
		err = add_stack(a, &sb, i);
	if (!err)
		err = html__write(a, NULL, page);
	if (!err)
		err = folded__write(a, NULL, folded);
out:
	if (page && fclose(page) && !err)
		err = -EIO;
	if (folded && fclose(folded) && !err)
		err = -EIO;
	agg_stack__exit(&sb);
	agg__delete(a);
	if (err)
		fprintf(stderr, "html_many: %s\n", strerror(-err));
	return err ? 1 : 0;
}
