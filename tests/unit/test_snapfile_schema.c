/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_snapfile_schema.c -- part of test_snapfile: one record of every kind
 * with every field set, and the bytes the writer makes of them.
 *
 * The schema test (formats/capture/snapfile_schema.h drives it) checks that the
 * input sets every field of every list, that the bytes hold the lists' keys
 * in order and their array lengths, and that each field reads back.
 *
 * The known-bytes test freezes the length and crc32 of every frame the
 * writer produces for a fixed input: an edit of the writer or of its schema
 * that changes a key, the order of fields, their count or an encoding fails
 * it, since files already written must keep meaning the same thing.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <msgpack.h>
#include "formats/capture/snapfile.h"
#include "formats/capture/snapfile_schema.h"
#include "tests/unit/snapfile_test.h"

/* -- One record of every kind, every field set --------------------------------- */

struct full {
	struct snapfile_header hdr;
	struct procmap_desc maps[2];
	const char *prov[2];
	struct snapfile_process lj, exitnote;
	struct ljs_sample s;
	uint8_t secdata[2][5], memdata[7], objdata[9], bid[4];
	struct snapfile_memory mem;
	struct ksym ksyms[2];
	struct snapfile_object obj;
	uint8_t extents[32], zdata[6], names[8];
	struct snapfile_embed emb;
	struct snapfile_stat stats[3];
};

/* A value of field number i of a record: the sizes cycle through every
 * msgpack integer encoding that fits in bits. */
static uint64_t val(unsigned i, unsigned bits)
{
	static const uint64_t base[] = { 0x05, 0x81, 0x1234, 0x12345678, 0x123456789abcull };
	unsigned n = bits >= 64 ? 5 : bits >= 32 ? 4 : 3;

	return base[i % n] + i;
}

