/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_snapfile_fixture.c -- part of test_snapfile: one capture with every
 * record kind, the comparisons of read-back records with the writer's input,
 * and an independent parse of the bytes with zlib and msgpack-c.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <msgpack.h>
#include "formats/capture/snapfile.h"
#include "tests/unit/snapfile_test.h"

/* -- Fixture: one file with every record kind ---------------------------------- */

struct fixture fx;
struct expect ex[32];
int nex;
static const char *const err_names[] = LJS_ERR_NAMES;

/* Fill a layout with values covering the whole 32-bit range. */
static void fill_layout(struct lj_layout *lay)
{
	size_t i;

	memset(lay, 0, sizeof(*lay));
	for (i = 0; i < lj_layout__nfields; i++) {
		uint32_t v = (uint32_t)rnd();

		if (i % 7 == 3)
			v = UINT32_MAX;
		else if (i % 7 == 5)
			v = (uint32_t)-(int32_t)(i + 1);
		memcpy((char *)lay + lj_layout__fields[i].offset, &v, sizeof(v));
	}
	lay->family = LJ_FAMILY_OPENRESTY;
	lay->flags = LJ_LAYOUT_F_GC64;
}

/* Fill one sample with nsec random sections. */
static void fill_sample(struct ljs_sample *s, int idx, uint32_t pid, uint32_t nsec)
{
	uint32_t i, j;

	memset(s, 0, sizeof(*s));
	s->time_ns = 1000000000ull * 500 + (uint64_t)idx * 10000000ull + 17;
	s->pid = pid;
	s->tid = pid + (uint32_t)idx;
	s->cpu = (uint32_t)idx % 3;
	s->flags = LJS_SAMPLE_F_LUAJIT | LJS_SAMPLE_F_REGS_VALID;
	snprintf(s->comm, sizeof(s->comm), idx & 1 ? "worker-%d" : "a-very-long-comm%d", idx);
	for (j = 0; j < sizeof(s->regs) / 8; j++) {
		uint64_t v = rnd();

		memcpy((char *)&s->regs + 8 * j, &v, 8);
	}
	s->g = 0x7f0000001000ull + (uint64_t)idx;
	s->cfg_gen = (uint32_t)idx + 1;
	s->nsec = nsec;
	for (i = 0; i < nsec; i++) {
		struct ljs_section *sec = &s->sec[i];
		uint32_t len = i == 1 ? 0 : (uint32_t)(rnd() % (idx == 0 ? 300 : 40));

		sec->kind = (uint16_t)(1 + i % (LJS_SEC__MAX - 1));
		sec->status = (uint16_t)(i % 4);
		sec->addr = rnd();
		sec->len = len;
		sec->want = len + (uint32_t)(rnd() % 100);
		sec->aux = i;
		for (j = 0; j < len; j++)
			fx.secdata[idx][i][j] = (uint8_t)rnd();
		sec->data = len ? fx.secdata[idx][i] : NULL;
	}
}

