/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_snapfile_craft.c -- part of test_snapfile: the bounded msgpack cursor,
 * and capture files made by hand with msgpack-c, as a newer (or broken)
 * writer would make them: versions, unknown kinds, keys, fields, registers.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <msgpack.h>
#include "formats/capture/mpread.h"
#include "formats/capture/snapfile.h"
#include "tests/unit/snapfile_test.h"

/* -- Hand-made files (a newer writer) ---------------------------------------------- */

/* msgpack-c write callback into a growing buffer. */
struct craft {
	msgpack_sbuffer sb;	/* the whole file */
	msgpack_sbuffer pl;	/* the payload being packed */
	msgpack_packer pk;
};

/* Start a hand-made file (magic only). */
static void craft_init(struct craft *c)
{
	msgpack_sbuffer_init(&c->sb);
	msgpack_sbuffer_init(&c->pl);
	msgpack_packer_init(&c->pk, &c->pl, msgpack_sbuffer_write);
	msgpack_sbuffer_write(&c->sb, SNAPFILE_MAGIC, SNAPFILE_MAGIC_LEN);
}

/* Frame the packed payload into the file. */
static void craft_frame(struct craft *c)
{
	uint32_t l = htole32((uint32_t)c->pl.size);
	uint32_t k = htole32((uint32_t)crc32(0, (const Bytef *)c->pl.data, (uInt)c->pl.size));

	msgpack_sbuffer_write(&c->sb, (const char *)&l, 4);
	msgpack_sbuffer_write(&c->sb, (const char *)&k, 4);
	msgpack_sbuffer_write(&c->sb, c->pl.data, c->pl.size);
	msgpack_sbuffer_clear(&c->pl);
}

/* Pack a string. */
static void craft_str(struct craft *c, const char *s)
{
	msgpack_pack_str_with_body(&c->pk, s, strlen(s));
}

/* Pack a nested value a reader does not know. */
static void craft_junk(struct craft *c)
{
	msgpack_pack_map(&c->pk, 2);
	craft_str(c, "nested");
	msgpack_pack_array(&c->pk, 3);
	msgpack_pack_double(&c->pk, 1.5);
	msgpack_pack_nil(&c->pk);
	msgpack_pack_ext_with_body(&c->pk, "abc", 3, 7);
	craft_str(c, "t");
	msgpack_pack_true(&c->pk);
}

/* A header frame with the given version, extra keys and register order. */
static void craft_header(struct craft *c, unsigned major, unsigned minor)
{
	msgpack_pack_array(&c->pk, 3);
	msgpack_pack_uint8(&c->pk, SNAPFILE_REC_HEADER);
	msgpack_pack_map(&c->pk, 6);
	craft_str(c, "zz_future");
	craft_junk(c);
	craft_str(c, "major");
	msgpack_pack_uint32(&c->pk, major);
	craft_str(c, "minor");
	msgpack_pack_uint32(&c->pk, minor);
	craft_str(c, "host");
	craft_str(c, "crafted");
	craft_str(c, "regs");
	msgpack_pack_array(&c->pk, 4);
	craft_str(c, "ip");
	craft_str(c, "sp");
	craft_str(c, "zz_newreg");
	craft_str(c, "bp");
	craft_str(c, "freq");
	msgpack_pack_uint32(&c->pk, 997);
	craft_junk(c);	/* a trailing field of the header record */
	craft_frame(c);
}