/* Fill f: every member of every record set, none to its default. */
static void full_init(struct full *f)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	f->hdr = (struct snapfile_header){
		.ljsnap_version = "9.9.9-schema", .host = "schemahost", .kernel = "6.1.0-k",
		.arch = "x86_64", .mono_ns = val(4, 64), .real_ns = 1700000000123456789ull,
		.freq_hz = (uint32_t)val(1, 32), .stack_bytes = (uint32_t)val(2, 32),
		.lstack_bytes = (uint32_t)val(3, 32), .target = "-p 4242",
		.features = SNAPFILE_F_MEMORY | SNAPFILE_F_KSYMS | SNAPFILE_F_TASK_EVENTS,
	};
	memcpy(f->bid, "\xde\xad\xbe\xef", 4);
	f->maps[0] = (struct procmap_desc){ val(4, 64), val(4, 64) + 0x1000, val(2, 64),
						PROCMAP_PROT_READ | PROCMAP_PROT_EXEC, 4,
						"/usr/bin/luajit", f->bid };
	f->maps[1] = (struct procmap_desc){ 0x7ffd0000, 0x7ffe0000, 0, PROCMAP_PROT_READ,
						0, "", NULL };
	f->prov[0] = "gg_ofs_g: symbol";
	f->prov[1] = "disp2g: code";

	f->lj.pid = (uint32_t)val(3, 32);
	f->lj.ppid = (uint32_t)val(2, 32);
	strcpy(f->lj.comm, "luajit-fifteen!");
	f->lj.exe = "/usr/bin/luajit";
	f->lj.cmdline = "luajit -e x";
	f->lj.start_ns = val(4, 64);
	f->lj.exited_ns = val(1, 64);
	f->lj.image = (uint32_t)val(0, 32);
	f->lj.nmaps = 2;
	f->lj.maps = f->maps;
	f->lj.has_luajit = 1;
	for (i = 0; i < lj_layout__nfields; i++) {
		/* Both signs, every width. */
		int32_t v = (int32_t)val((unsigned)i, 32) * (i % 2 ? -1 : 1);

		memcpy((char *)&f->lj.layout + lj_layout__fields[i].offset, &v, sizeof(v));
	}
	f->lj.lj_build = "LuaJIT 2.1 GC64 (schema test)";
	f->lj.nprov = 2;
	f->lj.prov = f->prov;
	f->lj.vm_lo = val(4, 64);
	f->lj.vm_hi = val(4, 64) + 0x4000;
	f->lj.g = val(3, 64);
	f->lj.vm_exit = val(4, 64) + 0x123;
	f->exitnote = (struct snapfile_process){ .pid = f->lj.pid, .comm = "luajit",
						 .exited_ns = val(4, 64), .image = 1 };

	f->s.time_ns = val(4, 64);
	f->s.pid = (uint32_t)val(1, 32);
	f->s.tid = (uint32_t)val(2, 32);
	f->s.cpu = (uint32_t)val(0, 32);
	f->s.flags = LJS_SAMPLE_F_LUAJIT | LJS_SAMPLE_F_REGS_VALID | LJS_SAMPLE_F_G_FROM_REG;
	strcpy(f->s.comm, "sample-comm");
	for (i = 0; i < sizeof(f->s.regs) / 8; i++) {
		uint64_t v = val((unsigned)i, 64);

		memcpy((char *)&f->s.regs + 8 * i, &v, 8);
	}
	f->s.g = val(4, 64);
	f->s.cfg_gen = (uint32_t)val(2, 32);
	f->s.nsec = 2;
	for (i = 0; i < 2; i++) {
		memcpy(f->secdata[i], i ? "\x01\x02\x03\x04\x05" : "abcde", 5);
		f->s.sec[i] = (struct ljs_section){
			.kind = (uint16_t)(i ? LJS_SEC_LSTACK : LJS_SEC_G),
			.status = (uint16_t)(i ? LJS_ST_TRUNCATED : LJS_ST_FAULT),
			.len = 5, .addr = val((unsigned)(4 + i), 64), .want = (uint32_t)val((unsigned)(2 + i), 32),
			.aux = (uint32_t)val((unsigned)i, 16), .data = f->secdata[i],
		};
	}

	memcpy(f->memdata, "memory!", 7);
	f->mem = (struct snapfile_memory){ (uint32_t)val(3, 32), 7, val(4, 64), f->memdata,
					   val(3, 64), val(4, 64), val(2, 64) };
	f->ksyms[0] = (struct ksym){ 0xffffffff81000000ull, "_stext", "" };
	f->ksyms[1] = (struct ksym){ 0xffffffffc0001234ull, "ext4_read", "ext4" };
	memcpy(f->objdata, "\x7f" "ELFvdso!", 9);
	f->obj = (struct snapfile_object){ "[vdso]", f->bid, 4, f->objdata, 9 };
	for (i = 0; i < sizeof(f->extents); i++)
		f->extents[i] = (uint8_t)(i * 7 + 1);
	memcpy(f->zdata, "zstd!!", 6);
	memcpy(f->names, "names!!", 8);
	f->emb = (struct snapfile_embed){ "/usr/bin/luajit", f->bid, 4, val(4, 64),
					  (uint32_t)val(1, 32), f->extents, 32, val(3, 64),
					  f->zdata, 6, f->names, 8 };
	f->stats[0] = (struct snapfile_stat){ "samples_written", val(1, 64) };
	f->stats[1] = (struct snapfile_stat){ "samples_lost", 0 };
	f->stats[2] = (struct snapfile_stat){ "big", UINT64_MAX };
}

/* Write every record of f to path, in kind order; 0 or negative errno. */
static int full_write(const struct full *f, const char *path)
{
	static const struct snapfile_writer_opts v1 = { .major = 1 };
	struct snapfile_writer *w;
	int err;

	w = snapfile_writer__open_opts(path, &f->hdr, &v1, &err);
	if (!w)
		return err;
	err = snapfile_writer__process(w, &f->lj);
	if (!err)
		err = snapfile_writer__process(w, &f->exitnote);
	if (!err)
		err = snapfile_writer__sample(w, &f->s);
	if (!err)
		err = snapfile_writer__memory(w, &f->mem);
	if (!err)
		err = snapfile_writer__ksyms(w, f->ksyms, 2);
	if (!err)
		err = snapfile_writer__stats(w, f->stats, 3);
	if (!err)
		err = snapfile_writer__object(w, &f->obj);
	if (!err)
		err = snapfile_writer__embed(w, &f->emb);
	if (!err)
		err = snapfile_writer__close(w);
	else
		snapfile_writer__close(w);
	return err;
}

