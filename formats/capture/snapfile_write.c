/* SPDX-License-Identifier: GPL-2.0-or-later */
/* snapfile_write.c -- the capture file writer (format: docs/capture-format.md). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zstd.h>
#include <msgpack/pack.h>
#include "formats/capture/snapfile_dedup.h"
#include "formats/capture/snapfile_int.h"
#include "formats/capture/snapfile_schema.h"
#include "formats/capture/snapfile_write_int.h"
#include "symtab/vec.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* -- Packing helpers ------------------------------------------------------------ */

/* Pack a string (NULL packs as ""). */
static void snapfile_writer__str(struct snapfile_writer *w, const char *s)
{
	if (!s)
		s = "";
	msgpack_pack_str_with_body(&w->pk, s, strlen(s));
}

/* Pack a map key. */
static void snapfile_writer__key(struct snapfile_writer *w, const char *k)
{
	msgpack_pack_str_with_body(&w->pk, k, strlen(k));
}

/* Pack a NUL-padded comm (at most LJS_COMM_LEN - 1 bytes are meaningful). */
static void snapfile_writer__comm(struct snapfile_writer *w, const char *comm)
{
	msgpack_pack_str_with_body(&w->pk, comm, strnlen(comm, LJS_COMM_LEN - 1));
}

/* -- Schema ----------------------------------------------------------------------- *
 * Pack the fields of formats/capture/snapfile_schema.h: SW_<type>(member) packs one
 * value of the struct `r` into the writer `w`; a pair member (elements,
 * count) is taken apart by the SW_<type>_ that follows it. */

static void snapfile_writer__regnames(struct snapfile_writer *w);
static void snapfile_writer__regs(struct snapfile_writer *w, const struct ljs_regs *regs);
static void snapfile_writer__maps(struct snapfile_writer *w, const struct procmap_desc *maps,
				  uint32_t n);
static void snapfile_writer__luajit(struct snapfile_writer *w, const struct snapfile_process *r);
static void snapfile_writer__layout(struct snapfile_writer *w, const struct lj_layout *lay);
static void snapfile_writer__strs(struct snapfile_writer *w, const char *const *v, uint32_t n);
static void snapfile_writer__sections(struct snapfile_writer *w, const struct ljs_section *sec,
				      uint32_t n);
static void snapfile_writer__ksym_list(struct snapfile_writer *w, const struct ksym *syms,
				       uint32_t n);
static void snapfile_writer__counters(struct snapfile_writer *w, const struct snapfile_stat *v,
				      uint32_t n);

#define SW_u16(m)		msgpack_pack_uint16(&w->pk, r->m)
#define SW_u32(m)		msgpack_pack_uint32(&w->pk, r->m)
#define SW_u64(m)		msgpack_pack_uint64(&w->pk, r->m)
#define SW_str(m)		snapfile_writer__str(w, r->m)
#define SW_comm(m)		snapfile_writer__comm(w, r->m)
#define SW_bin(m)		SW_bin_ m
#define SW_bin_(d, n)		msgpack_pack_bin_with_body(&w->pk, r->d, r->n)
#define SW_regnames(m)		snapfile_writer__regnames(w)
#define SW_regs(m)		snapfile_writer__regs(w, &r->m)
#define SW_maps(m)		SW_maps_ m
#define SW_maps_(e, n)		snapfile_writer__maps(w, r->e, r->n)
#define SW_lj(m)		snapfile_writer__luajit(w, r)
#define SW_layout(m)		snapfile_writer__layout(w, &r->m)
#define SW_prov(m)		SW_prov_ m
#define SW_prov_(e, n)		snapfile_writer__strs(w, r->e, r->n)
#define SW_sections(m)		SW_sections_ m
#define SW_sections_(e, n)	snapfile_writer__sections(w, r->e, r->n)
#define SW_ksyms(m)		SW_ksyms_ m
#define SW_ksyms_(e, n)		snapfile_writer__ksym_list(w, r->e, r->n)
#define SW_counters(m)		SW_counters_ m
#define SW_counters_(e, n)	snapfile_writer__counters(w, r->e, r->n)

