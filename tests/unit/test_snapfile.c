/*
 * test_snapfile.c -- capture file writer/reader/info tests.
 *
 * Ground truth is the input handed to the writer (records are compared field
 * by field with what the reader returns) and an independent parse of the
 * bytes with zlib and msgpack-c's own unpacker.  Covers: round trip of every
 * record kind, truncation at every byte, corruption (checksum, lengths,
 * undecodable payloads, random damage), versioning, forward compatibility
 * (unknown kinds, keys, fields, registers), file mode, write errors, info.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <msgpack.h>
#include "formats/info.h"
#include "formats/snapfile.h"

static int failures, checks;

#define CHECK(cond) do {							\
	checks++;								\
	if (!(cond)) {								\
		failures++;							\
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
	}									\
} while (0)

#define CHECKF(cond, ...) do {							\
	checks++;								\
	if (!(cond)) {								\
		failures++;							\
		fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__);					\
		fputc('\n', stderr);						\
	}									\
} while (0)

static char tmpdir[64];

/* Path of a file in the test's temporary directory. */
static const char *tpath(const char *name)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) & 3;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

/* Deterministic pseudo-random numbers. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* -- File helpers ----------------------------------------------------------- */

/* Read a whole file into a malloc'd buffer. */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;

	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		b = malloc(n ? (size_t)n : 1);
		if (b && fread(b, 1, (size_t)n, f) == (size_t)n)
			*len = (size_t)n;
	}
	fclose(f);
	return b;
}

/* Write bytes to a file (replacing it). */
static void spit(const char *path, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, p, len) == (ssize_t)len);
	close(fd);
}

/* -- Fixture: one file with every record kind ---------------------------------- */

#define NSAMPLES 4
#define NMEM 2
#define NKSYMS 5

struct fixture {
	struct snapfile_header hdr;
	struct snapfile_mapping maps[3];
	const char *prov[3];
	struct snapfile_process pa, pb, pb_exit;
	struct ljs_sample s[NSAMPLES];
	uint8_t secdata[NSAMPLES][LJS_SAMPLE_MAX_SECS][300];
	uint8_t memdata[NMEM][200];
	struct snapfile_memory mem[NMEM];
	struct snapfile_ksym ksyms[NKSYMS];
	struct snapfile_stat stats[LJS_ERR__MAX + 2];
	uint8_t bid[20];
};

/* The expected sequence of records after the header. */
struct expect {
	enum snapfile_kind kind;
	const void *v;
};

static struct fixture fx;
static struct expect ex[32];
static int nex;
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
static void fixture_init(void)
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
	fx.maps[0] = (struct snapfile_mapping){ 0x400000, 0x452000, 0, SNAPFILE_PROT_READ |
		SNAPFILE_PROT_EXEC, sizeof(fx.bid), "/usr/local/openresty/nginx/sbin/nginx", fx.bid };
	fx.maps[1] = (struct snapfile_mapping){ 0x7ffd0000, 0x7ffe0000, 0, SNAPFILE_PROT_READ |
		SNAPFILE_PROT_WRITE, 0, "[stack]", NULL };
	fx.maps[2] = (struct snapfile_mapping){ 0x7f0000000000ull, 0x7f0000200000ull, 0x1000,
		SNAPFILE_PROT_READ | SNAPFILE_PROT_SHARED, 0, "", NULL };
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

	fx.ksyms[0] = (struct snapfile_ksym){ 0xffffffff81000000ull, "_stext", "" };
	fx.ksyms[1] = (struct snapfile_ksym){ 0xffffffff81001000ull, "do_syscall_64", "" };
	fx.ksyms[2] = (struct snapfile_ksym){ 0xffffffffc0001000ull, "ext4_file_read_iter", "ext4" };
	fx.ksyms[3] = (struct snapfile_ksym){ 0xffffffffc0002000ull, "", "" };
	fx.ksyms[4] = (struct snapfile_ksym){ 0xffffffffffffffffull, "last", "mod" };

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
	ex[nex++] = (struct expect){ SNAPFILE_REC_END, NULL };
}