/* -- Known bytes ------------------------------------------------------------------- */

/* Frame by frame: payload length and crc32, as the writer of format 1.0 made them. */
static const struct { uint32_t len, crc; } known[] = {
	{ 252, 0x85dba8e7 },	/* HEADER */
	{ 1550, 0x6706fdce },	/* PROCESS with LuaJIT (with "vm_exit", minor 1) */
	{ 80, 0x249c25c8 },	/* PROCESS exit note */
	{ 254, 0x666ff967 },	/* SAMPLE */
	{ 42, 0x958b3aef },	/* MEMORY */
	{ 46, 0x86ca58bb },	/* KSYMS */
	{ 48, 0x0ed62345 },	/* STATS */
	{ 26, 0xd7ea50d2 },	/* OBJECT */
	{ 92, 0xb4413086 },	/* EMBED (with "names", minor addition to 1.0) */
	{ 12, 0x0ad7b3c8 },	/* END (9 records before it since EMBED was added) */
};

/* The writer turns the fixed input into the frozen bytes. */
void test_known_bytes(void)
{
	const char *path = tpath("known.ljsnap");
	struct full *f = malloc(sizeof(*f));
	uint8_t *b = NULL;
	size_t len = 0, off = SNAPFILE_MAGIC_LEN, k = 0;
	FILE *fp;

	CHECK(f != NULL);
	if (!f)
		return;
	full_init(f);
	CHECK(full_write(f, path) == 0);
	fp = fopen(path, "rb");
	CHECK(fp != NULL);
	if (fp) {
		b = malloc(1 << 16);
		len = b ? fread(b, 1, 1 << 16, fp) : 0;
		fclose(fp);
	}
	while (b && off + SNAPFILE_FRAME_HDR <= len) {
		uint32_t flen, crc;

		memcpy(&flen, b + off, 4);
		memcpy(&crc, b + off + 4, 4);
		flen = le32toh(flen);
		crc = le32toh(crc);
		if (getenv("LJSNAP_PRINT_KNOWN"))
			printf("\t{ %u, 0x%08x },\n", flen, crc);
		CHECKF(k < sizeof(known) / sizeof(known[0]) && known[k].len == flen &&
		       known[k].crc == crc, "frame %zu: length %u crc 0x%08x", k, flen, crc);
		off += SNAPFILE_FRAME_HDR + flen;
		k++;
	}
	CHECKF(k == sizeof(known) / sizeof(known[0]) && off == len, "%zu frames, %zu of %zu bytes",
	       k, off, len);
	free(b);
	free(f);
}

/* -- Every field, from the schema ----------------------------------------------------- *
 * EQ_<type>(member): does the field hold the same in *x and *y?  (NULL and
 * "" are the same string: the reader returns "" for what was written NULL.) */

static int str_same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

static int bin_same(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb)
{
	return na == nb && (!na || (a && b && !memcmp(a, b, na)));
}

static int maps_same(const struct procmap_desc *xs, uint32_t xn,
		     const struct procmap_desc *ys, uint32_t yn);
static int luajit_same(const struct snapfile_process *x, const struct snapfile_process *y);
static int strs_same(const char *const *xs, uint32_t xn, const char *const *ys, uint32_t yn);
static int sections_same(const struct ljs_section *xs, uint32_t xn,
			 const struct ljs_section *ys, uint32_t yn);
static int ksyms_same(const struct ksym *xs, uint32_t xn,
		      const struct ksym *ys, uint32_t yn);
static int counters_same(const struct snapfile_stat *xs, uint32_t xn,
			 const struct snapfile_stat *ys, uint32_t yn);

