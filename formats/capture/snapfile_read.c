/* SPDX-License-Identifier: GPL-2.0-or-later */
/* snapfile_read.c -- the capture file reader: format 1 framing, header, record
 * loop (format 2's compressed chunks: snapfile_zread.c). */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <zlib.h>
#include "formats/capture/mpread.h"
#include "formats/capture/snapfile_dedup.h"
#include "formats/capture/snapfile_int.h"
#include "symtab/vec.h"

#define RBUF_SIZE (256 * 1024)		/* read-ahead */
#define PAYLOAD_STEP (1u << 20)		/* payload buffer grows by what was really read */
#define SKIP_PEEK 32			/* payload bytes read to find a frame's kind (and a
					 * sample's head: at most 23) */

struct snapfile_reader {
	int fd;
	int eof;			/* read() returned 0 */
	int done;			/* no more records will be returned */
	uint8_t *rbuf;			/* read-ahead buffer */
	size_t rpos, rlen;
	uint8_t *buf;			/* payload of the current frame (format 1) */
	size_t cap;
	struct snapfile_zin *z;		/* format 2: the chunks after the header */
	struct snapfile_dedup *dd;	/* format 3: stack references */
	uint64_t dd_chunk;		/* the chunk dd knows */
	const uint8_t *cur;		/* the payload of the record last returned */
	uint32_t curlen;
	struct snapfile_arena rec;	/* decode memory of the current record */
	struct snapfile_arena keep;	/* header strings */
	struct snapfile_header hdr;
	struct snapfile_regmap regmap;
	struct snapfile_reader_stats st;
	uint32_t skip;			/* kinds to pass over unchecked (bit 1 << kind) */
	int heads;			/* snapfile_reader__sample_heads */
	struct snapfile_sample_head head;	/* of the FRAME_HEAD last met */
	char err[256];
	char note[160];
};

/* The record kind of a payload, [kind, ...], without decoding it; 0 if it
 * does not start with an array and a small positive integer. */
static unsigned payload_kind(const uint8_t *p, uint32_t len)
{
	uint32_t i;

	if (len < 2)
		return 0;
	if ((p[0] & 0xf0) == 0x90)
		i = 1;		/* fixarray */
	else if (p[0] == 0xdc && len >= 4)
		i = 3;		/* array 16 */
	else if (p[0] == 0xdd && len >= 6)
		i = 5;		/* array 32 */
	else
		return 0;
	return p[i] < 0x80 ? p[i] : 0;
}

/* The head of a SAMPLE payload ([3, time, pid, tid, ...]) into h: 1, or 0
 * when the bytes do not hold it.  As lenient as the full decoder. */
static int sample_head(const uint8_t *p, uint32_t len, struct snapfile_sample_head *h)
{
	struct mp_cur c;
	uint64_t kind = 0;
	uint32_t n = 0;

	mp_cur__init(&c, p, len);
	mp_cur__array(&c, &n);
	mp_cur__uint(&c, &kind);
	mp_cur__uint(&c, &h->time_ns);
	mp_cur__u32(&c, &h->pid);
	mp_cur__u32(&c, &h->tid);
	return !c.err && n >= 4 && kind == SNAPFILE_REC_SAMPLE;
}

/* printf into msg when the caller gave one. */
__attribute__((format(printf, 3, 4)))
static void snapfile__msg(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!msg || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
}

/* -- Input ------------------------------------------------------------------ */