/* An array record's field: its value.  A map's field: key and value, if cond. */
#define SW_POS(key, m, type, cond)	SW_##type(m);
#define SW_KEY(key, m, type, cond)	if (cond) { snapfile_writer__key(w, key); SW_##type(m); }

/* A whole nested map or array of the struct `r`. */
#define SW_MAP(LIST)	do { msgpack_pack_map(&w->pk, SNAPFILE_NFIELDS_OF(LIST)); LIST(SW_KEY) } while (0)
#define SW_ARRAY(LIST)	do { msgpack_pack_array(&w->pk, SNAPFILE_NFIELDS(LIST)); LIST(SW_POS) } while (0)

/* HEADER "regs": this build's register names, in snapfile__regs order. */
static void snapfile_writer__regnames(struct snapfile_writer *w)
{
	size_t i;

	msgpack_pack_array(&w->pk, snapfile__nregs);
	for (i = 0; i < snapfile__nregs; i++)
		snapfile_writer__str(w, snapfile__regs[i].name);
}

/* SAMPLE regs: u64 LE each, in the header's "regs" order. */
static void snapfile_writer__regs(struct snapfile_writer *w, const struct ljs_regs *regs)
{
	uint8_t b[SNAPFILE_REGS_MAX * 8];
	size_t i;

	for (i = 0; i < snapfile__nregs; i++) {
		uint64_t v;

		memcpy(&v, (const char *)regs + snapfile__regs[i].offset, 8);
		v = htole64(v);
		memcpy(b + 8 * i, &v, 8);
	}
	msgpack_pack_bin_with_body(&w->pk, b, 8 * snapfile__nregs);
}

/* PROCESS "maps": [[start, end, offset, prot, path, build_id], ...]. */
static void snapfile_writer__maps(struct snapfile_writer *w, const struct procmap_desc *maps,
				  uint32_t n)
{
	uint32_t i;

	msgpack_pack_array(&w->pk, n);
	for (i = 0; i < n; i++) {
		const struct procmap_desc *r = &maps[i];

		SW_ARRAY(SNAPFILE_MAPPING_FIELDS);
	}
}

/* PROCESS "lj": {layout, build, prov, vm_lo, vm_hi, g[, vm_exit]}. */
static void snapfile_writer__luajit(struct snapfile_writer *w, const struct snapfile_process *r)
{
	SW_MAP(SNAPFILE_LUAJIT_FIELDS);
}

/* "layout": {name: int32} for every lj_layout__fields entry. */
static void snapfile_writer__layout(struct snapfile_writer *w, const struct lj_layout *lay)
{
	size_t i;

	msgpack_pack_map(&w->pk, lj_layout__nfields);
	for (i = 0; i < lj_layout__nfields; i++) {
		int32_t v;

		memcpy(&v, (const char *)lay + lj_layout__fields[i].offset, sizeof(v));
		snapfile_writer__key(w, lj_layout__fields[i].name);
		msgpack_pack_int32(&w->pk, v);
	}
}

/* An array of strings ("prov"). */
static void snapfile_writer__strs(struct snapfile_writer *w, const char *const *v, uint32_t n)
{
	uint32_t i;

	msgpack_pack_array(&w->pk, n);
	for (i = 0; i < n; i++)
		snapfile_writer__str(w, v[i]);
}

/* SAMPLE "sections": [[kind, status, addr, want, aux, bytes], ...].  In
 * format 3 a section with a reference (w->refs) keeps the bytes outside the
 * referenced range, and a REF section follows it (snapfile_dedup.h). */