/* Newer major is refused with a clear message; newer minor is read. */
void test_versions(void)
{
	struct craft c;
	struct snapfile_reader *r;
	char msg[512], want[16];
	int err;

	craft_init(&c);
	craft_header(&c, SNAPFILE_MAJOR + 1, 5);
	spit(tpath("major.ljsnap"), c.sb.data, c.sb.size);
	r = snapfile_reader__open_msg(tpath("major.ljsnap"), &err, msg, sizeof(msg));
	CHECK(r == NULL && err == SNAPFILE_E_NEWER);
	snprintf(want, sizeof(want), "%d.5", SNAPFILE_MAJOR + 1);
	CHECKF(strstr(msg, "newer") && strstr(msg, want), "%s", msg);
	CHECK(strstr(snapfile__strerror(err), "newer") != NULL);
	msgpack_sbuffer_destroy(&c.sb);
	msgpack_sbuffer_destroy(&c.pl);

	/* Version 0 (or missing) is not a valid header. */
	craft_init(&c);
	craft_header(&c, 0, 0);
	spit(tpath("v0.ljsnap"), c.sb.data, c.sb.size);
	r = snapfile_reader__open(tpath("v0.ljsnap"), &err);
	CHECK(r == NULL && err == SNAPFILE_E_CORRUPT);
	msgpack_sbuffer_destroy(&c.sb);
	msgpack_sbuffer_destroy(&c.pl);

	/* Not a capture file, a text-mode copy, an empty file. */
	spit(tpath("text.ljsnap"), "hello world, this is text\n", 26);
	r = snapfile_reader__open_msg(tpath("text.ljsnap"), &err, msg, sizeof(msg));
	CHECK(r == NULL && err == SNAPFILE_E_NOTCAPTURE && strstr(msg, "not an ljsnap"));
	spit(tpath("crlf.ljsnap"), "\x89LJS\n\x1a\n\x10\0\0\0", 12);
	r = snapfile_reader__open_msg(tpath("crlf.ljsnap"), &err, msg, sizeof(msg));
	CHECKF(r == NULL && err == SNAPFILE_E_NOTCAPTURE && strstr(msg, "binary mode"), "%s", msg);
	spit(tpath("empty.ljsnap"), "", 0);
	r = snapfile_reader__open_msg(tpath("empty.ljsnap"), &err, msg, sizeof(msg));
	CHECK(r == NULL && err == SNAPFILE_E_TRUNCHDR && strstr(msg, "empty"));
	r = snapfile_reader__open_msg(tpath("does-not-exist"), &err, msg, sizeof(msg));
	CHECK(r == NULL && err == -ENOENT && strstr(msg, "cannot open"));
}

/* Long on purpose: one crafted file, then a list of checks of what was read. */
/* Unknown kinds, keys, trailing fields and registers are skipped; missing
 * layout fields read as 0. */