/* Read up to n bytes (fewer only at end of file): 0 or negative errno. */
static int snapfile_reader__fill(struct snapfile_reader *r, uint8_t *dst, size_t n, size_t *got)
{
	*got = 0;
	while (*got < n) {
		ssize_t k;

		if (r->rpos < r->rlen) {
			size_t take = r->rlen - r->rpos;

			if (take > n - *got)
				take = n - *got;
			memcpy(dst + *got, r->rbuf + r->rpos, take);
			r->rpos += take;
			*got += take;
			continue;
		}
		if (r->eof)
			break;
		if (n - *got >= RBUF_SIZE) {
			k = read(r->fd, dst + *got, n - *got);
			if (k > 0)
				*got += (size_t)k;
		} else {
			k = read(r->fd, r->rbuf, RBUF_SIZE);
			r->rpos = 0;
			r->rlen = k > 0 ? (size_t)k : 0;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			r->eof = 1;
	}
	return 0;
}

/* Pass over n bytes of the stream: what the read-ahead holds, then lseek
 * (read for a pipe).  *got is what could be passed over (< n at the end of
 * the file).  0 or -errno. */
static int snapfile_reader__discard(struct snapfile_reader *r, size_t n, size_t *got)
{
	size_t take = r->rlen - r->rpos < n ? r->rlen - r->rpos : n;
	struct stat st;
	off_t cur;

	r->rpos += take;
	*got = take;
	if (take == n || r->eof)
		return 0;
	cur = lseek(r->fd, 0, SEEK_CUR);
	if (cur >= 0 && fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		size_t left = cur < st.st_size ? (size_t)(st.st_size - cur) : 0;
		size_t skip = n - take < left ? n - take : left;

		if (lseek(r->fd, (off_t)skip, SEEK_CUR) < 0)
			return -errno;
		*got += skip;
		if (*got < n)
			r->eof = 1;
		return 0;
	}
	while (*got < n && !r->eof) {	/* not seekable: read it */
		uint8_t tmp[4096];
		size_t k, want = n - *got < sizeof(tmp) ? n - *got : sizeof(tmp);
		int err = snapfile_reader__fill(r, tmp, want, &k);

		if (err)
			return err;
		*got += k;
		if (k < want)
			break;
	}
	return 0;
}

/* Grow the payload buffer to hold need bytes: 0 or -ENOMEM. */
static int snapfile_reader__reserve(struct snapfile_reader *r, size_t need)
{
	return vec__grow(&r->buf, &r->cap, 1, need);
}

/* Read one frame at r->st.offset into r->buf: enum frame_res or negative errno. */
static int snapfile_reader__frame(struct snapfile_reader *r, uint32_t *len)
{
	uint8_t hdr[SNAPFILE_FRAME_HDR];
	uint32_t crc, want;
	size_t got, have = 0;
	int err;

	*len = 0;
	err = snapfile_reader__fill(r, hdr, sizeof(hdr), &got);
	if (err)
		return err;
	if (got == 0)
		return FRAME_EOF;
	if (got < sizeof(hdr)) {
		r->st.trunc_bytes = got;
		return FRAME_TRUNC;
	}
	memcpy(len, hdr, 4);
	memcpy(&crc, hdr + 4, 4);
	*len = le32toh(*len);
	crc = le32toh(crc);
	if (*len == 0 || *len > SNAPFILE_FRAME_MAX)
		return FRAME_BADLEN;
	if (r->skip) {
		/* The kind is in the first bytes: a kind passed over is not read. */
		size_t head = *len < SKIP_PEEK ? *len : SKIP_PEEK;
		unsigned kind;

		err = snapfile_reader__reserve(r, head);
		if (!err)
			err = snapfile_reader__fill(r, r->buf, head, &got);
		if (err)
			return err;
		have = got;
		kind = got == head ? payload_kind(r->buf, (uint32_t)head) : 0;
		if (kind && kind < 32 && (r->skip & (1u << kind))) {
			int h = kind == SNAPFILE_REC_SAMPLE && r->heads &&
				sample_head(r->buf, (uint32_t)head, &r->head);

			err = snapfile_reader__discard(r, *len - head, &got);
			if (err)
				return err;
			if (got < *len - head) {
				r->st.trunc_bytes = sizeof(hdr) + head + got;
				return FRAME_TRUNC;
			}
			r->st.offset += sizeof(hdr) + *len;
			r->st.frames++;
			return h ? FRAME_HEAD : FRAME_SKIP;
		}
	}
	/* Grow with the data actually read, never with the claimed length. */
	while (have < *len) {
		size_t step = *len - have < PAYLOAD_STEP ? *len - have : PAYLOAD_STEP;

		err = snapfile_reader__reserve(r, have + step);
		if (err)
			return err;
		err = snapfile_reader__fill(r, r->buf + have, step, &got);
		if (err)
			return err;
		have += got;
		if (got < step)
			break;
	}
	if (have < *len) {
		r->st.trunc_bytes = sizeof(hdr) + have;
		return FRAME_TRUNC;
	}
	r->st.offset += sizeof(hdr) + *len;
	r->st.frames++;
	want = (uint32_t)crc32(0L, r->buf, *len);
	if (want != crc) {
		snprintf(r->err, sizeof(r->err),
			 "corrupt record at byte offset %llu: checksum mismatch (stored %08x, "
			 "computed %08x); its %u bytes were skipped",
			 (unsigned long long)(r->st.offset - sizeof(hdr) - *len), crc, want, *len);
		return FRAME_BADCRC;
	}
	return FRAME_OK;
}

/* -- Open --------------------------------------------------------------------- */

/* Check the magic; explain what the file is when it is not ours. */
static int snapfile_reader__magic(struct snapfile_reader *r, char *msg, size_t msglen)
{
	uint8_t m[SNAPFILE_MAGIC_LEN];
	size_t got, i;
	int err, mangled = 0;

	err = snapfile_reader__fill(r, m, sizeof(m), &got);
	if (err) {
		snapfile__msg(msg, msglen, "cannot read the capture file: %s", strerror(-err));
		return err;
	}
	r->st.offset = got;
	if (got == sizeof(m) && !memcmp(m, SNAPFILE_MAGIC, sizeof(m)))
		return 0;
	if (!memcmp(m, SNAPFILE_MAGIC, got)) {
		snapfile__msg(msg, msglen, "the capture file is %s (%zu bytes): the recording "
			      "stopped before it started, or the file was cut",
			      got ? "truncated inside its magic" : "empty", got);
		return SNAPFILE_E_TRUNCHDR;
	}
	/* "LJS" near the start, but the bytes around it changed. */
	for (i = 0; i + 3 <= got && i <= 3; i++)
		if (!memcmp(m + i, "LJS", 3))
			mangled = 1;
	if (mangled) {
		snapfile__msg(msg, msglen, "this looks like an ljsnap capture file damaged by a "
			      "text-mode or 7-bit transfer (line endings or the high bit were changed): "
			      "copy it again in binary mode");
		return SNAPFILE_E_NOTCAPTURE;
	}
	snapfile__msg(msg, msglen, "not an ljsnap capture file (wrong magic): give a file "
		      "written by `ljsnap record`");
	return SNAPFILE_E_NOTCAPTURE;
}

/* Read and decode the header frame; refuse a newer major version. */
static int snapfile_reader__first(struct snapfile_reader *r, char *msg, size_t msglen)
{
	uint32_t len, n, major, minor;
	uint64_t kind;
	struct mp_cur c;
	int res;

	res = snapfile_reader__frame(r, &len);
	if (res == FRAME_EOF || res == FRAME_TRUNC) {
		snapfile__msg(msg, msglen, "the capture file ends inside its header record: the "
			      "recording stopped before it started, or the file was cut");
		return SNAPFILE_E_TRUNCHDR;
	}
	if (res == FRAME_BADLEN || res == FRAME_BADCRC) {
		snapfile__msg(msg, msglen, "the capture file's header record is corrupt (%s): "
			      "the file cannot be read", res == FRAME_BADLEN ?
			      "implausible length" : "checksum mismatch");
		return SNAPFILE_E_CORRUPT;
	}
	if (res < 0) {
		snapfile__msg(msg, msglen, "cannot read the capture file: %s", strerror(-res));
		return res;
	}
	/* The frozen part: [1, {"major": N, ...}]; read it before anything else. */
	mp_cur__init(&c, r->buf, len);
	mp_cur__array(&c, &n);
	if (!c.err && n >= 1)
		mp_cur__uint(&c, &kind);
	if (c.err || n < 2 || kind != SNAPFILE_REC_HEADER ||
	    snapfile__decode_version(&c, n - 1, &major, &minor) || !major) {
		snapfile__msg(msg, msglen, "the capture file's first record is not a valid header "
			      "(%s)", c.why ? c.why : "no format version");
		return SNAPFILE_E_CORRUPT;
	}
	if (major > SNAPFILE_MAJOR) {
		snapfile__msg(msg, msglen, "the capture file has format version %u.%u, newer than "
			      "this ljsnap can read (%u.x): read it with a newer ljsnap",
			      major, minor, SNAPFILE_MAJOR);
		return SNAPFILE_E_NEWER;
	}
	mp_cur__init(&c, r->buf, len);
	mp_cur__array(&c, &n);
	mp_cur__uint(&c, &kind);
	if (snapfile__decode_header(&c, n - 1, &r->hdr, &r->regmap, &r->keep) ||
	    c.p != c.end) {
		if (c.err == -ENOMEM) {
			snapfile__msg(msg, msglen, "out of memory reading the capture file header");
			return -ENOMEM;
		}
		snapfile__msg(msg, msglen, "the capture file's header record is corrupt (%s)",
			      c.why ? c.why : "trailing bytes");
		return SNAPFILE_E_CORRUPT;
	}
	r->st.per_kind[SNAPFILE_REC_HEADER] = 1;
	r->st.raw_bytes = r->st.offset;
	if (major >= 2) {
		r->z = snapfile_zin__new(r->fd, r->rbuf + r->rpos, r->rlen - r->rpos, r->st.offset,
					 r->err, sizeof(r->err));
		if (!r->z || (major >= 3 && !(r->dd = snapfile_dedup__new()))) {
			snapfile__msg(msg, msglen, "out of memory opening the capture file");
			return -ENOMEM;
		}
	}
	return 0;
}

/* Same as __open, also writing a detailed message to msg. */
struct snapfile_reader *snapfile_reader__open_msg(const char *path, int *err, char *msg,
						  size_t msglen)
{
	struct snapfile_reader *r;
	int rc = 0;

	snapfile__msg(msg, msglen, "%s", "");
	r = calloc(1, sizeof(*r));
	if (!r) {
		rc = -ENOMEM;
		goto out;
	}
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		rc = -errno;
		snapfile__msg(msg, msglen, "cannot open %s: %s", path, strerror(-rc));
		goto out;
	}
	r->rbuf = malloc(RBUF_SIZE);
	if (!r->rbuf) {
		rc = -ENOMEM;
		goto out;
	}
	rc = snapfile_reader__magic(r, msg, msglen);
	if (!rc)
		rc = snapfile_reader__first(r, msg, msglen);
out:
	if (rc) {
		if (msg && msglen && !msg[0])
			snapfile__msg(msg, msglen, "%s", snapfile__strerror(rc));
		snapfile_reader__close(r);
		r = NULL;
	}
	if (err)
		*err = rc;
	return r;
}