/* Build the fixture records. */
void fixture_init(void)
{
	size_t i;

	memset(&fx, 0, sizeof(fx));
	fx.hdr.ljsnap_version = "9.8.7-test";
	fx.hdr.host = "testhost";
	fx.hdr.kernel = "6.18.0-test";
	fx.hdr.arch = "x86_64";
	fx.hdr.mono_ns = 1000000000ull * 500;
	fx.hdr.real_ns = 1700000000ull * 1000000000ull;
	fx.hdr.freq_hz = 99;
	fx.hdr.stack_bytes = LJS_USTACK_DEFAULT;
	fx.hdr.lstack_bytes = LJS_LSTACK_DEFAULT;
	fx.hdr.target = "-p 4242 -p 777";
	fx.hdr.features = SNAPFILE_F_MEMORY | SNAPFILE_F_KSYMS | (1ull << 63);

	for (i = 0; i < sizeof(fx.bid); i++)
		fx.bid[i] = (uint8_t)(0xa0 + i);
	fx.maps[0] = (struct procmap_desc){ 0x400000, 0x452000, 0, PROCMAP_PROT_READ |
		PROCMAP_PROT_EXEC, sizeof(fx.bid), "/usr/local/openresty/nginx/sbin/nginx", fx.bid };
	fx.maps[1] = (struct procmap_desc){ 0x7ffd0000, 0x7ffe0000, 0, PROCMAP_PROT_READ |
		PROCMAP_PROT_WRITE, 0, "[stack]", NULL };
	fx.maps[2] = (struct procmap_desc){ 0x7f0000000000ull, 0x7f0000200000ull, 0x1000,
		PROCMAP_PROT_READ | PROCMAP_PROT_SHARED, 0, "", NULL };
	fx.prov[0] = "disp2g: calibrated from lj_vm_asm_begin";
	fx.prov[1] = "l_size: DWARF";
	fx.prov[2] = "";

	fx.pa.pid = 4242;
	fx.pa.ppid = 1;
	strcpy(fx.pa.comm, "nginx");
	fx.pa.exe = "/usr/local/openresty/nginx/sbin/nginx";
	fx.pa.cmdline = "nginx: worker process";
	fx.pa.start_ns = 123456789;
	fx.pa.nmaps = 3;
	fx.pa.maps = fx.maps;
	fx.pa.has_luajit = 1;
	fill_layout(&fx.pa.layout);
	fx.pa.lj_build = "LuaJIT 2.1.0-beta3 (OpenResty) GC64";
	fx.pa.nprov = 3;
	fx.pa.prov = fx.prov;
	fx.pa.vm_lo = 0x4a0000;
	fx.pa.vm_hi = 0x4b8000;
	fx.pa.g = 0x7f0000001000ull;

	fx.pb.pid = 777;
	fx.pb.ppid = 4242;
	strcpy(fx.pb.comm, "0123456789abcde");	/* 15 chars: the longest comm */
	fx.pb.exe = "/usr/bin/luajit";
	fx.pb.cmdline = "";
	fx.pb.start_ns = 987654321;
	fx.pb.image = 2;

	fx.pb_exit.pid = 777;
	strcpy(fx.pb_exit.comm, fx.pb.comm);
	fx.pb_exit.exited_ns = 1000000000ull * 503;
	fx.pb_exit.exe = fx.pb_exit.cmdline = fx.pb_exit.lj_build = "";

	fill_sample(&fx.s[0], 0, 4242, 7);
	fill_sample(&fx.s[1], 1, 777, 2);
	fill_sample(&fx.s[2], 2, 4242, LJS_SAMPLE_MAX_SECS);
	fill_sample(&fx.s[3], 3, 4242, 0);

	for (i = 0; i < NMEM; i++) {
		size_t j;

		for (j = 0; j < sizeof(fx.memdata[i]); j++)
			fx.memdata[i][j] = (uint8_t)rnd();
		fx.mem[i] = (struct snapfile_memory){ 4242, (uint32_t)(i ? 64 : 200),
			0x7f0000100000ull + i * 0x40, fx.memdata[i], 500000000001ull, 502000000000ull,
			i + 1 };
	}
	fx.mem[1].addr = fx.mem[0].addr;	/* same address, another generation */

	fx.ksyms[0] = (struct ksym){ 0xffffffff81000000ull, "_stext", "" };
	fx.ksyms[1] = (struct ksym){ 0xffffffff81001000ull, "do_syscall_64", "" };
	fx.ksyms[2] = (struct ksym){ 0xffffffffc0001000ull, "ext4_file_read_iter", "ext4" };
	fx.ksyms[3] = (struct ksym){ 0xffffffffc0002000ull, "", "" };
	fx.ksyms[4] = (struct ksym){ 0xffffffffffffffffull, "last", "mod" };

	for (i = 0; i < (int)sizeof(fx.objdata); i++)
		fx.objdata[i] = (uint8_t)rnd();
	for (i = 0; i < (int)sizeof(fx.objid); i++)
		fx.objid[i] = (uint8_t)(0xa0 + i);
	fx.obj = (struct snapfile_object){ "[vdso]", fx.objid, sizeof(fx.objid), fx.objdata,
					   sizeof(fx.objdata) };

	for (i = 0; i < LJS_ERR__MAX; i++)
		fx.stats[i] = (struct snapfile_stat){ err_names[i], i * 1000 + 1 };
	fx.stats[LJS_ERR__MAX] = (struct snapfile_stat){ "samples_written", NSAMPLES };
	fx.stats[LJS_ERR__MAX + 1] = (struct snapfile_stat){ "big", UINT64_MAX };

	nex = 0;
	ex[nex++] = (struct expect){ SNAPFILE_REC_PROCESS, &fx.pa };
	ex[nex++] = (struct expect){ SNAPFILE_REC_SAMPLE, &fx.s[0] };
	ex[nex++] = (struct expect){ SNAPFILE_REC_MEMORY, &fx.mem[0] };
	ex[nex++] = (struct expect){ SNAPFILE_REC_PROCESS, &fx.pb };
	ex[nex++] = (struct expect){ SNAPFILE_REC_SAMPLE, &fx.s[1] };
	ex[nex++] = (struct expect){ SNAPFILE_REC_KSYMS, fx.ksyms };
	ex[nex++] = (struct expect){ SNAPFILE_REC_SAMPLE, &fx.s[2] };
	ex[nex++] = (struct expect){ SNAPFILE_REC_MEMORY, &fx.mem[1] };
	ex[nex++] = (struct expect){ SNAPFILE_REC_PROCESS, &fx.pb_exit };
	ex[nex++] = (struct expect){ SNAPFILE_REC_STATS, fx.stats };
	ex[nex++] = (struct expect){ SNAPFILE_REC_SAMPLE, &fx.s[3] };
	ex[nex++] = (struct expect){ SNAPFILE_REC_OBJECT, &fx.obj };
	ex[nex++] = (struct expect){ SNAPFILE_REC_END, NULL };
}