#define EQ_u16(m)		(x->m == y->m)
#define EQ_u32(m)		(x->m == y->m)
#define EQ_u64(m)		(x->m == y->m)
#define EQ_str(m)		str_same(x->m, y->m)
#define EQ_comm(m)		(!strncmp(x->m, y->m, LJS_COMM_LEN))
#define EQ_bin(m)		EQ_bin_ m
#define EQ_bin_(d, n)		bin_same(x->d, x->n, y->d, y->n)
#define EQ_regnames(m)		1	/* this build's names: checked through SAMPLE regs */
#define EQ_regs(m)		(!memcmp(&x->m, &y->m, sizeof(x->m)))
#define EQ_maps(m)		EQ_maps_ m
#define EQ_maps_(e, n)		maps_same(x->e, x->n, y->e, y->n)
#define EQ_lj(m)		(x->m == y->m && luajit_same(x, y))
#define EQ_layout(m)		(!memcmp(&x->m, &y->m, sizeof(x->m)))
#define EQ_prov(m)		EQ_prov_ m
#define EQ_prov_(e, n)		strs_same(x->e, x->n, y->e, y->n)
#define EQ_sections(m)		EQ_sections_ m
#define EQ_sections_(e, n)	sections_same(x->e, x->n, y->e, y->n)
#define EQ_ksyms(m)		EQ_ksyms_ m
#define EQ_ksyms_(e, n)		ksyms_same(x->e, x->n, y->e, y->n)
#define EQ_counters(m)		EQ_counters_ m
#define EQ_counters_(e, n)	counters_same(x->e, x->n, y->e, y->n)

/* All fields of a list the same, as an expression. */
#define AND_FIELD(key, m, type, cond)	&& EQ_##type(m)
/* Each field the same (read back), or each field different (set: y is zeroed). */
#define SAME_FIELD(key, m, type, cond)	CHECKF(EQ_##type(m), "%s: field \"%s\" read back differs", what, key);
#define SET_FIELD(key, m, type, cond)	CHECKF(!EQ_##type(m) || !strcmp(#type, "regnames"),	\
					       "%s: field \"%s\" left at its default by the test",	\
					       what, key);

static int maps_same(const struct procmap_desc *xs, uint32_t xn,
		     const struct procmap_desc *ys, uint32_t yn)
{
	uint32_t i;

	for (i = 0; i < xn && xn == yn; i++) {
		const struct procmap_desc *x = &xs[i], *y = &ys[i];

		if (!(1 SNAPFILE_MAPPING_FIELDS(AND_FIELD)))
			return 0;
	}
	return xn == yn;
}

static int luajit_same(const struct snapfile_process *x, const struct snapfile_process *y)
{
	return !x->has_luajit || (1 SNAPFILE_LUAJIT_FIELDS(AND_FIELD));
}

static int strs_same(const char *const *xs, uint32_t xn, const char *const *ys, uint32_t yn)
{
	uint32_t i;

	for (i = 0; i < xn && xn == yn; i++)
		if (!str_same(xs[i], ys[i]))
			return 0;
	return xn == yn;
}

static int sections_same(const struct ljs_section *xs, uint32_t xn,
			 const struct ljs_section *ys, uint32_t yn)
{
	uint32_t i;

	for (i = 0; i < xn && xn == yn; i++) {
		const struct ljs_section *x = &xs[i], *y = &ys[i];

		if (!(1 SNAPFILE_SECTION_FIELDS(AND_FIELD)))
			return 0;
	}
	return xn == yn;
}

static int ksyms_same(const struct ksym *xs, uint32_t xn,
		      const struct ksym *ys, uint32_t yn)
{
	uint32_t i;

	for (i = 0; i < xn && xn == yn; i++) {
		const struct ksym *x = &xs[i], *y = &ys[i];

		if (!(1 SNAPFILE_KSYM_FIELDS(AND_FIELD)))
			return 0;
	}
	return xn == yn;
}

static int counters_same(const struct snapfile_stat *xs, uint32_t xn,
			 const struct snapfile_stat *ys, uint32_t yn)
{
	uint32_t i;

	for (i = 0; i < xn && xn == yn; i++)
		if (!str_same(xs[i].name, ys[i].name) || xs[i].value != ys[i].value)
			return 0;
	return xn == yn;
}

/* The test sets every field of every list, nested ones included: a field
 * added to the schema but not to full_init fails here. */