/* Open a capture file and read its header. */
struct snapfile_reader *snapfile_reader__open(const char *path, int *err)
{
	return snapfile_reader__open_msg(path, err, NULL, 0);
}

/* -- Records --------------------------------------------------------------------- */

/* Format 3: put back the bytes a sample's REF sections stand for. */
static void snapfile_reader__refs(struct snapfile_reader *r, struct ljs_sample *s, struct mp_cur *c)
{
	uint64_t chunk = snapfile_zin__chunk(r->z);

	if (chunk != r->dd_chunk) {	/* references stay inside a chunk */
		snapfile_dedup__reset(r->dd);
		r->dd_chunk = chunk;
	}
	if (snapfile_dedup__resolve(r->dd, s))
		c->err = -ENOMEM;
	snapfile_dedup__counts(r->dd, &r->st.refs, &r->st.refs_lost);
}

/* Decode the payload p: 1 = rec filled, 0 = skipped (unknown kind), <0 error. */
static int snapfile_reader__decode(struct snapfile_reader *r, const uint8_t *p, uint32_t len,
				   uint64_t off, struct snapfile_rec *rec)
{
	struct mp_cur c;
	uint64_t kind = 0;
	uint32_t n;

	mp_cur__init(&c, p, len);
	if (!mp_cur__array(&c, &n) && !n)
		mp_cur__fail(&c, "empty record");
	mp_cur__uint(&c, &kind);
	if (!c.err) {
		switch (kind) {
		case SNAPFILE_REC_PROCESS:
			snapfile__decode_process(&c, n - 1, &rec->proc, &r->rec);
			break;
		case SNAPFILE_REC_SAMPLE:
			snapfile__decode_sample(&c, n - 1, &rec->sample, &r->regmap);
			if (!c.err && r->dd)
				snapfile_reader__refs(r, &rec->sample, &c);
			break;
		case SNAPFILE_REC_MEMORY:
			snapfile__decode_memory(&c, n - 1, &rec->mem);
			break;
		case SNAPFILE_REC_KSYMS:
			snapfile__decode_ksyms(&c, n - 1, &rec->ksyms, &r->rec);
			break;
		case SNAPFILE_REC_STATS:
			snapfile__decode_stats(&c, n - 1, &rec->stats, &r->rec);
			break;
		case SNAPFILE_REC_END:
			snapfile__decode_end(&c, n - 1, &rec->end);
			break;
		case SNAPFILE_REC_OBJECT:
			snapfile__decode_object(&c, n - 1, &rec->object, &r->rec);
			break;
		case SNAPFILE_REC_EMBED:
			snapfile__decode_embed(&c, n - 1, &rec->embed, &r->rec);
			break;
		default:
			/* Unknown kinds (and a repeated header) are skipped. */
			r->st.unknown++;
			return 0;
		}
	}
	if (!c.err && c.p != c.end)
		mp_cur__fail(&c, "trailing bytes after the record");
	if (c.err == -ENOMEM) {
		snprintf(r->err, sizeof(r->err), "out of memory decoding the record at byte offset "
			 "%llu; it was skipped", (unsigned long long)off);
		return -ENOMEM;
	}
	if (c.err) {
		r->st.corrupt++;
		snprintf(r->err, sizeof(r->err), "corrupt %s record at byte offset %llu: %s; "
			 "its %u bytes were skipped", snapfile__kind_name((int)kind),
			 (unsigned long long)off, c.why ? c.why : "bad encoding", len);
		return SNAPFILE_E_CORRUPT;
	}
	rec->kind = (enum snapfile_kind)kind;
	rec->size = len;
	rec->offset = off;
	r->cur = p;
	r->curlen = len;
	r->st.per_kind[kind]++;
	if (kind == SNAPFILE_REC_END)
		r->st.clean_end = 1;
	return 1;
}