static void snapfile_writer__sections(struct snapfile_writer *w, const struct ljs_section *sec,
				      uint32_t n)
{
	uint32_t i, nrefs = 0;

	for (i = 0; w->refs && i < n; i++)
		nrefs += w->refs[i].hi > w->refs[i].lo;
	msgpack_pack_array(&w->pk, n + nrefs);
	for (i = 0; i < n; i++) {
		const struct ljs_section *r = &sec[i];
		const struct snapfile_ref *ref = w->refs ? &w->refs[i] : NULL;
		struct ljs_section lit, rs;
		size_t pre, len;

		if (!ref || ref->hi <= ref->lo) {
			SW_ARRAY(SNAPFILE_SECTION_FIELDS);
			continue;
		}
		/* The section with its own bytes only, then the REF: [kind,
		 * status, offset, length, sample number, no bytes]. */
		pre = ref->lo - r->addr;
		len = r->len - (ref->hi - ref->lo);
		if (vec__grow(&w->lit, &w->litcap, 1, len ? len : 1)) {
			w->oom = 1;
			return;
		}
		memcpy(w->lit, r->data, pre);
		memcpy(w->lit + pre, r->data + (ref->hi - r->addr), len - pre);
		lit = *r;
		lit.data = w->lit;
		lit.len = (uint32_t)len;
		rs = (struct ljs_section){ .kind = SNAPFILE_SEC_REF, .addr = pre,
					   .want = (uint32_t)(ref->hi - ref->lo), .aux = w->ref_seq };
		r = &lit;
		SW_ARRAY(SNAPFILE_SECTION_FIELDS);
		r = &rs;
		SW_ARRAY(SNAPFILE_SECTION_FIELDS);
	}
}

/* KSYMS "syms": [[addr, name, module], ...]. */
static void snapfile_writer__ksym_list(struct snapfile_writer *w, const struct ksym *syms,
				       uint32_t n)
{
	uint32_t i;

	msgpack_pack_array(&w->pk, n);
	for (i = 0; i < n; i++) {
		const struct ksym *r = &syms[i];

		SW_ARRAY(SNAPFILE_KSYM_FIELDS);
	}
}

/* STATS counters: {name: value, ...}. */
static void snapfile_writer__counters(struct snapfile_writer *w, const struct snapfile_stat *v,
				      uint32_t n)
{
	uint32_t i;

	msgpack_pack_map(&w->pk, n);
	for (i = 0; i < n; i++) {
		snapfile_writer__key(w, v[i].name);
		msgpack_pack_uint64(&w->pk, v[i].value);
	}
}

/* -- Records -------------------------------------------------------------------- */

/* HEADER: [1, {...}]; NULL strings and a zero clock are filled in here. */
static int snapfile_writer__header(struct snapfile_writer *w, const struct snapfile_header *h)
{
	struct snapfile_header d = *h;
	const struct snapfile_header *r = &d;
	struct utsname u;
	int have_uname = uname(&u) == 0;
	int err;

	d.major = w->major;
	d.minor = w->major == SNAPFILE_MAJOR ? SNAPFILE_MINOR : 0;
	if (!d.ljsnap_version)
		d.ljsnap_version = PACKAGE_VERSION;
	if (!d.host)
		d.host = have_uname ? u.nodename : "";
	if (!d.kernel)
		d.kernel = have_uname ? u.release : "";
	if (!d.arch)
		d.arch = have_uname ? u.machine : "";
	if (!d.mono_ns && !d.real_ns)
		snapfile__clock_ref(&d.mono_ns, &d.real_ns);
	err = snapfile_writer__begin(w, SNAPFILE_REC_HEADER, 1);
	if (err)
		return err;
	SW_MAP(SNAPFILE_HEADER_FIELDS);
	return snapfile_writer__end(w);
}

/* PROCESS: [2, {SNAPFILE_PROCESS_FIELDS}]. */
int snapfile_writer__process(struct snapfile_writer *w, const struct snapfile_process *r)
{
	uint32_t i;
	int err;

	if ((r->nmaps && !r->maps) || (r->has_luajit && r->nprov && !r->prov))
		return -EINVAL;
	for (i = 0; i < r->nmaps; i++)
		if (r->maps[i].build_id_len && !r->maps[i].build_id)
			return -EINVAL;
	err = snapfile_writer__begin(w, SNAPFILE_REC_PROCESS, 1);
	if (err)
		return err;
	SW_MAP(SNAPFILE_PROCESS_FIELDS);
	return snapfile_writer__end(w);
}