static void check_all_set(const struct full *f)
{
	static const struct snapfile_header h0;
	static const struct snapfile_process p0;
	static const struct procmap_desc m0;
	static const struct ljs_sample s0;
	static const struct ljs_section sec0;
	static const struct snapfile_memory mem0;
	static const struct ksym k0;
	static const struct snapfile_ksyms ks0;
	static const struct snapfile_stats st0;
	static const struct snapfile_object o0;
	static const struct snapfile_embed em0;
	const char *what = "set";
	struct snapfile_header h = f->hdr;
	struct snapfile_ksyms ks = { 2, f->ksyms };
	struct snapfile_stats st = { 3, f->stats };
	struct snapfile_end e = { 1 };
	static const struct snapfile_end e0;

	/* major and minor are the writer's, not the caller's. */
	h.major = 1;
	h.minor = 1;
	{ const struct snapfile_header *x = &h, *y = &h0; SNAPFILE_HEADER_FIELDS(SET_FIELD) }
	{ const struct snapfile_process *x = &f->lj, *y = &p0; SNAPFILE_PROCESS_FIELDS(SET_FIELD) }
	{ const struct snapfile_process *x = &f->lj, *y = &p0; SNAPFILE_LUAJIT_FIELDS(SET_FIELD) }
	{ const struct procmap_desc *x = &f->maps[0], *y = &m0; SNAPFILE_MAPPING_FIELDS(SET_FIELD) }
	{ const struct ljs_sample *x = &f->s, *y = &s0; SNAPFILE_SAMPLE_FIELDS(SET_FIELD) }
	{ const struct ljs_section *x = &f->s.sec[0], *y = &sec0; SNAPFILE_SECTION_FIELDS(SET_FIELD) }
	{ const struct snapfile_memory *x = &f->mem, *y = &mem0; SNAPFILE_MEMORY_FIELDS(SET_FIELD) }
	{ const struct snapfile_ksyms *x = &ks, *y = &ks0; SNAPFILE_KSYMS_FIELDS(SET_FIELD) }
	{ const struct ksym *x = &f->ksyms[1], *y = &k0; SNAPFILE_KSYM_FIELDS(SET_FIELD) }
	{ const struct snapfile_stats *x = &st, *y = &st0; SNAPFILE_STATS_FIELDS(SET_FIELD) }
	{ const struct snapfile_object *x = &f->obj, *y = &o0; SNAPFILE_OBJECT_FIELDS(SET_FIELD) }
	{ const struct snapfile_embed *x = &f->emb, *y = &em0; SNAPFILE_EMBED_FIELDS(SET_FIELD) }
	{ const struct snapfile_end *x = &e, *y = &e0; SNAPFILE_END_FIELDS(SET_FIELD) }
}

/* Read back every record of f from path and compare it field by field. */
static void check_read_back(const struct full *f, const char *path)
{
	struct snapfile_ksyms ks = { 2, f->ksyms };
	struct snapfile_stats st = { 3, f->stats };
	struct snapfile_end e = { 9 };	/* frames before END, header included */
	struct snapfile_header h = f->hdr;
	struct snapfile_reader *r;
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	static const enum snapfile_kind order[9] = {
		SNAPFILE_REC_PROCESS, SNAPFILE_REC_PROCESS, SNAPFILE_REC_SAMPLE, SNAPFILE_REC_MEMORY,
		SNAPFILE_REC_KSYMS, SNAPFILE_REC_STATS, SNAPFILE_REC_OBJECT, SNAPFILE_REC_EMBED,
		SNAPFILE_REC_END,
	};
	const char *what = "header";
	int err, k = 0;

	r = snapfile_reader__open(path, &err);
	CHECK(r != NULL && rec != NULL);
	if (!r || !rec)
		goto out;
	h.major = 1;	/* full_write: format 1 */
	h.minor = 0;
	{ const struct snapfile_header *x = snapfile_reader__header(r), *y = &h;
	  SNAPFILE_HEADER_FIELDS(SAME_FIELD) }
	while (snapfile_reader__next(r, rec) == 1) {
		what = snapfile__kind_name(rec->kind);
		switch (k++) {
		case 0: { const struct snapfile_process *x = &rec->proc, *y = &f->lj;
			  SNAPFILE_PROCESS_FIELDS(SAME_FIELD) break; }
		case 1: { const struct snapfile_process *x = &rec->proc, *y = &f->exitnote;
			  CHECK(!x->has_luajit);
			  SNAPFILE_PROCESS_FIELDS(SAME_FIELD) break; }
		case 2: { const struct ljs_sample *x = &rec->sample, *y = &f->s;
			  SNAPFILE_SAMPLE_FIELDS(SAME_FIELD) break; }
		case 3: { const struct snapfile_memory *x = &rec->mem, *y = &f->mem;
			  SNAPFILE_MEMORY_FIELDS(SAME_FIELD) break; }
		case 4: { const struct snapfile_ksyms *x = &rec->ksyms, *y = &ks;
			  SNAPFILE_KSYMS_FIELDS(SAME_FIELD) break; }
		case 5: { const struct snapfile_stats *x = &rec->stats, *y = &st;
			  SNAPFILE_STATS_FIELDS(SAME_FIELD) break; }
		case 6: { const struct snapfile_object *x = &rec->object, *y = &f->obj;
			  SNAPFILE_OBJECT_FIELDS(SAME_FIELD) break; }
		case 7: { const struct snapfile_embed *x = &rec->embed, *y = &f->emb;
			  SNAPFILE_EMBED_FIELDS(SAME_FIELD) break; }
		case 8: { const struct snapfile_end *x = &rec->end, *y = &e;
			  SNAPFILE_END_FIELDS(SAME_FIELD) break; }
		default:
			CHECKF(0, "unexpected record %d (%s)", k, what);
		}
		CHECKF(k <= 9 && rec->kind == order[k - 1], "record %d is a %s", k, what);
	}
	CHECKF(k == 9, "%d records read back", k);
	CHECK(snapfile_reader__stats(r)->clean_end && snapfile_reader__stats(r)->corrupt == 0);
out:
	snapfile_reader__close(r);
	free(rec);
}