/* Write the fixture file in format 1 (the tests of its bytes). */
void fixture_write(const char *path)
{
	static const struct snapfile_writer_opts v1 = { .major = 1 };

	fixture_write_opts(path, &v1);
}

/* Write the fixture file as o says. */
void fixture_write_opts(const char *path, const struct snapfile_writer_opts *o)
{
	struct snapfile_writer *w;
	int err, i;

	w = snapfile_writer__open_opts(path, &fx.hdr, o, &err);
	CHECKF(w != NULL, "open %s: %s", path, snapfile__strerror(err));
	if (!w)
		return;
	for (i = 0; i < nex; i++) {
		const struct expect *e = &ex[i];

		switch (e->kind) {
		case SNAPFILE_REC_PROCESS:
			err = snapfile_writer__process(w, e->v);
			break;
		case SNAPFILE_REC_SAMPLE:
			err = snapfile_writer__sample(w, e->v);
			break;
		case SNAPFILE_REC_MEMORY:
			err = snapfile_writer__memory(w, e->v);
			break;
		case SNAPFILE_REC_KSYMS:
			err = snapfile_writer__ksyms(w, e->v, NKSYMS);
			break;
		case SNAPFILE_REC_STATS:
			err = snapfile_writer__stats(w, e->v, LJS_ERR__MAX + 2);
			break;
		case SNAPFILE_REC_OBJECT:
			err = snapfile_writer__object(w, e->v);
			break;
		default:
			err = 0;
			break;
		}
		CHECK(err == 0);
		if (i == 4)
			CHECK(snapfile_writer__flush(w) == 0);
	}
	CHECK(snapfile_writer__records(w) == (uint64_t)nex);	/* header + all but END */
	CHECK(snapfile_writer__close(w) == 0);
}

/* -- Comparisons with the writer's input -------------------------------------------- */

