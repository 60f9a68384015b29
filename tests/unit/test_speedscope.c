/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_speedscope.c -- the speedscope writer on small profiles built here.
 *
 * Ground truth: JSON string escapes spelled out from RFC 8259 (quote,
 * backslash, control bytes) and the well-formed UTF-8 sequences of RFC 3629
 * (anything else is one U+FFFD per byte); the files expected whole are
 * written out from speedscope's file-format-schema.json by hand.
 * tests/output/speedscope.sh checks real captures against the schema itself.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "formats/output/aggregate.h"
#include "formats/output/output.h"
#include "formats/output/speedscope.h"
#include "tests/unit/check.h"

int failures, checks;

/* The writer's output for a (per_thread as given), malloc'ed; *err its return. */
static char *write_str(const struct agg *a, int per_thread, int *err)
{
	struct output_opts o = { .per_thread = per_thread };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*err = -EINVAL;
	if (!f)
		return NULL;
	*err = speedscope__write(a, &o, f);
	fclose(f);
	return buf;
}

/* Add count samples of the stack root;names... (NULL-terminated) under pid/tid. */
static void add(struct agg *a, uint32_t pid, uint32_t tid, uint64_t count, const char *root, ...)
{
	struct ljs_stack st = { 0 };
	struct agg_labels l = { pid, tid, LJS_VM_INTERP };
	const char *nm;
	va_list ap;

	CHECK(ljs_stack__push(&st, root, strlen(root), LJS_FK_ROOT) == 0);
	va_start(ap, root);
	while ((nm = va_arg(ap, const char *)) != NULL)
		CHECK(ljs_stack__push(&st, nm, strlen(nm), LJS_FK_LUA) == 0);
	va_end(ap);
	CHECK(agg__add_stack(a, &st, &l, count) == 0);
	ljs_stack__exit(&st);
}

#define HEAD(name) "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n" \
	"\"exporter\":\"ljsnap " PACKAGE_VERSION "\",\n\"name\":\"" name "\",\n" \
	"\"activeProfileIndex\":0,\n"

/* Quote, backslash, control bytes, DEL, UTF-8 kept, everything else U+FFFD. */
static void test_escape(void)
{
	struct agg *a = agg__new(0);
	struct ljs_stack st = { 0 };
	/* (The pieces are separate literals: "\xc3" "\xa9" is two bytes.) */
	static const char file[] =
		"a\"b\\c" "\x01" "\x1f" "\x7f" "\n" "\t" "\r" "\b" "\f"
		"\xc3\xa9" "\xe2\x82\xac" "\xf0\x9f\x98\x80" "\xf4\x8f\xbf\xbf"	/* kept */
		"\xc0\xaf" "\xe0\x80\x80" "\xed\xa0\x80" "\xf4\x90\x80\x80"	/* overlong, surrogate, > U+10FFFF */
		"\x80" "\xfe" "\xff" "\xe2\x82";				/* lone, never UTF-8, cut short */
	static const char want_file[] =
		"\"file\":\"a\\\"b\\\\c\\u0001\\u001f\\u007f\\n\\t\\r\\b\\f"
		"\xc3\xa9" "\xe2\x82\xac" "\xf0\x9f\x98\x80" "\xf4\x8f\xbf\xbf"
		"\\ufffd\\ufffd" "\\ufffd\\ufffd\\ufffd" "\\ufffd\\ufffd\\ufffd"
		"\\ufffd\\ufffd\\ufffd\\ufffd" "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"";
	struct ljs_frame_src src = { .func = "f", .file = file, .line = 3, .start_line = 3 };
	static const char name[] = "f\"n\\x" "\xff" "\x01" " q;r";
	/* Made folded-safe by the profile model ('?', ','), then escaped. */
	static const char want_name[] = "{\"name\":\"f\\\"n\\\\x\\ufffd? q,r\",";
	struct agg_proc p = { .pid = 7, .comm = "a\"pp" };
	struct agg_labels l = { 7, 8, LJS_VM_INTERP };
	char *s;
	int err;

	CHECK(ljs_stack__push(&st, "a\"pp", 4, LJS_FK_ROOT) == 0);
	CHECK(ljs_stack__push_src(&st, name, sizeof(name) - 1, LJS_FK_LUA, &src) == 0);
	CHECK(agg__add_stack(a, &st, &l, 2) == 0);
	CHECK(agg__add_proc(a, &p) == 0);
	CHECK(agg__set_source(a, "/tmp/x\"y.ljsnap", NULL) == 0);
	s = write_str(a, 0, &err);
	CHECK(err == 0 && s);
	if (s) {
		CHECKF(strstr(s, want_name) != NULL, "%s", s);
		CHECKF(strstr(s, want_file) != NULL, "%s", s);
		CHECKF(strstr(s, "\"name\":\"x\\\"y.ljsnap\"") != NULL, "%s", s);
		CHECKF(strstr(s, "{\"type\":\"sampled\",\"name\":\"a\\\"pp (pid 7)\"") != NULL, "%s", s);
		CHECKF(strstr(s, "\"line\":3}") != NULL, "%s", s);
	}
	free(s);
	ljs_stack__exit(&st);
	agg__delete(a);
}