/* -- Keys as the schema lists them, seen by msgpack-c ---------------------------------- */

#define KEY_STR(key, m, type, cond)	key,
#define ONE_FIELD(key, m, type, cond)	1,

/* Does map o hold exactly the keys keys[0..n), in that order? */
static int keys_are(const msgpack_object *o, const char *const *keys, uint32_t n)
{
	uint32_t i;

	if (o->type != MSGPACK_OBJECT_MAP || o->via.map.size != n)
		return 0;
	for (i = 0; i < n; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key;

		if (k->type != MSGPACK_OBJECT_STR || k->via.str.size != strlen(keys[i]) ||
		    memcmp(k->via.str.ptr, keys[i], k->via.str.size))
			return 0;
	}
	return 1;
}

/* The value of key in map o, or NULL. */
static const msgpack_object *map_get(const msgpack_object *o, const char *key)
{
	uint32_t i;

	for (i = 0; o->type == MSGPACK_OBJECT_MAP && i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key;

		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == strlen(key) &&
		    !memcmp(k->via.str.ptr, key, k->via.str.size))
			return &o->via.map.ptr[i].val;
	}
	return NULL;
}

/* Is o an array whose elements are each arrays of n values? */
static int arrays_of(const msgpack_object *o, uint32_t n)
{
	uint32_t i;

	if (!o || o->type != MSGPACK_OBJECT_ARRAY)
		return 0;
	for (i = 0; i < o->via.array.size; i++)
		if (o->via.array.ptr[i].type != MSGPACK_OBJECT_ARRAY ||
		    o->via.array.ptr[i].via.array.size != n)
			return 0;
	return 1;
}