void test_forward_compat(void)
{
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	const struct snapfile_reader_stats *st;
	struct snapfile_reader *r;
	struct craft c;
	uint64_t regs[4] = { htole64(0x401000), htole64(0x7ffd1000), htole64(0xdead),
			     htole64(0x7ffd2000) };
	int err, got = 0, rc;

	craft_init(&c);
	/* Format 1 frames (the crafted records are not compressed): major 1. */
	craft_header(&c, 1, 9);
	/* Unknown kind 42 and a second header: skipped. */
	msgpack_pack_array(&c.pk, 2);
	msgpack_pack_uint8(&c.pk, 42);
	craft_junk(&c);
	craft_frame(&c);
	craft_header(&c, 1, 0);
	/* PROCESS with an unknown key, a mapping with an extra field, a layout
	 * with an unknown name and only two known ones. */
	msgpack_pack_array(&c.pk, 2);
	msgpack_pack_uint8(&c.pk, SNAPFILE_REC_PROCESS);
	msgpack_pack_map(&c.pk, 4);
	craft_str(&c, "pid");
	msgpack_pack_uint32(&c.pk, 31337);
	craft_str(&c, "zz_new");
	craft_junk(&c);
	craft_str(&c, "maps");
	msgpack_pack_array(&c.pk, 1);
	msgpack_pack_array(&c.pk, 7);
	msgpack_pack_uint64(&c.pk, 0x1000);
	msgpack_pack_uint64(&c.pk, 0x2000);
	msgpack_pack_uint64(&c.pk, 0);
	msgpack_pack_uint32(&c.pk, 5);
	craft_str(&c, "/bin/x");
	msgpack_pack_bin_with_body(&c.pk, "\x01\x02", 2);
	craft_junk(&c);
	craft_str(&c, "lj");
	msgpack_pack_map(&c.pk, 2);
	craft_str(&c, "layout");
	msgpack_pack_map(&c.pk, 3);
	craft_str(&c, "g_size");
	msgpack_pack_uint32(&c.pk, 0x1f0);
	craft_str(&c, "zz_field_from_the_future");
	msgpack_pack_int32(&c.pk, -5);
	craft_str(&c, "vmst.interp");
	msgpack_pack_int32(&c.pk, -1);
	craft_str(&c, "zz_lj_key");
	craft_junk(&c);
	craft_frame(&c);
	/* SAMPLE with two trailing fields and a section with one. */
	msgpack_pack_array(&c.pk, 13);
	msgpack_pack_uint8(&c.pk, SNAPFILE_REC_SAMPLE);
	msgpack_pack_uint64(&c.pk, 77);
	msgpack_pack_uint32(&c.pk, 31337);
	msgpack_pack_uint32(&c.pk, 31338);
	msgpack_pack_uint32(&c.pk, 1);
	msgpack_pack_uint32(&c.pk, 0);
	craft_str(&c, "comm-longer-than-fifteen");
	msgpack_pack_bin_with_body(&c.pk, regs, sizeof(regs));
	msgpack_pack_uint64(&c.pk, 0);
	msgpack_pack_uint32(&c.pk, 0);
	msgpack_pack_array(&c.pk, 1);
	msgpack_pack_array(&c.pk, 7);
	msgpack_pack_uint16(&c.pk, LJS_SEC_USTACK);
	msgpack_pack_uint16(&c.pk, LJS_ST_PARTIAL);
	msgpack_pack_uint64(&c.pk, 0x7ffd1000);
	msgpack_pack_uint32(&c.pk, 16);
	msgpack_pack_uint32(&c.pk, 0);
	msgpack_pack_bin_with_body(&c.pk, "0123456789", 10);
	craft_junk(&c);
	craft_junk(&c);
	msgpack_pack_uint8(&c.pk, 1);
	craft_frame(&c);
	/* STATS with a non-integer value: that entry is skipped. */
	msgpack_pack_array(&c.pk, 2);
	msgpack_pack_uint8(&c.pk, SNAPFILE_REC_STATS);
	msgpack_pack_map(&c.pk, 2);
	craft_str(&c, "lost");
	msgpack_pack_uint64(&c.pk, 3);
	craft_str(&c, "zz_ratio");
	msgpack_pack_double(&c.pk, 0.5);
	craft_frame(&c);
	spit(tpath("future.ljsnap"), c.sb.data, c.sb.size);
	msgpack_sbuffer_destroy(&c.sb);
	msgpack_sbuffer_destroy(&c.pl);

	r = snapfile_reader__open(tpath("future.ljsnap"), &err);
	CHECKF(r != NULL, "%s", snapfile__strerror(err));
	if (!r) {
		free(rec);
		return;
	}
	CHECK(snapfile_reader__header(r)->minor == 9);
	CHECK(snapfile_reader__header(r)->freq_hz == 997);
	CHECK(!strcmp(snapfile_reader__header(r)->host, "crafted"));
	CHECK(!strcmp(snapfile_reader__header(r)->kernel, ""));
	while ((rc = snapfile_reader__next(r, rec)) > 0 && got < 10) {
		got++;
		if (rec->kind == SNAPFILE_REC_PROCESS) {
			const struct snapfile_process *p = &rec->proc;
			struct lj_layout lay;

			memset(&lay, 0, sizeof(lay));
			lay.g_size = 0x1f0;
			lay.vmst.interp = -1;
			CHECK(p->pid == 31337 && p->nmaps == 1 && p->has_luajit);
			CHECK(p->nmaps == 1 && p->maps[0].prot == 5 && !strcmp(p->maps[0].path, "/bin/x"));
			CHECK(p->maps[0].build_id_len == 2 && p->maps[0].build_id[1] == 2);
			CHECK(!memcmp(&p->layout, &lay, sizeof(lay)));
			CHECK(p->lj_build && !p->lj_build[0] && p->nprov == 0);
		} else if (rec->kind == SNAPFILE_REC_SAMPLE) {
			const struct ljs_sample *s = &rec->sample;

			CHECK(s->time_ns == 77 && s->pid == 31337 && s->tid == 31338);
			CHECK(!strcmp(s->comm, "comm-longer-tha"));
			CHECK(s->regs.ip == 0x401000 && s->regs.sp == 0x7ffd1000);
			CHECK(s->regs.bp == 0x7ffd2000 && s->regs.ax == 0 && s->regs.r14 == 0);
			CHECK(s->nsec == 1 && s->sec[0].kind == LJS_SEC_USTACK && s->sec[0].len == 10);
			CHECK(s->sec[0].want == 16 && !memcmp(s->sec[0].data, "0123456789", 10));
		} else if (rec->kind == SNAPFILE_REC_STATS) {
			CHECK(rec->stats.n == 1 && !strcmp(rec->stats.v[0].name, "lost"));
			CHECK(rec->stats.v[0].value == 3);
		}
	}
	CHECK(rc == 0 && got == 3);
	st = snapfile_reader__stats(r);
	CHECK(st->unknown == 2 && st->corrupt == 0 && !st->truncated && !st->clean_end);
	snapfile_reader__close(r);
	free(rec);
}