/* Profiles per process in agg__procs' order, per thread, stacks merged. */
static void test_profiles(void)
{
	static const char want_p[] = HEAD("c.ljsnap")
		"\"shared\":{\"frames\":[\n{\"name\":\"app\"},\n{\"name\":\"x\"},\n{\"name\":\"y\"},\n"
		"{\"name\":\"srv\"}]},\n"
		"\"profiles\":[\n"
		"{\"type\":\"sampled\",\"name\":\"srv (pid 20)\",\"unit\":\"none\",\"startValue\":0,"
		"\"endValue\":6,\n\"samples\":[\n[3,1],\n[3,2]],\n\"weights\":[5,1]},\n"
		"{\"type\":\"sampled\",\"name\":\"app (pid 10)\",\"unit\":\"none\",\"startValue\":0,"
		"\"endValue\":3,\n\"samples\":[\n[0,1],\n[0,1,2]],\n\"weights\":[2,1]}]}\n";
	static const char want_t[] = HEAD("c.ljsnap")
		"\"shared\":{\"frames\":[\n{\"name\":\"app\"},\n{\"name\":\"x\"},\n{\"name\":\"y\"},\n"
		"{\"name\":\"srv\"}]},\n"
		"\"profiles\":[\n"
		"{\"type\":\"sampled\",\"name\":\"srv (pid 20, tid 20)\",\"unit\":\"none\","
		"\"startValue\":0,\"endValue\":4,\n\"samples\":[\n[3,1]],\n\"weights\":[4]},\n"
		"{\"type\":\"sampled\",\"name\":\"srv (pid 20, tid 21)\",\"unit\":\"none\","
		"\"startValue\":0,\"endValue\":2,\n\"samples\":[\n[3,1],\n[3,2]],\n\"weights\":[1,1]},\n"
		"{\"type\":\"sampled\",\"name\":\"app (pid 10, tid 10)\",\"unit\":\"none\","
		"\"startValue\":0,\"endValue\":3,\n\"samples\":[\n[0,1],\n[0,1,2]],\n\"weights\":[2,1]}]}\n";
	struct agg *a = agg__new(0);
	struct agg_proc p20 = { .pid = 20, .comm = "srv", .samples = 6 },
			p10 = { .pid = 10, .comm = "app", .samples = 3 };
	char *s;
	int err;

	add(a, 10, 10, 2, "app", "x", NULL);
	add(a, 10, 10, 1, "app", "x", "y", NULL);
	add(a, 20, 20, 4, "srv", "x", NULL);
	add(a, 20, 21, 1, "srv", "x", NULL);	/* merged with tid 20's per process */
	add(a, 20, 21, 1, "srv", "y", NULL);
	CHECK(agg__add_proc(a, &p20) == 0 && agg__add_proc(a, &p10) == 0);
	CHECK(agg__set_source(a, "dir/c.ljsnap", NULL) == 0);
	s = write_str(a, 0, &err);
	CHECK(err == 0 && s);
	CHECKF(s && !strcmp(s, want_p), "got:\n%s", s ? s : "");
	free(s);
	s = write_str(a, 1, &err);
	CHECK(err == 0 && s);
	CHECKF(s && !strcmp(s, want_t), "got:\n%s", s ? s : "");
	free(s);
	agg__delete(a);
}

/* Pids the processes do not list come after those they do, by pid, named
 * by their stacks' root frame; the same stack in two threads of one of them
 * is one sample, and two profiles with --per-thread. */