/* Same C string (NULL reads back as ""). */
static int str_eq(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* Same sample: every field and every section byte. */
int sample_eq(const struct ljs_sample *a, const struct ljs_sample *b)
{
	uint32_t i;

	if (a->time_ns != b->time_ns || a->pid != b->pid || a->tid != b->tid || a->cpu != b->cpu ||
	    a->flags != b->flags || strncmp(a->comm, b->comm, LJS_COMM_LEN) ||
	    memcmp(&a->regs, &b->regs, sizeof(a->regs)) || a->g != b->g ||
	    a->cfg_gen != b->cfg_gen || a->nsec != b->nsec)
		return 0;
	for (i = 0; i < a->nsec; i++) {
		const struct ljs_section *x = &a->sec[i], *y = &b->sec[i];

		if (x->kind != y->kind || x->status != y->status || x->len != y->len ||
		    x->want != y->want || x->aux != y->aux || x->addr != y->addr)
			return 0;
		if (x->len && memcmp(x->data, y->data, x->len))
			return 0;
	}
	return 1;
}

/* Same process: fields, mappings, LuaJIT part. */
static int process_eq(const struct snapfile_process *a, const struct snapfile_process *b)
{
	uint32_t i;

	if (a->pid != b->pid || a->ppid != b->ppid || strcmp(a->comm, b->comm) ||
	    !str_eq(a->exe, b->exe) || !str_eq(a->cmdline, b->cmdline) ||
	    a->start_ns != b->start_ns || a->exited_ns != b->exited_ns || a->image != b->image ||
	    a->nmaps != b->nmaps || a->has_luajit != b->has_luajit)
		return 0;
	for (i = 0; i < a->nmaps; i++) {
		const struct procmap_desc *x = &a->maps[i], *y = &b->maps[i];

		if (x->start != y->start || x->end != y->end || x->offset != y->offset ||
		    x->prot != y->prot || !str_eq(x->path, y->path) ||
		    x->build_id_len != y->build_id_len ||
		    (x->build_id_len && memcmp(x->build_id, y->build_id, x->build_id_len)))
			return 0;
	}
	if (!a->has_luajit)
		return 1;
	if (memcmp(&a->layout, &b->layout, sizeof(a->layout)) || !str_eq(a->lj_build, b->lj_build) ||
	    a->nprov != b->nprov || a->vm_lo != b->vm_lo || a->vm_hi != b->vm_hi || a->g != b->g)
		return 0;
	for (i = 0; i < a->nprov; i++)
		if (!str_eq(a->prov[i], b->prov[i]))
			return 0;
	return 1;
}

/* Same memory range. */
static int memory_eq(const struct snapfile_memory *a, const struct snapfile_memory *b)
{
	return a->pid == b->pid && a->len == b->len && a->addr == b->addr &&
	       a->first_ns == b->first_ns && a->last_ns == b->last_ns && a->gen == b->gen &&
	       (!a->len || !memcmp(a->data, b->data, a->len));
}

/* Does the record equal the expected input?  END must count the header
 * and every record the writer wrote before it. */
int rec_eq(const struct snapfile_rec *r, const struct expect *e)
{
	uint32_t i;

	if (r->kind != e->kind)
		return 0;
	switch (e->kind) {
	case SNAPFILE_REC_PROCESS:
		return process_eq(&r->proc, e->v);
	case SNAPFILE_REC_SAMPLE:
		return sample_eq(&r->sample, e->v);
	case SNAPFILE_REC_MEMORY:
		return memory_eq(&r->mem, e->v);
	case SNAPFILE_REC_KSYMS:
		if (r->ksyms.n != NKSYMS)
			return 0;
		for (i = 0; i < NKSYMS; i++) {
			const struct ksym *k = &((const struct ksym *)e->v)[i];

			if (r->ksyms.syms[i].addr != k->addr || !str_eq(r->ksyms.syms[i].name, k->name) ||
			    !str_eq(r->ksyms.syms[i].module, k->module))
				return 0;
		}
		return 1;
	case SNAPFILE_REC_STATS:
		if (r->stats.n != LJS_ERR__MAX + 2)
			return 0;
		for (i = 0; i < r->stats.n; i++) {
			const struct snapfile_stat *s = &((const struct snapfile_stat *)e->v)[i];

			if (!str_eq(r->stats.v[i].name, s->name) || r->stats.v[i].value != s->value)
				return 0;
		}
		return 1;
	case SNAPFILE_REC_OBJECT: {
		const struct snapfile_object *o = e->v;

		return str_eq(r->object.path, o->path) && r->object.build_id_len == o->build_id_len &&
		       !memcmp(r->object.build_id, o->build_id, o->build_id_len) &&
		       r->object.len == o->len && !memcmp(r->object.data, o->data, o->len);
	}
	case SNAPFILE_REC_END:
		return r->end.records == (uint64_t)nex;
	default:
		return 0;
	}
}

/* -- Independent parse: zlib + msgpack-c ------------------------------------------- */

/* Walk the frames with zlib and msgpack-c; returns the frame count or -1. */
int parse_frames(const uint8_t *b, size_t len, struct frame_info *fi, int max)
{
	size_t off = SNAPFILE_MAGIC_LEN;
	int n = 0;

	if (len < SNAPFILE_MAGIC_LEN || memcmp(b, SNAPFILE_MAGIC, SNAPFILE_MAGIC_LEN))
		return -1;
	while (off < len && n < max) {
		msgpack_unpacked u;
		uint32_t flen, crc;
		size_t pos = 0;
		int ok;

		if (len - off < 8)
			return -1;
		memcpy(&flen, b + off, 4);
		memcpy(&crc, b + off + 4, 4);
		flen = le32toh(flen);
		crc = le32toh(crc);
		if (len - off - 8 < flen || crc32(0, b + off + 8, flen) != crc)
			return -1;
		msgpack_unpacked_init(&u);
		ok = msgpack_unpack_next(&u, (const char *)b + off + 8, flen, &pos) ==
			MSGPACK_UNPACK_SUCCESS && pos == flen &&
			u.data.type == MSGPACK_OBJECT_ARRAY && u.data.via.array.size >= 1 &&
			u.data.via.array.ptr[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER;
		if (ok) {
			fi[n].kind = (int)u.data.via.array.ptr[0].via.u64;
			fi[n].off = off;
			fi[n].end = off + 8 + flen;
		}
		msgpack_unpacked_destroy(&u);
		if (!ok)
			return -1;
		off += 8 + (size_t)flen;
		n++;
	}
	return n;
}