/* The next frame (format 1) or record (format 2): an enum frame_res or
 * -errno; at FRAME_OK its payload and offset. */
static int snapfile_reader__get(struct snapfile_reader *r, const uint8_t **p, uint32_t *len,
				uint64_t *off)
{
	int res;

	if (!r->z) {
		res = snapfile_reader__frame(r, len);
		*p = r->buf;
		*off = r->st.offset - SNAPFILE_FRAME_HDR - *len;
		r->st.raw_bytes = r->st.offset;
		return res;
	}
	res = snapfile_zin__next(r->z, p, len, off, &r->st.trunc_bytes);
	r->st.offset = snapfile_zin__offset(r->z);
	r->st.raw_bytes = snapfile_zin__raw_bytes(r->z);
	if (res == FRAME_SKIP)
		r->st.frames += *len;	/* a chunk passed over whole */
	if (res == FRAME_OK) {
		unsigned kind = r->skip ? payload_kind(*p, *len) : 0;

		r->st.frames++;
		if (kind && kind < 32 && (r->skip & (1u << kind)))
			return kind == SNAPFILE_REC_SAMPLE && r->heads &&
			       sample_head(*p, *len, &r->head) ? FRAME_HEAD : FRAME_SKIP;
	}
	return res;
}

/* Next record: 1 = rec filled, 0 = no more records, negative = corrupt frame met. */
int snapfile_reader__next(struct snapfile_reader *r, struct snapfile_rec *rec)
{
	const uint8_t *p;
	uint64_t off;
	uint32_t len;
	int res;

	snapfile_arena__reset(&r->rec);
	r->cur = NULL;
	r->curlen = 0;
	while (!r->done) {
		res = snapfile_reader__get(r, &p, &len, &off);
		switch (res) {
		case FRAME_OK:
			res = snapfile_reader__decode(r, p, len, off, rec);
			if (res)
				return res;
			continue;
		case FRAME_SKIP:
			continue;
		case FRAME_HEAD:
			rec->kind = SNAPFILE_REC_SAMPLE_HEAD;
			rec->size = len;
			rec->offset = off;
			rec->head = r->head;
			return 1;
		case FRAME_BADCRC:
			r->st.corrupt++;
			return SNAPFILE_E_CORRUPT;
		case FRAME_EOF:
			r->done = 1;
			return 0;
		case FRAME_TRUNC:
			r->done = 1;
			r->st.truncated = 1;
			snprintf(r->note, sizeof(r->note), r->z ? "truncated after %llu records (an "
				 "incomplete compressed chunk of %llu bytes: its complete records were "
				 "read)" : "truncated after %llu records (%llu bytes of an incomplete "
				 "record ignored)", (unsigned long long)r->st.frames,
				 (unsigned long long)r->st.trunc_bytes);
			return 0;
		case FRAME_BADLEN:
			r->done = 1;
			r->st.stopped = 1;
			r->st.corrupt++;
			if (!r->z)
				snprintf(r->err, sizeof(r->err), "corrupt record at byte offset %llu: "
					 "implausible length %u; the rest of the file was ignored",
					 (unsigned long long)r->st.offset, len);
			return SNAPFILE_E_CORRUPT;
		default:
			r->done = 1;
			snprintf(r->err, sizeof(r->err), "read error at byte offset %llu: %s",
				 (unsigned long long)r->st.offset, strerror(-res));
			return res;
		}
	}
	return 0;
}