/* EMBED of nf fields: format 1.0's seven, "names", then junk. */
static void craft_embed(struct craft *c, unsigned nf)
{
	unsigned i;

	msgpack_pack_array(&c->pk, 1 + nf);
	msgpack_pack_uint8(&c->pk, SNAPFILE_REC_EMBED);
	craft_str(c, "/bin/x");
	msgpack_pack_bin_with_body(&c->pk, "\x01\x02", 2);
	msgpack_pack_uint64(&c->pk, 4096);
	msgpack_pack_uint32(&c->pk, 3);
	msgpack_pack_bin_with_body(&c->pk, "0123456789abcdef", nf > 4 ? 16 : 0);
	for (i = 5; i < nf; i++) {
		if (i == 5)
			msgpack_pack_uint64(&c->pk, 4);
		else if (i == 6)
			msgpack_pack_bin_with_body(&c->pk, "zstd", 4);
		else if (i == 7)
			msgpack_pack_bin_with_body(&c->pk, "nm", 2);
		else
			craft_junk(c);
	}
	craft_frame(c);
}

/* An EMBED record of format 1.0 (seven fields, no "names") reads with no
 * names; one with a field after "names" reads them; six fields are corrupt. */
void test_embed_fields(void)
{
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	struct snapfile_reader *r;
	struct craft c;
	int err, rc, got = 0;

	craft_init(&c);
	craft_header(&c, 1, 0);	/* crafted frames are format 1 */
	craft_embed(&c, 7);
	craft_embed(&c, 9);
	craft_embed(&c, 6);
	spit(tpath("embed10.ljsnap"), c.sb.data, c.sb.size);
	msgpack_sbuffer_destroy(&c.sb);
	msgpack_sbuffer_destroy(&c.pl);
	r = snapfile_reader__open(tpath("embed10.ljsnap"), &err);
	CHECKF(r != NULL, "%s", snapfile__strerror(err));
	while (r && rec && (rc = snapfile_reader__next(r, rec)) > 0) {
		const struct snapfile_embed *e = &rec->embed;

		CHECK(rec->kind == SNAPFILE_REC_EMBED && got < 2);
		CHECK(e->size == 4096 && e->what == 3 && e->extents_len == 16 && e->raw_len == 4);
		CHECK(e->len == 4 && !memcmp(e->data, "zstd", 4));
		if (got++ == 0)
			CHECK(!e->names && !e->names_len);
		else
			CHECK(e->names_len == 2 && !memcmp(e->names, "nm", 2));
	}
	CHECK(got == 2);
	if (r) {
		CHECK(snapfile_reader__stats(r)->corrupt == 1);
		snapfile_reader__close(r);
	}
	free(rec);
}

/* -- The bounded msgpack reader ---------------------------------------------------- */

