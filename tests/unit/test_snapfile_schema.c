/*
 * test_snapfile_schema.c -- part of test_snapfile: one record of every kind
 * with every field set, and the bytes the writer makes of them.
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
#include "formats/snapfile.h"
#include "tests/unit/snapfile_test.h"

/* -- One record of every kind, every field set --------------------------------- */

struct full {
	struct snapfile_header hdr;
	struct snapfile_mapping maps[2];
	const char *prov[2];
	struct snapfile_process lj, exitnote;
	struct ljs_sample s;
	uint8_t secdata[2][5], memdata[7], objdata[9], bid[4];
	struct snapfile_memory mem;
	struct snapfile_ksym ksyms[2];
	struct snapfile_object obj;
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
	f->maps[0] = (struct snapfile_mapping){ val(4, 64), val(4, 64) + 0x1000, val(2, 64),
						SNAPFILE_PROT_READ | SNAPFILE_PROT_EXEC, 4,
						"/usr/bin/luajit", f->bid };
	f->maps[1] = (struct snapfile_mapping){ 0x7ffd0000, 0x7ffe0000, 0, SNAPFILE_PROT_READ,
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
	f->ksyms[0] = (struct snapfile_ksym){ 0xffffffff81000000ull, "_stext", "" };
	f->ksyms[1] = (struct snapfile_ksym){ 0xffffffffc0001234ull, "ext4_read", "ext4" };
	memcpy(f->objdata, "\x7f" "ELFvdso!", 9);
	f->obj = (struct snapfile_object){ "[vdso]", f->bid, 4, f->objdata, 9 };
	f->stats[0] = (struct snapfile_stat){ "samples_written", val(1, 64) };
	f->stats[1] = (struct snapfile_stat){ "samples_lost", 0 };
	f->stats[2] = (struct snapfile_stat){ "big", UINT64_MAX };
}

/* Write every record of f to path, in kind order; 0 or negative errno. */
static int full_write(const struct full *f, const char *path)
{
	struct snapfile_writer *w;
	int err;

	w = snapfile_writer__open(path, &f->hdr, &err);
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
		err = snapfile_writer__close(w);
	else
		snapfile_writer__close(w);
	return err;
}

/* -- Known bytes ------------------------------------------------------------------- */

/* Frame by frame: payload length and crc32, as the writer of format 1.0 made them. */
static const struct { uint32_t len, crc; } known[] = {
	{ 252, 0x85dba8e7 },	/* HEADER */
	{ 1533, 0xe27f1e04 },	/* PROCESS with LuaJIT */
	{ 80, 0x249c25c8 },	/* PROCESS exit note */
	{ 254, 0x666ff967 },	/* SAMPLE */
	{ 42, 0x958b3aef },	/* MEMORY */
	{ 46, 0x86ca58bb },	/* KSYMS */
	{ 48, 0x0ed62345 },	/* STATS */
	{ 26, 0xd7ea50d2 },	/* OBJECT */
	{ 12, 0x7dd0835e },	/* END */
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