/* -- Accessors ----------------------------------------------------------------------- */

/* The header (strings owned by the reader). */
const struct snapfile_header *snapfile_reader__header(const struct snapfile_reader *r)
{
	return &r->hdr;
}

/* Pass over records of these kinds (bit 1 << kind) without checking or
 * decoding them: for a reader that reads a file twice, each pass for some
 * kinds.  Their corruption is then found only by a pass that reads them. */
void snapfile_reader__skip_kinds(struct snapfile_reader *r, uint32_t mask)
{
	r->skip = mask & ~(1u << SNAPFILE_REC_HEADER);
	if (r->z)	/* chunks of samples are read when their heads are wanted */
		snapfile_zin__skip(r->z, r->heads ? r->skip & ~(1u << SNAPFILE_REC_SAMPLE) : r->skip);
}

/* Heads of the samples passed over (see snapfile.h). */
void snapfile_reader__sample_heads(struct snapfile_reader *r, int on)
{
	r->heads = on;
	snapfile_reader__skip_kinds(r, r->skip);
}

/* Counters and flags so far. */
const struct snapfile_reader_stats *snapfile_reader__stats(const struct snapfile_reader *r)
{
	return &r->st;
}

/* The payload of the record __next last returned (NULL before the first). */
const uint8_t *snapfile_reader__payload(const struct snapfile_reader *r, uint32_t *len)
{
	*len = r->curlen;
	return r->cur;
}

/* Message of the last negative __next ("" if none yet). */
const char *snapfile_reader__error(const struct snapfile_reader *r)
{
	return r->err;
}

/* The truncation note, or NULL. */
const char *snapfile_reader__note(const struct snapfile_reader *r)
{
	return r->st.truncated ? r->note : NULL;
}

/* Bytes of heap the reader holds. */
size_t snapfile_reader__mem(const struct snapfile_reader *r)
{
	return sizeof(*r) + RBUF_SIZE + r->cap + r->rec.held + r->keep.held +
	       (r->z ? snapfile_zin__mem(r->z) : 0) + (r->dd ? snapfile_dedup__mem(r->dd) : 0);
}

/* Close and free (NULL is a no-op). */
void snapfile_reader__close(struct snapfile_reader *r)
{
	if (!r)
		return;
	snapfile_zin__delete(r->z);
	snapfile_dedup__delete(r->dd);
	if (r->fd >= 0)
		close(r->fd);
	free(r->rbuf);
	free(r->buf);
	snapfile_arena__exit(&r->rec);
	snapfile_arena__exit(&r->keep);
	free(r);
}