/* SAMPLE: [3, SNAPFILE_SAMPLE_FIELDS]. */
int snapfile_writer__sample(struct snapfile_writer *w, const struct ljs_sample *r)
{
	struct snapfile_ref refs[LJS_SAMPLE_MAX_SECS];
	uint32_t i;
	int err;

	if (r->nsec > LJS_SAMPLE_MAX_SECS)
		return -EINVAL;
	for (i = 0; i < r->nsec; i++)
		if (r->sec[i].len && !r->sec[i].data)
			return -EINVAL;
	err = snapfile_writer__begin(w, SNAPFILE_REC_SAMPLE, SNAPFILE_NFIELDS(SNAPFILE_SAMPLE_FIELDS));
	if (err)
		return err;
	/* Format 3: refer to the thread's previous sample, then remember this
	 * one before __end, which may close the chunk and forget it. */
	if (w->dd && snapfile_dedup__match(w->dd, r, refs, LJS_SAMPLE_MAX_SECS - r->nsec,
					   &w->ref_seq))
		w->refs = refs;
	SNAPFILE_SAMPLE_FIELDS(SW_POS)
	if (w->dd)	/* -ENOMEM: the next sample refers to none */
		snapfile_dedup__remember(w->dd, r, w->refs);
	w->refs = NULL;
	err = snapfile_writer__end(w);
	if (err && w->dd)
		snapfile_dedup__unwrite(w->dd, r->tid);
	return err;
}

/* MEMORY: [4, SNAPFILE_MEMORY_FIELDS]. */
int snapfile_writer__memory(struct snapfile_writer *w, const struct snapfile_memory *r)
{
	int err;

	if (r->len && !r->data)
		return -EINVAL;
	if (r->len > SNAPFILE_FRAME_MAX - 64)
		return -E2BIG;
	err = snapfile_writer__begin(w, SNAPFILE_REC_MEMORY, SNAPFILE_NFIELDS(SNAPFILE_MEMORY_FIELDS));
	if (err)
		return err;
	SNAPFILE_MEMORY_FIELDS(SW_POS)
	return snapfile_writer__end(w);
}

/* OBJECT: [8, SNAPFILE_OBJECT_FIELDS]. */
int snapfile_writer__object(struct snapfile_writer *w, const struct snapfile_object *r)
{
	int err;

	if (!r->path || (r->len && !r->data) || (r->build_id_len && !r->build_id))
		return -EINVAL;
	if (r->len > SNAPFILE_FRAME_MAX - 256 - r->build_id_len - strlen(r->path))
		return -E2BIG;
	err = snapfile_writer__begin(w, SNAPFILE_REC_OBJECT, SNAPFILE_NFIELDS(SNAPFILE_OBJECT_FIELDS));
	if (err)
		return err;
	SNAPFILE_OBJECT_FIELDS(SW_POS)
	return snapfile_writer__end(w);
}

/* EMBED: [9, SNAPFILE_EMBED_FIELDS]. */
int snapfile_writer__embed(struct snapfile_writer *w, const struct snapfile_embed *r)
{
	int err;

	if (!r->path || (r->len && !r->data) || (r->build_id_len && !r->build_id) ||
	    (r->extents_len && !r->extents) || (r->names_len && !r->names))
		return -EINVAL;
	if ((uint64_t)r->len + r->extents_len + r->names_len + r->build_id_len + strlen(r->path) >
	    SNAPFILE_FRAME_MAX - 256)
		return -E2BIG;
	err = snapfile_writer__begin(w, SNAPFILE_REC_EMBED, SNAPFILE_NFIELDS(SNAPFILE_EMBED_FIELDS));
	if (err)
		return err;
	SNAPFILE_EMBED_FIELDS(SW_POS)
	return snapfile_writer__end(w);
}