/* Long on purpose: one packed buffer, then a list of checks of what was read. */
/* Every msgpack encoding, packed by msgpack-c, decodes to what was packed; every
 * strict prefix fails cleanly without reading past its end. */
void test_mpread(void)
{
	static const int64_t ints[] = { 0, 1, 127, -1, -32, -33, -128, -129, -32768, -32769,
		INT32_MIN, (int64_t)INT32_MIN - 1, INT64_MIN, INT64_MAX };
	static const uint64_t uints[] = { 128, 255, 256, 65535, 65536, UINT32_MAX,
		(uint64_t)UINT32_MAX + 1, UINT64_MAX };
	size_t nints = sizeof(ints) / sizeof(ints[0]), nuints = sizeof(uints) / sizeof(uints[0]);
	char big[70000];
	msgpack_sbuffer sb;
	msgpack_packer pk;
	struct mp_cur c;
	size_t i, L;
	uint32_t n, sl;
	const char *sp;
	const uint8_t *bp;
	uint64_t u;
	int64_t v;

	memset(big, 'x', sizeof(big));
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 21);		/* array16: everything below is in it */
	for (i = 0; i < nints; i++)
		msgpack_pack_int64(&pk, ints[i]);
	msgpack_pack_array(&pk, (uint32_t)nuints);
	for (i = 0; i < nuints; i++)
		msgpack_pack_uint64(&pk, uints[i]);
	msgpack_pack_str_with_body(&pk, big, 31);	/* fixstr */
	msgpack_pack_str_with_body(&pk, big, 200);	/* str8 */
	msgpack_pack_str_with_body(&pk, big, 70000);	/* str32 */
	msgpack_pack_bin_with_body(&pk, big, 300);	/* bin16 */
	msgpack_pack_map(&pk, 17);			/* map16 */
	for (i = 0; i < 17; i++) {
		msgpack_pack_uint8(&pk, (uint8_t)i);
		msgpack_pack_nil(&pk);
	}
	msgpack_pack_array(&pk, 9);		/* values skipped as a whole */
	msgpack_pack_double(&pk, 2.5);
	msgpack_pack_float(&pk, 1.5f);
	msgpack_pack_true(&pk);
	msgpack_pack_ext_with_body(&pk, big, 1, 1);
	msgpack_pack_ext_with_body(&pk, big, 8, 2);
	msgpack_pack_ext_with_body(&pk, big, 16, 3);
	msgpack_pack_ext_with_body(&pk, big, 100, 4);
	msgpack_pack_bin_with_body(&pk, big, 70000);	/* bin32 */
	msgpack_pack_map(&pk, 1);
	msgpack_pack_str_with_body(&pk, "k", 1);
	msgpack_pack_array(&pk, 0);

	/* Typed walk of the complete blob. */
	mp_cur__init(&c, sb.data, sb.size);
	CHECK(mp_cur__array(&c, &n) == 0 && n == 21);
	for (i = 0; i < nints; i++)
		CHECK(mp_cur__peek(&c) == (ints[i] < 0 ? MP_INT : MP_UINT) &&
		      mp_cur__int(&c, &v) == 0 && v == ints[i]);
	CHECK(mp_cur__array(&c, &n) == 0 && n == nuints);
	for (i = 0; i < nuints; i++)
		CHECK(mp_cur__uint(&c, &u) == 0 && u == uints[i]);
	CHECK(mp_cur__str(&c, &sp, &sl) == 0 && sl == 31 && sp[30] == 'x');
	CHECK(mp_cur__str(&c, &sp, &sl) == 0 && sl == 200);
	CHECK(mp_cur__str(&c, &sp, &sl) == 0 && sl == 70000);
	CHECK(mp_cur__bin(&c, &bp, &sl) == 0 && sl == 300);
	CHECK(mp_cur__map(&c, &n) == 0 && n == 17);
	CHECK(mp_cur__skip_n(&c, 2 * n) == 0);
	CHECK(mp_cur__peek(&c) == MP_ARRAY && mp_cur__skip(&c) == 0);
	CHECK(c.err == 0 && c.p == c.end && mp_cur__peek(&c) == MP_NONE);

	/* Type and range errors are sticky and read zeros. */
	mp_cur__init(&c, sb.data, sb.size);
	CHECK(mp_cur__map(&c, &n) == -EBADMSG && n == 0 && c.why);
	CHECK(mp_cur__array(&c, &n) == -EBADMSG && n == 0);
	mp_cur__init(&c, "\xff", 1);		/* -1 */
	CHECK(mp_cur__uint(&c, &u) == -EBADMSG && u == 0);
	mp_cur__init(&c, "\xcf\xff\xff\xff\xff\xff\xff\xff\xff", 9);
	CHECK(mp_cur__int(&c, &v) == -EBADMSG);
	mp_cur__init(&c, "\xce\x00\x01\x00\x00", 5);
	CHECK(mp_cur__u32(&c, &n) == 0 && n == 65536);
	mp_cur__init(&c, "\xcf\x00\x00\x00\x01\x00\x00\x00\x00", 9);
	CHECK(mp_cur__u32(&c, &n) == -EBADMSG);
	mp_cur__init(&c, "\xdc\x00\x05\x01\x02\x03\x04", 7);	/* 5 claimed, 4 bytes left */
	CHECK(mp_cur__array(&c, &n) == -EBADMSG && n == 0);
	mp_cur__init(&c, "\x83\x01\x02\x03\x04\x05", 6);	/* 3 pairs need 6 bytes */
	CHECK(mp_cur__map(&c, &n) == -EBADMSG && n == 0);
	mp_cur__init(&c, "\xd3\x00\x00\x00\x00\x00\x00\x00\x05", 9);	/* int64 holding 5 */
	CHECK(mp_cur__peek(&c) == MP_UINT && mp_cur__uint(&c, &u) == 0 && u == 5);
	mp_cur__init(&c, "\xd1\xff\x00", 3);	/* int16 holding -256 */
	CHECK(mp_cur__peek(&c) == MP_INT && mp_cur__int(&c, &v) == 0 && v == -256);
	mp_cur__init(&c, "\xd2\x00", 2);		/* int32 cut short */
	CHECK(mp_cur__peek(&c) == MP_INT && mp_cur__int(&c, &v) == -EBADMSG);
	mp_cur__init(&c, "\xc1", 1);
	CHECK(mp_cur__skip(&c) == -EBADMSG);
	mp_cur__init(&c, "\xdd\xff\xff\xff\xff\x00", 6);	/* 4G elements claimed */
	CHECK(mp_cur__skip(&c) == -EBADMSG);
	mp_cur__init(&c, "\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\xdf\x7f\xff\xff\xff", 15);
	CHECK(mp_cur__skip(&c) == -EBADMSG);

	/* Every strict prefix fails, inside an exact-size buffer. */
	for (L = 0; L < sb.size; L += L < 400 ? 1 : 997) {
		uint8_t *p = malloc(L ? L : 1);

		memcpy(p, sb.data, L);
		mp_cur__init(&c, p, L);
		CHECKF(mp_cur__skip(&c) != 0 && c.p <= c.end, "prefix %zu", L);
		mp_cur__init(&c, p, L);
		mp_cur__array(&c, &n);
		for (i = 0; i < nints && !c.err; i++)
			mp_cur__int(&c, &v);
		mp_cur__array(&c, &n);
		for (i = 0; i < nuints && !c.err; i++)
			mp_cur__uint(&c, &u);
		mp_cur__str(&c, &sp, &sl);
		mp_cur__str(&c, &sp, &sl);
		mp_cur__str(&c, &sp, &sl);
		mp_cur__bin(&c, &bp, &sl);
		mp_cur__map(&c, &n);
		mp_cur__skip_n(&c, 2 * n);
		mp_cur__skip(&c);
		CHECKF(c.err != 0 && c.p <= c.end, "typed prefix %zu", L);
		free(p);
	}
	msgpack_sbuffer_destroy(&sb);
}