static void test_unlisted(void)
{
	static const char want_p[] = HEAD("d.ljsnap")
		"\"shared\":{\"frames\":[\n{\"name\":\"late\"},\n{\"name\":\"x\"},\n"
		"{\"name\":\"early\"},\n{\"name\":\"app\"}]},\n"
		"\"profiles\":[\n"
		"{\"type\":\"sampled\",\"name\":\"app (pid 50)\",\"unit\":\"none\",\"startValue\":0,"
		"\"endValue\":1,\n\"samples\":[\n[3,1]],\n\"weights\":[1]},\n"
		"{\"type\":\"sampled\",\"name\":\"early (pid 30)\",\"unit\":\"none\",\"startValue\":0,"
		"\"endValue\":5,\n\"samples\":[\n[2,1]],\n\"weights\":[5]},\n"
		"{\"type\":\"sampled\",\"name\":\"late (pid 40)\",\"unit\":\"none\",\"startValue\":0,"
		"\"endValue\":1,\n\"samples\":[\n[0,1]],\n\"weights\":[1]}]}\n";
	struct agg *a = agg__new(0);
	struct agg_proc p50 = { .pid = 50, .comm = "app", .samples = 1 };
	char *s;
	int err;

	add(a, 40, 40, 1, "late", "x", NULL);
	add(a, 30, 31, 2, "early", "x", NULL);
	add(a, 30, 30, 3, "early", "x", NULL);
	add(a, 50, 50, 1, "app", "x", NULL);
	CHECK(agg__add_proc(a, &p50) == 0);
	CHECK(agg__set_source(a, "d.ljsnap", NULL) == 0);
	s = write_str(a, 0, &err);
	CHECK(err == 0 && s);
	CHECKF(s && !strcmp(s, want_p), "got:\n%s", s ? s : "");
	free(s);
	s = write_str(a, 1, &err);
	CHECK(err == 0 && s && strstr(s, "\"early (pid 30, tid 30)\",\"unit\":\"none\",\"startValue\":0,"
					 "\"endValue\":3,") &&
	      strstr(s, "\"early (pid 30, tid 31)\",\"unit\":\"none\",\"startValue\":0,"
			"\"endValue\":2,") &&
	      strstr(s, "tid 30)") < strstr(s, "tid 31)") && strstr(s, "tid 31)") < strstr(s, "pid 40"));
	free(s);
	agg__delete(a);
}

/* No samples: no frame, no profile; no labels: one profile named by its root. */
static void test_empty_unlabelled(void)
{
	static const char want_e[] = HEAD("ljsnap")
		"\"shared\":{\"frames\":[]},\n\"profiles\":[]}\n";
	static const char want_u[] = HEAD("u.ljsnap")
		"\"shared\":{\"frames\":[\n{\"name\":\"app\"},\n{\"name\":\"x\"}]},\n"
		"\"profiles\":[\n"
		"{\"type\":\"sampled\",\"name\":\"app\",\"unit\":\"none\",\"startValue\":0,"
		"\"endValue\":4,\n\"samples\":[\n[0,1]],\n\"weights\":[4]}]}\n";
	struct agg *a = agg__new(0);
	struct agg_stack sb = { 0 };
	char *s;
	int err;

	s = write_str(a, 1, &err);
	CHECK(err == 0);
	CHECKF(s && !strcmp(s, want_e), "got:\n%s", s ? s : "");
	free(s);
	CHECK(agg__push(a, &sb, "app", 3, LJS_FK_ROOT) == 0 && agg__push(a, &sb, "x", 1, LJS_FK_LUA) == 0);
	CHECK(agg__add(a, &sb, 4) == 0);
	CHECK(agg__set_source(a, "u.ljsnap", NULL) == 0);
	s = write_str(a, 0, &err);
	CHECK(err == 0);
	CHECKF(s && !strcmp(s, want_u), "got:\n%s", s ? s : "");
	free(s);
	agg_stack__exit(&sb);
	agg__delete(a);
}

/* A write error is -EIO. */
static void test_write_error(void)
{
	struct agg *a = agg__new(0);
	FILE *f;

	add(a, 1, 1, 1, "app", "x", NULL);
	if (access("/dev/full", W_OK) == 0 && (f = fopen("/dev/full", "w")) != NULL) {
		CHECK(speedscope__write(a, NULL, f) == -EIO);
		fclose(f);
	}
	agg__delete(a);
}

int main(void)
{
	test_escape();
	test_profiles();
	test_unlisted();
	test_empty_unlabelled();
	test_write_error();
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