/* KSYMS: [5, SNAPFILE_KSYMS_FIELDS], SNAPFILE_KSYMS_PER_REC symbols per record. */
int snapfile_writer__ksyms(struct snapfile_writer *w, const struct ksym *syms, size_t n)
{
	size_t i, chunk;
	int err = 0;

	if (n && !syms)
		return -EINVAL;
	for (i = 0; i < n && !err; i += chunk) {
		struct snapfile_ksyms k;
		const struct snapfile_ksyms *r = &k;

		chunk = n - i < SNAPFILE_KSYMS_PER_REC ? n - i : SNAPFILE_KSYMS_PER_REC;
		k.n = (uint32_t)chunk;
		k.syms = syms + i;
		err = snapfile_writer__begin(w, SNAPFILE_REC_KSYMS,
					     SNAPFILE_NFIELDS(SNAPFILE_KSYMS_FIELDS));
		if (err)
			break;
		SNAPFILE_KSYMS_FIELDS(SW_POS)
		err = snapfile_writer__end(w);
	}
	return err;
}

/* STATS: [6, SNAPFILE_STATS_FIELDS]. */
int snapfile_writer__stats(struct snapfile_writer *w, const struct snapfile_stat *st, size_t n)
{
	struct snapfile_stats s;
	const struct snapfile_stats *r = &s;
	size_t i;
	int err;

	if (n && !st)
		return -EINVAL;
	/* More counters than a map header can count would not fit a frame anyway. */
	if (n > UINT32_MAX)
		return -E2BIG;
	for (i = 0; i < n; i++)
		if (!st[i].name)
			return -EINVAL;
	s.n = (uint32_t)n;
	s.v = st;
	err = snapfile_writer__begin(w, SNAPFILE_REC_STATS, SNAPFILE_NFIELDS(SNAPFILE_STATS_FIELDS));
	if (err)
		return err;
	SNAPFILE_STATS_FIELDS(SW_POS)
	return snapfile_writer__end(w);
}

/* END: [7, {SNAPFILE_END_FIELDS}]; records = frames before this one. */
static int snapfile_writer__end_rec(struct snapfile_writer *w)
{
	struct snapfile_end e = { w->records };
	const struct snapfile_end *r = &e;
	int err = snapfile_writer__begin(w, SNAPFILE_REC_END, 1);

	if (err)
		return err;
	SW_MAP(SNAPFILE_END_FIELDS);
	return snapfile_writer__end(w);
}

/* A payload copied as it is (snapfile_reader__payload's bytes). */
int snapfile_writer__raw(struct snapfile_writer *w, const void *payload, size_t len)
{
	const uint8_t *p = payload;
	size_t k;

	/* [kind, ...]: every kind has fewer than 16 fields, a msgpack fixarray. */
	if (!len || !p || (p[0] & 0xf0) != 0x90 || len < 2)
		return -EINVAL;
	if (p[1] == SNAPFILE_REC_HEADER || p[1] == SNAPFILE_REC_END)
		return -EINVAL;
	if (len > SNAPFILE_FRAME_MAX)
		return -E2BIG;
	if (w->err)
		return w->err;
	w->oom = 0;
	w->rec_start = w->len;
	k = snapfile_writer__hdr_len(w);
	if (snapfile_writer__reserve(w, k + len))
		return w->err = -ENOMEM;
	w->kind = p[1] < 0x80 ? p[1] : 0;
	w->len += k;
	memcpy(w->buf + w->len, p, len);
	w->len += len;
	return snapfile_writer__end(w);
}

/* -- Lifecycle ---------------------------------------------------------------------- */

/* Format 2: a compression context for the chunks (0 or -ENOMEM). */
static int snapfile_writer__zstd(struct snapfile_writer *w, int level)
{
	w->cctx = ZSTD_createCCtx();
	if (!w->cctx)
		return -ENOMEM;
	/* Each chunk is one zstd frame that says its size and carries the
	 * XXH64 checksum of its content (zstd.h: ZSTD_c_checksumFlag). */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1)))
		return -EINVAL;
	return 0;
}