/* Write the fixture file. */
static void fixture_write(const char *path)
{
	struct snapfile_writer *w;
	int err, i;

	w = snapfile_writer__open(path, &fx.hdr, &err);
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

static int sample_eq(const struct ljs_sample *a, const struct ljs_sample *b)
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

static int process_eq(const struct snapfile_process *a, const struct snapfile_process *b)
{
	uint32_t i;

	if (a->pid != b->pid || a->ppid != b->ppid || strcmp(a->comm, b->comm) ||
	    !str_eq(a->exe, b->exe) || !str_eq(a->cmdline, b->cmdline) ||
	    a->start_ns != b->start_ns || a->exited_ns != b->exited_ns ||
	    a->nmaps != b->nmaps || a->has_luajit != b->has_luajit)
		return 0;
	for (i = 0; i < a->nmaps; i++) {
		const struct snapfile_mapping *x = &a->maps[i], *y = &b->maps[i];

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

static int memory_eq(const struct snapfile_memory *a, const struct snapfile_memory *b)
{
	return a->pid == b->pid && a->len == b->len && a->addr == b->addr &&
	       a->first_ns == b->first_ns && a->last_ns == b->last_ns && a->gen == b->gen &&
	       (!a->len || !memcmp(a->data, b->data, a->len));
}

/* Does the record equal the expected input?  END must count the header
 * and every record the writer wrote before it. */
static int rec_eq(const struct snapfile_rec *r, const struct expect *e)
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
			const struct snapfile_ksym *k = &((const struct snapfile_ksym *)e->v)[i];

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
	case SNAPFILE_REC_END:
		return r->end.records == (uint64_t)nex;
	default:
		return 0;
	}
}

/* -- Independent parse: zlib + msgpack-c ------------------------------------------- */

struct frame_info {
	size_t off, end;	/* frame [off, end) in the file */
	int kind;
};

/* Walk the frames with zlib and msgpack-c; returns the frame count or -1. */
static int parse_frames(const uint8_t *b, size_t len, struct frame_info *fi, int max)
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

/* -- Reading helpers ------------------------------------------------------------ */

/* Read every record of path, comparing with ex[]; returns records matched in
 * order, or -1 when a record differs.  *nerr counts negative returns, *total
 * (if given) the records returned. */
static int read_all(const char *path, int *nerr, int *total, struct snapfile_reader **keep)
{
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	struct snapfile_reader *r;
	int err, rc, n = 0, guard = 0, bad = 0;

	*nerr = 0;
	r = snapfile_reader__open(path, &err);
	if (!r) {
		free(rec);
		return -1000 + err;
	}
	while ((rc = snapfile_reader__next(r, rec)) != 0 && guard++ < 1000) {
		if (rc < 0) {
			(*nerr)++;
			continue;
		}
		if (n >= nex || !rec_eq(rec, &ex[n]))
			bad = 1;
		n++;
	}
	if (total)
		*total = n;
	CHECK(guard < 1000);
	free(rec);
	if (keep)
		*keep = r;
	else
		snapfile_reader__close(r);
	return bad ? -1 : n;
}

/* -- Tests --------------------------------------------------------------------------- */

/* Every record kind comes back as written; the bytes parse with zlib and msgpack-c. */
static void test_roundtrip(void)
{
	const char *path = tpath("rt.ljsnap");
	const struct snapfile_reader_stats *st;
	const struct snapfile_header *h;
	struct snapfile_reader *r = NULL;
	struct frame_info fi[64];
	struct snapfile_rec *rec;
	size_t len;
	uint8_t *b;
	int n, nerr, k;

	fixture_write(path);
	b = slurp(path, &len);
	CHECK(b != NULL);
	n = parse_frames(b, len, fi, 64);
	CHECKF(n == nex + 1, "independent parse found %d frames, expected %d", n, nex + 1);
	if (n == nex + 1) {
		CHECK(fi[0].kind == SNAPFILE_REC_HEADER);
		for (k = 0; k < nex; k++)
			CHECK(fi[k + 1].kind == (int)ex[k].kind);
		CHECK(fi[n - 1].end == len);
	}
	free(b);

	n = read_all(path, &nerr, NULL, &r);
	CHECKF(n == nex, "read back %d records matching the input, expected %d", n, nex);
	CHECK(nerr == 0);
	if (!r)
		return;
	h = snapfile_reader__header(r);
	CHECK(h->major == SNAPFILE_MAJOR && h->minor == SNAPFILE_MINOR);
	CHECK(!strcmp(h->ljsnap_version, fx.hdr.ljsnap_version));
	CHECK(!strcmp(h->host, "testhost") && !strcmp(h->kernel, fx.hdr.kernel));
	CHECK(!strcmp(h->arch, "x86_64") && !strcmp(h->target, fx.hdr.target));
	CHECK(h->mono_ns == fx.hdr.mono_ns && h->real_ns == fx.hdr.real_ns);
	CHECK(h->freq_hz == 99 && h->stack_bytes == LJS_USTACK_DEFAULT);
	CHECK(h->lstack_bytes == LJS_LSTACK_DEFAULT && h->features == fx.hdr.features);
	CHECK(snapfile_header__wall_ns(h, fx.hdr.mono_ns + 2500) == fx.hdr.real_ns + 2500);
	st = snapfile_reader__stats(r);
	CHECK(st->clean_end && !st->truncated && !st->stopped && st->corrupt == 0);
	CHECK(st->unknown == 0 && st->frames == (uint64_t)nex + 1);
	CHECK(st->per_kind[SNAPFILE_REC_SAMPLE] == NSAMPLES);
	CHECK(st->per_kind[SNAPFILE_REC_PROCESS] == 3 && st->per_kind[SNAPFILE_REC_MEMORY] == NMEM);
	CHECK(snapfile_reader__note(r) == NULL);
	rec = malloc(sizeof(*rec));
	CHECK(snapfile_reader__next(r, rec) == 0);	/* stays at the end */
	free(rec);
	snapfile_reader__close(r);

	/* Defaults: header strings and clock filled by the writer. */
	{
		struct snapfile_header h0 = { 0 };
		struct snapfile_writer *w = snapfile_writer__open(tpath("def.ljsnap"), &h0, &nerr);

		CHECK(w && snapfile_writer__close(w) == 0);
		r = snapfile_reader__open(tpath("def.ljsnap"), &nerr);
		CHECK(r != NULL);
		if (r) {
			h = snapfile_reader__header(r);
			CHECK(h->host[0] && h->kernel[0] && !strcmp(h->arch, "x86_64"));
			CHECK(h->mono_ns && h->real_ns > 1600000000ull * 1000000000ull);
			CHECK(h->target && !h->target[0]);
			snapfile_reader__close(r);
		}
	}
}

/* The file is created 0600, and an existing file is made 0600. */
static void test_mode(void)
{
	const char *path = tpath("mode.ljsnap");
	struct snapfile_writer *w;
	mode_t old = umask(0);
	struct stat st;
	int err, fd;

	unlink(path);
	w = snapfile_writer__open(path, &fx.hdr, &err);
	CHECK(w && snapfile_writer__close(w) == 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT, 0666);
	CHECK(fd >= 0 && fchmod(fd, 0666) == 0);
	close(fd);
	w = snapfile_writer__open(path, &fx.hdr, &err);
	CHECK(w && snapfile_writer__close(w) == 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600);
	umask(old);
}

/* Cut the file at every byte: exactly the complete records come back. */
static void test_truncation(void)
{
	const char *full = tpath("trunc-full.ljsnap"), *cut = tpath("trunc.ljsnap");
	struct frame_info fi[64];
	size_t len, c;
	int nf, bad_cuts = 0;
	uint8_t *b;

	fixture_write(full);
	b = slurp(full, &len);
	nf = parse_frames(b, len, fi, 64);
	CHECK(nf == nex + 1);
	if (nf != nex + 1) {
		free(b);
		return;
	}
	for (c = 0; c <= len; c++) {
		struct snapfile_reader *r;
		const struct snapfile_reader_stats *st;
		int complete = 0, boundary = c == SNAPFILE_MAGIC_LEN, n, nerr, k, ok = 1;
		size_t last = SNAPFILE_MAGIC_LEN;
		char want[160];

		spit(cut, b, c);
		for (k = 0; k < nf; k++) {
			if (fi[k].end <= c) {
				complete++;
				last = fi[k].end;
			}
			if (fi[k].end == c)
				boundary = 1;
		}
		if (c < fi[0].end) {
			int err;

			r = snapfile_reader__open(cut, &err);
			if (r || err != SNAPFILE_E_TRUNCHDR) {
				ok = 0;
				snapfile_reader__close(r);
			}
			bad_cuts += !ok;
			continue;
		}
		r = NULL;
		n = read_all(cut, &nerr, NULL, &r);
		if (n != complete - 1 || nerr != 0 || !r) {
			ok = 0;
		} else {
			st = snapfile_reader__stats(r);
			snprintf(want, sizeof(want), "truncated after %d records (%zu bytes of an "
				 "incomplete record ignored)", complete, c - last);
			if (st->truncated != !boundary || st->frames != (uint64_t)complete ||
			    (st->truncated && (st->trunc_bytes != c - last ||
					       !snapfile_reader__note(r) ||
					       strcmp(snapfile_reader__note(r), want))) ||
			    (!st->truncated && snapfile_reader__note(r)) ||
			    st->clean_end != (c == len))
				ok = 0;
		}
		if (!ok && bad_cuts < 5)
			fprintf(stderr, "cut at %zu: read %d records (want %d), %d errors\n", c, n,
				complete - 1, nerr);
		bad_cuts += !ok;
		snapfile_reader__close(r);
	}
	CHECKF(bad_cuts == 0, "%d of %zu cut positions misread", bad_cuts, len + 1);
	free(b);
}

/* Write a modified copy of b and count what the reader makes of it. */
static int read_modified(const uint8_t *b, size_t len, int *nerr, struct snapfile_reader **r)
{
	const char *path = tpath("mod.ljsnap");

	spit(path, b, len);
	return read_all(path, nerr, NULL, r);
}

/* Corrupt frames are reported with their offset and skipped or stopped at. */
static void test_corruption(void)
{
	const char *full = tpath("corrupt-full.ljsnap");
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	struct frame_info fi[64];
	struct snapfile_reader *r;
	uint8_t *b, *m;
	size_t len, off;
	int nf, n, nerr, victim, i, rc;
	uint32_t v;
	char want[64];

	fixture_write(full);
	b = slurp(full, &len);
	nf = parse_frames(b, len, fi, 64);
	m = malloc(len + 64);
	victim = 5;	/* the second sample (ex[4]) */
	CHECK(nf == nex + 1 && ex[victim - 1].kind == SNAPFILE_REC_SAMPLE);

	/* A flipped payload byte: that record alone is lost, with its offset. */
	memcpy(m, b, len);
	m[(fi[victim].off + fi[victim].end) / 2] ^= 0x40;
	spit(tpath("flip.ljsnap"), m, len);
	r = snapfile_reader__open(tpath("flip.ljsnap"), &rc);
	CHECK(r != NULL);
	n = 0;
	i = 0;
	snprintf(want, sizeof(want), "byte offset %zu:", fi[victim].off);
	while (r && (rc = snapfile_reader__next(r, rec)) != 0 && i++ < 100) {
		if (rc < 0) {
			CHECK(rc == SNAPFILE_E_CORRUPT);
			CHECKF(strstr(snapfile_reader__error(r), want) != NULL, "%s",
			       snapfile_reader__error(r));
			CHECK(strstr(snapfile_reader__error(r), "checksum") != NULL);
			continue;
		}
		/* Records after the victim are ex[] shifted by one. */
		CHECK(rec_eq(rec, &ex[n >= victim - 1 ? n + 1 : n]));
		n++;
	}
	CHECK(n == nex - 1);
	CHECK(r && snapfile_reader__stats(r)->corrupt == 1 && snapfile_reader__stats(r)->clean_end);
	snapfile_reader__close(r);

	/* A flipped crc byte does the same. */
	memcpy(m, b, len);
	m[fi[victim].off + 5] ^= 0x01;
	n = read_modified(m, len, &nerr, NULL);
	CHECK(n == -1 && nerr == 1);	/* -1: the records after the gap are shifted */

	/* An implausible length stops reading, after the records before it. */
	memcpy(m, b, len);
	v = htole32(0xfffffff0u);
	memcpy(m + fi[victim].off, &v, 4);
	n = read_modified(m, len, &nerr, &r);
	CHECK(n == victim - 1 && nerr == 1);
	if (r) {
		CHECK(snapfile_reader__stats(r)->stopped);
		CHECK(strstr(snapfile_reader__error(r), "implausible length") != NULL);
		CHECK(snapfile_reader__mem(r) < (4u << 20));
		snapfile_reader__close(r);
	}
	v = 0;
	memcpy(m + fi[victim].off, &v, 4);
	n = read_modified(m, len, &nerr, NULL);
	CHECK(n == victim - 1 && nerr == 1);

	/* A plausible length past the end: truncation, and no 60 MiB buffer. */
	memcpy(m, b, len);
	v = htole32(60u << 20);
	memcpy(m + fi[victim].off, &v, 4);
	n = read_modified(m, len, &nerr, &r);
	CHECK(n == victim - 1 && nerr == 0);
	if (r) {
		CHECK(snapfile_reader__stats(r)->truncated);
		CHECK(snapfile_reader__stats(r)->trunc_bytes == len - fi[victim].off);
		CHECK(snapfile_reader__mem(r) < (4u << 20));
		snapfile_reader__close(r);
	}

	/* Undecodable payloads with a valid checksum: skipped, reading goes on. */
	{
		static const uint8_t bad1[] = { 0x93, 0x03, 0xc1, 0x00 };	/* 0xc1: invalid */
		static const uint8_t bad2[] = { 0x92, 0x03, 0xdd, 0xff, 0xff, 0xff, 0xff };
		static const uint8_t bad3[] = { 0x92, 0x02, 0x81, 0xa3, 'p', 'i', 'd', 0xa1, 'x' };
		static const uint8_t bad4[] = { 0x92, 0x05, 0xdd, 0x10, 0x00, 0x00, 0x00, 0x01 };
		static const uint8_t bad5[] = { 0x90 };
		static const uint8_t bad6[] = { 0x91, 0x03, 0x00 };	/* trailing byte */
		const uint8_t *bad[] = { bad1, bad2, bad3, bad4, bad5, bad6 };
		size_t badlen[] = { sizeof(bad1), sizeof(bad2), sizeof(bad3), sizeof(bad4),
				    sizeof(bad5), sizeof(bad6) };
		size_t j, nb = sizeof(bad) / sizeof(bad[0]);
		uint8_t *g = malloc(len + 512);

		/* Insert the bad frames right after the first sample (ex[1]). */
		off = fi[2].end;
		memcpy(g, b, off);
		for (j = 0; j < nb; j++) {
			uint32_t l = htole32((uint32_t)badlen[j]);
			uint32_t c = htole32((uint32_t)crc32(0, bad[j], (uInt)badlen[j]));

			memcpy(g + off, &l, 4);
			memcpy(g + off + 4, &c, 4);
			memcpy(g + off + 8, bad[j], badlen[j]);
			off += 8 + badlen[j];
		}
		memcpy(g + off, b + fi[2].end, len - fi[2].end);
		n = read_modified(g, off + len - fi[2].end, &nerr, &r);
		CHECKF(n == nex && nerr == (int)nb, "n %d nerr %d", n, nerr);
		if (r) {
			CHECK(snapfile_reader__stats(r)->corrupt == nb);
			CHECK(snapfile_reader__mem(r) < (4u << 20));
			snapfile_reader__close(r);
		}
		free(g);
	}

	/* Damaged payloads behind a valid checksum (a buggy or hostile writer):
	 * only the victim is lost; a payload cut short is always an error. */
	for (i = 0; i < 3000; i++) {
		int k = 1 + (int)(rnd() % (uint64_t)(nf - 1)), what = i % 3, total;
		size_t plen = fi[k].end - fi[k].off - 8, nl = plen, j;
		uint8_t *g = malloc(len + 64);
		uint32_t l, c;

		memcpy(g, b, fi[k].off + 8 + plen);
		if (what == 0) {
			nl = rnd() % plen;	/* cut inside the payload */
		} else if (what == 1) {
			for (j = 0; j < 1 + rnd() % 3; j++)
				g[fi[k].off + 8 + rnd() % plen] = (uint8_t)rnd();
		} else {
			nl = plen + 1 + rnd() % 16;	/* append junk */
			for (j = plen; j < nl; j++)
				g[fi[k].off + 8 + j] = (uint8_t)rnd();
		}
		if (!nl)
			nl = 1;
		l = htole32((uint32_t)nl);
		c = htole32((uint32_t)crc32(0, g + fi[k].off + 8, (uInt)nl));
		memcpy(g + fi[k].off, &l, 4);
		memcpy(g + fi[k].off + 4, &c, 4);
		memcpy(g + fi[k].off + 8 + nl, b + fi[k].end, len - fi[k].end);
		spit(tpath("mod.ljsnap"), g, fi[k].off + 8 + nl + len - fi[k].end);
		n = read_all(tpath("mod.ljsnap"), &nerr, &total, NULL);
		if (what != 1)
			CHECKF(nerr == 1 && total == nex - 1, "frame %d mutation %d: %d errors, %d records",
			       k, what, nerr, total);
		else
			CHECK(nerr <= 1 && total >= nex - 1 && total <= nex);
		free(g);
	}

	/* Random damage: never crashes, never loops, always terminates. */
	for (i = 0; i < 3000; i++) {
		int flips = 1 + (int)(rnd() % 4), f;

		memcpy(m, b, len);
		for (f = 0; f < flips; f++) {
			size_t at = fi[1].off + rnd() % (len - fi[1].off);

			m[at] = i & 1 ? (uint8_t)rnd() : m[at] ^ (uint8_t)(1u << (rnd() % 8));
		}
		n = read_modified(m, i % 5 ? len : len - rnd() % (len - fi[1].off), &nerr, NULL);
		CHECK(n >= -1 && nerr <= nex + 1);
	}
	free(m);
	free(b);
	free(rec);
}

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
static void test_versions(void)
{
	struct craft c;
	struct snapfile_reader *r;
	char msg[512];
	int err;

	craft_init(&c);
	craft_header(&c, SNAPFILE_MAJOR + 1, 5);
	spit(tpath("major.ljsnap"), c.sb.data, c.sb.size);
	r = snapfile_reader__open_msg(tpath("major.ljsnap"), &err, msg, sizeof(msg));
	CHECK(r == NULL && err == SNAPFILE_E_NEWER);
	CHECKF(strstr(msg, "newer") && strstr(msg, "2.5"), "%s", msg);
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

/* Unknown kinds, keys, trailing fields and registers are skipped; missing
 * layout fields read as 0. */
static void test_forward_compat(void)
{
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	const struct snapfile_reader_stats *st;
	struct snapfile_reader *r;
	struct craft c;
	uint64_t regs[4] = { htole64(0x401000), htole64(0x7ffd1000), htole64(0xdead),
			     htole64(0x7ffd2000) };
	int err, got = 0, rc;

	craft_init(&c);
	craft_header(&c, SNAPFILE_MAJOR, SNAPFILE_MINOR + 9);
	/* Unknown kind 42 and a second header: skipped. */
	msgpack_pack_array(&c.pk, 2);
	msgpack_pack_uint8(&c.pk, 42);
	craft_junk(&c);
	craft_frame(&c);
	craft_header(&c, SNAPFILE_MAJOR, 0);
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
	CHECK(snapfile_reader__header(r)->minor == SNAPFILE_MINOR + 9);
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

/* -- Writer errors --------------------------------------------------------------------- */

/* Write errors are reported and sticky; bad input is refused. */
static void test_write_errors(void)
{
	const char *path = tpath("fsize.ljsnap");
	struct snapfile_writer *w;
	struct rlimit old, lim;
	struct ljs_sample s;
	int err, i, n, nerr;

	/* /dev/full: ENOSPC at the first flush, and the device is left alone. */
	if (access("/dev/full", W_OK) == 0) {
		struct stat st0, st1;

		CHECK(stat("/dev/full", &st0) == 0);
		w = snapfile_writer__open("/dev/full", &fx.hdr, &err);
		CHECK(w == NULL && err == -ENOSPC);
		CHECK(stat("/dev/full", &st1) == 0 && st0.st_mode == st1.st_mode);
	}

	/* Bad input is refused without touching the file. */
	w = snapfile_writer__open(tpath("einval.ljsnap"), &fx.hdr, &err);
	CHECK(w != NULL);
	if (w) {
		struct snapfile_memory big = fx.mem[0];

		s = fx.s[0];
		s.nsec = LJS_SAMPLE_MAX_SECS + 1;
		CHECK(snapfile_writer__sample(w, &s) == -EINVAL);
		s = fx.s[0];
		s.sec[0].data = NULL;
		CHECK(s.sec[0].len == 0 || snapfile_writer__sample(w, &s) == -EINVAL);
		big.len = SNAPFILE_FRAME_MAX;
		CHECK(snapfile_writer__memory(w, &big) == -E2BIG);
		CHECK(snapfile_writer__sample(w, &fx.s[1]) == 0);
		CHECK(snapfile_writer__close(w) == 0);
		n = read_all(tpath("einval.ljsnap"), &nerr, NULL, NULL);
		CHECK(n == -1 && nerr == 0);	/* one sample + END, not ex[] */
	}

	/* A file size limit (EFBIG) mid-recording: reported, sticky, returned by
	 * close; the file reads back as truncated with intact records. */
	if (getrlimit(RLIMIT_FSIZE, &old) == 0) {
		signal(SIGXFSZ, SIG_IGN);
		lim = old;
		lim.rlim_cur = 6000;
		CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
		w = snapfile_writer__open(path, &fx.hdr, &err);
		CHECK(w != NULL);
		for (i = 0, err = 0; w && i < 200 && !err; i++) {
			err = snapfile_writer__sample(w, &fx.s[0]);
			if (!err && i % 3 == 2)
				err = snapfile_writer__flush(w);
		}
		CHECK(err == -EFBIG);
		if (w) {
			CHECK(snapfile_writer__sample(w, &fx.s[1]) == -EFBIG);
			CHECK(snapfile_writer__bytes_written(w) == 6000);
			CHECK(snapfile_writer__close(w) == -EFBIG);
		}
		CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
		signal(SIGXFSZ, SIG_DFL);
		{
			struct snapfile_rec *rec = malloc(sizeof(*rec));
			struct snapfile_reader *r = snapfile_reader__open(path, &err);
			int good = 0, rc;

			CHECK(r != NULL);
			while (r && (rc = snapfile_reader__next(r, rec)) > 0)
				good += sample_eq(&rec->sample, &fx.s[0]);
			CHECK(good > 0 && r && (uint64_t)good == snapfile_reader__stats(r)->per_kind[SNAPFILE_REC_SAMPLE]);
			CHECK(r && snapfile_reader__stats(r)->truncated && !snapfile_reader__stats(r)->clean_end);
			snapfile_reader__close(r);
			free(rec);
		}
	}
}

/* -- info ------------------------------------------------------------------------------ */

/* Print info of path into a string. */
static char *info_of(const char *path, int *rc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	*rc = snapfile__print_info(path, f);
	fclose(f);
	return text;
}

/* info mentions the processes, counts and notes, computed from the input. */
static void test_info(void)
{
	const char *path = tpath("info.ljsnap");
	char want[256], *t;
	int rc, i, per_4242 = 0, per_777 = 0;
	uint8_t *b;
	size_t len;

	fixture_write(path);
	for (i = 0; i < NSAMPLES; i++) {
		per_4242 += fx.s[i].pid == 4242;
		per_777 += fx.s[i].pid == 777;
	}
	t = info_of(path, &rc);
	CHECK(rc == 0 && t);
	if (!t)
		return;
	snprintf(want, sizeof(want), "pid 4242 (ppid 1) nginx  exe %s", fx.pa.exe);
	CHECKF(strstr(t, want) != NULL, "missing '%s' in:\n%s", want, t);
	CHECK(strstr(t, fx.pa.lj_build) && strstr(t, "family openresty, GC64"));
	snprintf(want, sizeof(want), "pid 4242 %-16s %d samples", fx.s[0].comm, per_4242);
	CHECKF(strstr(t, want) != NULL, "missing '%s' in:\n%s", want, t);
	snprintf(want, sizeof(want), "pid 777 %-16s %d samples", fx.s[1].comm, per_777);
	CHECKF(strstr(t, want) != NULL, "missing '%s'", want);
	snprintf(want, sizeof(want), "sample %d,", NSAMPLES);
	CHECKF(strstr(t, want) != NULL, "missing '%s'", want);
	snprintf(want, sizeof(want), "%d ranges, %u bytes", NMEM, fx.mem[0].len + fx.mem[1].len);
	CHECKF(strstr(t, want) != NULL, "missing '%s'", want);
	snprintf(want, sizeof(want), "%d kernel symbols", NKSYMS);
	CHECKF(strstr(t, want) != NULL, "missing '%s'", want);
	CHECK(strstr(t, "pid 777 0123456789abcde exited at +3.000 s") != NULL);
	CHECK(strstr(t, "ringbuf_full") && strstr(t, "9.8.7-test") && strstr(t, "testhost"));
	CHECK(strstr(t, "notes:") == NULL);
	free(t);

	/* A cut copy says so; so does a corrupt one. */
	b = slurp(path, &len);
	spit(tpath("info-cut.ljsnap"), b, len - 3);
	t = info_of(tpath("info-cut.ljsnap"), &rc);
	CHECK(rc == 0 && t && strstr(t, "truncated after") && strstr(t, "no END record"));
	free(t);
	b[len / 2] ^= 0xff;
	spit(tpath("info-bad.ljsnap"), b, len);
	t = info_of(tpath("info-bad.ljsnap"), &rc);
	CHECK(rc == 0 && t && strstr(t, "corrupt") && strstr(t, "byte offset"));
	free(t);
	free(b);
	t = info_of(tpath("text.ljsnap"), &rc);
	CHECK(rc == SNAPFILE_E_NOTCAPTURE);
	free(t);
}

/* Remove the temporary directory. */
static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_snapfile.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	fixture_init();
	test_roundtrip();
	test_mode();
	test_truncation();
	test_corruption();
	test_versions();
	test_forward_compat();
	test_write_errors();
	test_info();
	cleanup();
	printf("test_snapfile: %d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
