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
#include <zlib.h>
#include <msgpack/pack.h>
#include "formats/snapfile_int.h"
#include "symtab/vec.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

struct snapfile_writer {
	int fd;
	int is_reg;		/* regular file: fsync applies */
	int err;		/* first I/O or allocation error (sticky) */
	int oom;		/* the record being packed lost bytes */
	uint8_t *buf;		/* frames not yet written */
	size_t len, cap;
	size_t rec_start;	/* frame being packed starts here */
	msgpack_packer pk;
	uint64_t bytes_written;
	uint64_t records;
};

/* -- Buffer and framing ------------------------------------------------------ */

/* Make room for n more bytes in the buffer: 0, -ENOMEM or -EOVERFLOW. */
static int snapfile_writer__reserve(struct snapfile_writer *w, size_t n)
{
	if (n > SIZE_MAX - w->len)
		return -EOVERFLOW;
	return vec__grow(&w->buf, &w->cap, 1, w->len + n);
}

/* msgpack write callback: append to the buffer, remember a failure. */
static int snapfile_writer__put(void *data, const char *p, size_t n)
{
	struct snapfile_writer *w = data;

	if (w->oom)
		return -1;
	if (!n)
		return 0;
	if (snapfile_writer__reserve(w, n)) {
		w->oom = 1;
		return -1;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	return 0;
}

/* Start a frame: reserve its 8-byte header. */
static int snapfile_writer__begin(struct snapfile_writer *w, enum snapfile_kind kind, size_t nfields)
{
	if (w->err)
		return w->err;
	w->oom = 0;
	w->rec_start = w->len;
	if (snapfile_writer__reserve(w, SNAPFILE_FRAME_HDR))
		return w->err = -ENOMEM;
	w->len += SNAPFILE_FRAME_HDR;
	msgpack_pack_array(&w->pk, nfields + 1);
	msgpack_pack_uint32(&w->pk, kind);
	return 0;
}

/* Finish a frame: fill length and crc, flush when the buffer is large. */
static int snapfile_writer__end(struct snapfile_writer *w)
{
	size_t payload = w->len - w->rec_start - SNAPFILE_FRAME_HDR;
	uint8_t *hdr = w->buf + w->rec_start;
	uint32_t v;

	if (w->oom) {
		w->len = w->rec_start;
		return w->err = -ENOMEM;
	}
	if (payload > SNAPFILE_FRAME_MAX) {
		w->len = w->rec_start;
		return -E2BIG;
	}
	v = htole32((uint32_t)payload);
	memcpy(hdr, &v, 4);
	v = htole32((uint32_t)crc32(0L, hdr + SNAPFILE_FRAME_HDR, (uInt)payload));
	memcpy(hdr + 4, &v, 4);
	w->records++;
	if (w->len >= SNAPFILE_FLUSH_BYTES)
		return snapfile_writer__flush(w);
	return 0;
}

/* Write the buffered records to the file (no fsync).  0 or negative errno. */
int snapfile_writer__flush(struct snapfile_writer *w)
{
	size_t done = 0;

	if (w->err)
		return w->err;
	while (done < w->len) {
		ssize_t n = write(w->fd, w->buf + done, w->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* The file now ends inside a frame at worst; readers report
			 * that as truncation.  Nothing more is written. */
			w->err = n < 0 ? -errno : -EIO;
			w->bytes_written += done;
			w->len = 0;
			return w->err;
		}
		done += (size_t)n;
	}
	w->bytes_written += done;
	w->len = 0;
	return 0;
}

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

/* Pack key -> unsigned integer. */
static void snapfile_writer__ku64(struct snapfile_writer *w, const char *k, uint64_t v)
{
	snapfile_writer__key(w, k);
	msgpack_pack_uint64(&w->pk, v);
}

/* Pack key -> string. */
static void snapfile_writer__kstr(struct snapfile_writer *w, const char *k, const char *s)
{
	snapfile_writer__key(w, k);
	snapfile_writer__str(w, s);
}

/* Pack a NUL-padded comm (at most LJS_COMM_LEN - 1 bytes are meaningful). */
static void snapfile_writer__comm(struct snapfile_writer *w, const char *comm)
{
	msgpack_pack_str_with_body(&w->pk, comm, strnlen(comm, LJS_COMM_LEN - 1));
}

/* -- Records -------------------------------------------------------------------- */

/* HEADER: [1, {...}]; NULL strings and a zero clock are filled in here. */
static int snapfile_writer__header(struct snapfile_writer *w, const struct snapfile_header *h)
{
	struct utsname u;
	uint64_t mono = h->mono_ns, real = h->real_ns;
	int have_uname = uname(&u) == 0;
	size_t i;
	int err;

	if (!mono && !real)
		snapfile__clock_ref(&mono, &real);
	err = snapfile_writer__begin(w, SNAPFILE_REC_HEADER, 1);
	if (err)
		return err;
	msgpack_pack_map(&w->pk, 14);
	/* "major" is frozen: every version keeps it in the first record. */
	snapfile_writer__ku64(w, "major", SNAPFILE_MAJOR);
	snapfile_writer__ku64(w, "minor", SNAPFILE_MINOR);
	snapfile_writer__kstr(w, "ljsnap", h->ljsnap_version ? h->ljsnap_version : PACKAGE_VERSION);
	snapfile_writer__kstr(w, "host", h->host ? h->host : have_uname ? u.nodename : "");
	snapfile_writer__kstr(w, "kernel", h->kernel ? h->kernel : have_uname ? u.release : "");
	snapfile_writer__kstr(w, "arch", h->arch ? h->arch : have_uname ? u.machine : "");
	snapfile_writer__ku64(w, "mono_ns", mono);
	snapfile_writer__ku64(w, "real_ns", real);
	snapfile_writer__ku64(w, "freq", h->freq_hz);
	snapfile_writer__ku64(w, "stack", h->stack_bytes);
	snapfile_writer__ku64(w, "lstack", h->lstack_bytes);
	snapfile_writer__kstr(w, "target", h->target);
	snapfile_writer__ku64(w, "features", h->features);
	snapfile_writer__key(w, "regs");
	msgpack_pack_array(&w->pk, snapfile__nregs);
	for (i = 0; i < snapfile__nregs; i++)
		snapfile_writer__str(w, snapfile__regs[i].name);
	return snapfile_writer__end(w);
}

/* Pack the LuaJIT part of a process: {"layout": {name: int}, ...}. */
static void snapfile_writer__luajit(struct snapfile_writer *w, const struct snapfile_process *p)
{
	size_t i;

	msgpack_pack_map(&w->pk, 6);
	snapfile_writer__key(w, "layout");
	msgpack_pack_map(&w->pk, lj_layout__nfields);
	for (i = 0; i < lj_layout__nfields; i++) {
		int32_t v;

		memcpy(&v, (const char *)&p->layout + lj_layout__fields[i].offset, sizeof(v));
		snapfile_writer__key(w, lj_layout__fields[i].name);
		msgpack_pack_int32(&w->pk, v);
	}
	snapfile_writer__kstr(w, "build", p->lj_build);
	snapfile_writer__key(w, "prov");
	msgpack_pack_array(&w->pk, p->nprov);
	for (i = 0; i < p->nprov; i++)
		snapfile_writer__str(w, p->prov[i]);
	snapfile_writer__ku64(w, "vm_lo", p->vm_lo);
	snapfile_writer__ku64(w, "vm_hi", p->vm_hi);
	snapfile_writer__ku64(w, "g", p->g);
}

/* PROCESS: [2, {"pid", "ppid", "comm", "exe", "cmdline", "start", "exited", "image", "maps",
 * "lj"?}]. */
int snapfile_writer__process(struct snapfile_writer *w, const struct snapfile_process *p)
{
	uint32_t i;
	int err;

	if ((p->nmaps && !p->maps) || (p->has_luajit && p->nprov && !p->prov))
		return -EINVAL;
	for (i = 0; i < p->nmaps; i++)
		if (p->maps[i].build_id_len && !p->maps[i].build_id)
			return -EINVAL;
	err = snapfile_writer__begin(w, SNAPFILE_REC_PROCESS, 1);
	if (err)
		return err;
	msgpack_pack_map(&w->pk, p->has_luajit ? 10 : 9);
	snapfile_writer__ku64(w, "pid", p->pid);
	snapfile_writer__ku64(w, "ppid", p->ppid);
	snapfile_writer__key(w, "comm");
	snapfile_writer__comm(w, p->comm);
	snapfile_writer__kstr(w, "exe", p->exe);
	snapfile_writer__kstr(w, "cmdline", p->cmdline);
	snapfile_writer__ku64(w, "start", p->start_ns);
	snapfile_writer__ku64(w, "exited", p->exited_ns);
	snapfile_writer__ku64(w, "image", p->image);
	snapfile_writer__key(w, "maps");
	msgpack_pack_array(&w->pk, p->nmaps);
	for (i = 0; i < p->nmaps; i++) {
		const struct snapfile_mapping *m = &p->maps[i];

		msgpack_pack_array(&w->pk, 6);
		msgpack_pack_uint64(&w->pk, m->start);
		msgpack_pack_uint64(&w->pk, m->end);
		msgpack_pack_uint64(&w->pk, m->offset);
		msgpack_pack_uint32(&w->pk, m->prot);
		snapfile_writer__str(w, m->path);
		msgpack_pack_bin_with_body(&w->pk, m->build_id, m->build_id_len);
	}
	if (p->has_luajit) {
		snapfile_writer__key(w, "lj");
		snapfile_writer__luajit(w, p);
	}
	return snapfile_writer__end(w);
}

/* SAMPLE: [3, time, pid, tid, cpu, flags, comm, regs, g, cfg_gen, [[kind, status,
 * addr, want, aux, bytes], ...]]; regs = u64 LE each, in the header's "regs" order. */
int snapfile_writer__sample(struct snapfile_writer *w, const struct ljs_sample *s)
{
	uint8_t regs[SNAPFILE_REGS_MAX * 8];
	uint32_t i;
	int err;

	if (s->nsec > LJS_SAMPLE_MAX_SECS)
		return -EINVAL;
	for (i = 0; i < s->nsec; i++)
		if (s->sec[i].len && !s->sec[i].data)
			return -EINVAL;
	err = snapfile_writer__begin(w, SNAPFILE_REC_SAMPLE, 10);
	if (err)
		return err;
	msgpack_pack_uint64(&w->pk, s->time_ns);
	msgpack_pack_uint32(&w->pk, s->pid);
	msgpack_pack_uint32(&w->pk, s->tid);
	msgpack_pack_uint32(&w->pk, s->cpu);
	msgpack_pack_uint32(&w->pk, s->flags);
	snapfile_writer__comm(w, s->comm);
	for (i = 0; i < snapfile__nregs; i++) {
		uint64_t v;

		memcpy(&v, (const char *)&s->regs + snapfile__regs[i].offset, 8);
		v = htole64(v);
		memcpy(regs + 8 * i, &v, 8);
	}
	msgpack_pack_bin_with_body(&w->pk, regs, 8 * snapfile__nregs);
	msgpack_pack_uint64(&w->pk, s->g);
	msgpack_pack_uint32(&w->pk, s->cfg_gen);
	msgpack_pack_array(&w->pk, s->nsec);
	for (i = 0; i < s->nsec; i++) {
		const struct ljs_section *sec = &s->sec[i];

		msgpack_pack_array(&w->pk, 6);
		msgpack_pack_uint16(&w->pk, sec->kind);
		msgpack_pack_uint16(&w->pk, sec->status);
		msgpack_pack_uint64(&w->pk, sec->addr);
		msgpack_pack_uint32(&w->pk, sec->want);
		msgpack_pack_uint32(&w->pk, sec->aux);
		msgpack_pack_bin_with_body(&w->pk, sec->data, sec->len);
	}
	return snapfile_writer__end(w);
}

/* MEMORY: [4, pid, addr, bytes, first_ns, last_ns, gen]. */
int snapfile_writer__memory(struct snapfile_writer *w, const struct snapfile_memory *m)
{
	int err;

	if (m->len && !m->data)
		return -EINVAL;
	if (m->len > SNAPFILE_FRAME_MAX - 64)
		return -E2BIG;
	err = snapfile_writer__begin(w, SNAPFILE_REC_MEMORY, 6);
	if (err)
		return err;
	msgpack_pack_uint32(&w->pk, m->pid);
	msgpack_pack_uint64(&w->pk, m->addr);
	msgpack_pack_bin_with_body(&w->pk, m->data, m->len);
	msgpack_pack_uint64(&w->pk, m->first_ns);
	msgpack_pack_uint64(&w->pk, m->last_ns);
	msgpack_pack_uint64(&w->pk, m->gen);
	return snapfile_writer__end(w);
}

/* OBJECT: [8, path, build_id, bytes]. */
int snapfile_writer__object(struct snapfile_writer *w, const struct snapfile_object *o)
{
	int err;

	if (!o->path || (o->len && !o->data) || (o->build_id_len && !o->build_id))
		return -EINVAL;
	if (o->len > SNAPFILE_FRAME_MAX - 256 - o->build_id_len - strlen(o->path))
		return -E2BIG;
	err = snapfile_writer__begin(w, SNAPFILE_REC_OBJECT, 3);
	if (err)
		return err;
	snapfile_writer__str(w, o->path);
	msgpack_pack_bin_with_body(&w->pk, o->build_id, o->build_id_len);
	msgpack_pack_bin_with_body(&w->pk, o->data, o->len);
	return snapfile_writer__end(w);
}

/* KSYMS: [5, [[addr, name, module], ...]], SNAPFILE_KSYMS_PER_REC per record. */
int snapfile_writer__ksyms(struct snapfile_writer *w, const struct snapfile_ksym *syms, size_t n)
{
	size_t i, chunk;
	int err = 0;

	if (n && !syms)
		return -EINVAL;
	for (i = 0; i < n && !err; i += chunk) {
		size_t j;

		chunk = n - i < SNAPFILE_KSYMS_PER_REC ? n - i : SNAPFILE_KSYMS_PER_REC;
		err = snapfile_writer__begin(w, SNAPFILE_REC_KSYMS, 1);
		if (err)
			break;
		msgpack_pack_array(&w->pk, chunk);
		for (j = i; j < i + chunk; j++) {
			msgpack_pack_array(&w->pk, 3);
			msgpack_pack_uint64(&w->pk, syms[j].addr);
			snapfile_writer__str(w, syms[j].name);
			snapfile_writer__str(w, syms[j].module);
		}
		err = snapfile_writer__end(w);
	}
	return err;
}

/* STATS: [6, {name: value, ...}]. */
int snapfile_writer__stats(struct snapfile_writer *w, const struct snapfile_stat *st, size_t n)
{
	size_t i;
	int err;

	if (n && !st)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!st[i].name)
			return -EINVAL;
	err = snapfile_writer__begin(w, SNAPFILE_REC_STATS, 1);
	if (err)
		return err;
	msgpack_pack_map(&w->pk, n);
	for (i = 0; i < n; i++)
		snapfile_writer__ku64(w, st[i].name, st[i].value);
	return snapfile_writer__end(w);
}

/* END: [7, {"records": frames before this one}]. */
static int snapfile_writer__end_rec(struct snapfile_writer *w)
{
	uint64_t n = w->records;
	int err = snapfile_writer__begin(w, SNAPFILE_REC_END, 1);

	if (err)
		return err;
	msgpack_pack_map(&w->pk, 1);
	snapfile_writer__ku64(w, "records", n);
	return snapfile_writer__end(w);
}

/* -- Lifecycle ---------------------------------------------------------------------- */

/* Create (or truncate) path with mode 0600, write magic and header (NULL h:
 * all defaults), flush. */
struct snapfile_writer *snapfile_writer__open(const char *path, const struct snapfile_header *h,
					      int *err)
{
	static const struct snapfile_header defaults;
	struct snapfile_writer *w;
	struct stat st;
	int rc = 0;

	if (!h)
		h = &defaults;
	w = calloc(1, sizeof(*w));
	if (!w) {
		rc = -ENOMEM;
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
out:
	if (rc && w) {
		if (w->fd >= 0) {
			close(w->fd);
			if (w->is_reg)
				unlink(path);
		}
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
	free(w->buf);
	free(w);
	return err;
}