/* Create (or truncate) path with mode 0600, write magic and header (NULL h:
 * all defaults), flush. */
struct snapfile_writer *snapfile_writer__open(const char *path, const struct snapfile_header *h,
					      int *err)
{
	return snapfile_writer__open_opts(path, h, NULL, err);
}

/* __open with options: the format, and for format 2 the level and chunk size. */
struct snapfile_writer *snapfile_writer__open_opts(const char *path, const struct snapfile_header *h,
						   const struct snapfile_writer_opts *o, int *err)
{
	static const struct snapfile_header defaults;
	static const struct snapfile_writer_opts dopts;
	struct snapfile_writer *w;
	struct stat st;
	int rc = 0;

	if (!h)
		h = &defaults;
	if (!o)
		o = &dopts;
	w = calloc(1, sizeof(*w));
	if (!w) {
		rc = -ENOMEM;
		goto out;
	}
	w->fd = -1;
	w->major = o->major ? o->major : SNAPFILE_MAJOR;
	w->flush_at = SNAPFILE_FLUSH_BYTES;
	if (w->major < 1 || w->major > 3) {
		rc = -EINVAL;
		goto out;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (w->fd < 0) {
		rc = -errno;
		goto out;
	}
	if (fstat(w->fd, &st)) {
		rc = -errno;
		goto out;
	}
	w->is_reg = S_ISREG(st.st_mode);
	/* The file holds raw process memory: owner only, even if it existed. */
	if (w->is_reg && fchmod(w->fd, 0600)) {
		rc = -errno;
		goto out;
	}
	msgpack_packer_init(&w->pk, w, snapfile_writer__put);
	if (snapfile_writer__put(w, SNAPFILE_MAGIC, SNAPFILE_MAGIC_LEN)) {
		rc = -ENOMEM;
		goto out;
	}
	rc = snapfile_writer__header(w, h);
	if (!rc)
		rc = snapfile_writer__flush(w);
	/* Format 2: the magic and the header frame are as in format 1; the
	 * records after them go into compressed chunks. */
	if (!rc && w->major >= 2) {
		rc = snapfile_writer__zstd(w, o->level ? o->level : SNAPFILE_ZSTD_LEVEL);
		if (!rc && w->major >= 3 && !(w->dd = snapfile_dedup__new()))
			rc = -ENOMEM;
		w->flush_at = o->chunk_bytes ? o->chunk_bytes : SNAPFILE_CHUNK_BYTES;
		w->chunk_kinds = 0;	/* the header is not in a chunk */
		w->chunk_recs = 0;
	}
out:
	if (rc && w) {
		if (w->fd >= 0) {
			close(w->fd);
			if (w->is_reg)
				unlink(path);
		}
		ZSTD_freeCCtx(w->cctx);
		snapfile_dedup__delete(w->dd);
		free(w->buf);
		free(w);
		w = NULL;
	}
	if (err)
		*err = rc;
	return w;
}

/* Bytes written to the file so far (buffered records not included). */
uint64_t snapfile_writer__bytes_written(const struct snapfile_writer *w)
{
	return w->bytes_written;
}

/* Records appended so far (header included). */
uint64_t snapfile_writer__records(const struct snapfile_writer *w)
{
	return w->records;
}

/* Write END, flush, fsync, close and free w; the first error of its life, or 0. */
int snapfile_writer__close(struct snapfile_writer *w)
{
	int err;

	if (!w)
		return 0;
	if (!w->err)
		snapfile_writer__end_rec(w);
	snapfile_writer__flush(w);
	if (!w->err && fsync(w->fd) && (w->is_reg || (errno != EINVAL && errno != EROFS)))
		w->err = -errno;
	if (close(w->fd) && !w->err && errno != EINTR)
		w->err = -errno;
	err = w->err;
	ZSTD_freeCCtx(w->cctx);
	snapfile_dedup__delete(w->dd);
	free(w->zbuf);
	free(w->lit);
	free(w->buf);
	free(w->mbuf);
	free(w);
	return err;
}