/* Check one frame's payload (the k-th frame) against the schema. */
static void check_frame_keys(const msgpack_object *a, size_t k)
{
	static const char *const hdr[] = { SNAPFILE_HEADER_FIELDS(KEY_STR) };
	static const char *const proc[] = { SNAPFILE_PROCESS_FIELDS(KEY_STR) };
	static const char *const lj[] = { SNAPFILE_LUAJIT_FIELDS(KEY_STR) };
	static const char *const end[] = { SNAPFILE_END_FIELDS(KEY_STR) };
	const msgpack_object *v = a->via.array.size > 1 ? &a->via.array.ptr[1] : NULL;
	uint32_t kind = (uint32_t)a->via.array.ptr[0].via.u64, n = a->via.array.size - 1;

	switch (kind) {
	case SNAPFILE_REC_HEADER:
		CHECKF(n == 1 && keys_are(v, hdr, SNAPFILE_NFIELDS(SNAPFILE_HEADER_FIELDS)),
		       "frame %zu: HEADER keys", k);
		break;
	case SNAPFILE_REC_PROCESS:
		/* The LuaJIT process has "lj", the exit note not. */
		CHECKF(n == 1 && keys_are(v, proc, SNAPFILE_NFIELDS(SNAPFILE_PROCESS_FIELDS) - (k != 1)),
		       "frame %zu: PROCESS keys", k);
		CHECKF(arrays_of(map_get(v, "maps"), SNAPFILE_NFIELDS(SNAPFILE_MAPPING_FIELDS)),
		       "frame %zu: mapping fields", k);
		if (k == 1)
			CHECKF(keys_are(map_get(v, "lj"), lj, SNAPFILE_NFIELDS(SNAPFILE_LUAJIT_FIELDS)) &&
			       map_get(map_get(v, "lj"), "layout")->via.map.size == lj_layout__nfields,
			       "frame %zu: lj keys", k);
		break;
	case SNAPFILE_REC_SAMPLE:
		CHECK(n == SNAPFILE_NFIELDS(SNAPFILE_SAMPLE_FIELDS));
		CHECK(n == 10 && arrays_of(&a->via.array.ptr[n], SNAPFILE_NFIELDS(SNAPFILE_SECTION_FIELDS)));
		break;
	case SNAPFILE_REC_MEMORY:
		CHECK(n == SNAPFILE_NFIELDS(SNAPFILE_MEMORY_FIELDS));
		break;
	case SNAPFILE_REC_KSYMS:
		CHECK(n == SNAPFILE_NFIELDS(SNAPFILE_KSYMS_FIELDS) &&
		      arrays_of(v, SNAPFILE_NFIELDS(SNAPFILE_KSYM_FIELDS)));
		break;
	case SNAPFILE_REC_STATS:
		CHECK(n == SNAPFILE_NFIELDS(SNAPFILE_STATS_FIELDS) && v->type == MSGPACK_OBJECT_MAP);
		break;
	case SNAPFILE_REC_OBJECT:
		CHECK(n == SNAPFILE_NFIELDS(SNAPFILE_OBJECT_FIELDS));
		break;
	case SNAPFILE_REC_EMBED:
		CHECK(n == SNAPFILE_NFIELDS(SNAPFILE_EMBED_FIELDS));
		break;
	case SNAPFILE_REC_END:
		CHECKF(n == 1 && keys_are(v, end, SNAPFILE_NFIELDS(SNAPFILE_END_FIELDS)),
		       "frame %zu: END keys", k);
		break;
	default:
		CHECKF(0, "frame %zu: kind %u", k, kind);
	}
}

/* Parse every frame of path with msgpack-c and check its keys and lengths. */
static void check_keys(const char *path)
{
	uint8_t *b = malloc(1 << 16);
	FILE *fp = fopen(path, "rb");
	size_t len = b && fp ? fread(b, 1, 1 << 16, fp) : 0, off = SNAPFILE_MAGIC_LEN, k = 0;

	if (fp)
		fclose(fp);
	CHECK(len > off);
	while (off + SNAPFILE_FRAME_HDR <= len) {
		msgpack_unpacked u;
		uint32_t flen;
		size_t pos = 0;

		memcpy(&flen, b + off, 4);
		flen = le32toh(flen);
		msgpack_unpacked_init(&u);
		if (msgpack_unpack_next(&u, (const char *)b + off + SNAPFILE_FRAME_HDR, flen, &pos) ==
		    MSGPACK_UNPACK_SUCCESS && pos == flen && u.data.type == MSGPACK_OBJECT_ARRAY &&
		    u.data.via.array.size >= 1)
			check_frame_keys(&u.data, k);
		else
			CHECKF(0, "frame %zu does not parse", k);
		msgpack_unpacked_destroy(&u);
		off += SNAPFILE_FRAME_HDR + flen;
		k++;
	}
	free(b);
}

/* One record of every kind with every field set: the test sets them all,
 * the bytes hold the schema's keys in order, and each field reads back. */
void test_schema_fields(void)
{
	const char *path = tpath("schema.ljsnap");
	struct full *f = malloc(sizeof(*f));

	CHECK(f != NULL);
	if (!f)
		return;
	full_init(f);
	check_all_set(f);
	CHECK(full_write(f, path) == 0);
	check_keys(path);
	check_read_back(f, path);
	free(f);
}
