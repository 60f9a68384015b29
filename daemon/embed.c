/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * embed.c -- the copies of mapped ELF files in a capture; see embed.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/cache.h"
#include "daemon/embed.h"
#include "formats/capture/embed_pack.h"
#include "symtab/buildid.h"
#include "symtab/elf.h"
#include "unwind/detect/ljdetect.h"
#include "unwind/pipeline.h"


/* Monotonic ns. */
static uint64_t embed__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* FNV-1a of a build id: the key of the set of build ids embedded. */
static uint64_t embed__key(const uint8_t *id, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ id[i]) * 0x100000001b3ull;
	return h;
}

/* Set up the recorder's copies. */
void embedder__init(struct embedder *e, int off, int debug_info)
{
	memset(e, 0, sizeof(*e));
	intmap__init(&e->seen);
	embed_cache__init(&e->cache, cache__dir());
	e->off = off;
	e->what = ELFCOPY_UNWIND | ELFCOPY_SYMBOLS | (debug_info ? ELFCOPY_DEBUG : 0);
}

/* Free the set. */
void embedder__exit(struct embedder *e)
{
	intmap__exit(&e->seen);
}

/* Open the file of build id (id, n) mapped at [start, end) from path in
 * pid (0: no process, just the path); -1 if none.  *ef is that file, open
 * (the caller deletes it). */
static int embed__open(uint32_t pid, uint64_t start, uint64_t end, const char *path,
		       const uint8_t *id, size_t n, struct elf_file **ef)
{
	char cand[3][4200];
	uint8_t fid[BUILDID_MAX];
	size_t i, k = 0, len = strlen(path), dl = strlen(" (deleted)");
	int fd = -1;

	*ef = NULL;
	if (len > dl && !strcmp(path + len - dl, " (deleted)"))
		len -= dl;
	if (pid) {
		snprintf(cand[k++], sizeof(cand[0]), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid,
			 start, end);
		snprintf(cand[k++], sizeof(cand[0]), "/proc/%u/root%.*s", pid, (int)len, path);
	}
	snprintf(cand[k++], sizeof(cand[0]), "%.*s", (int)len, path);
	for (i = 0; i < k && fd < 0; i++) {
		int got;

		if (elf_file__open(cand[i], ef) != 0)
			continue;
		got = elf_file__build_id(*ef, fid, sizeof(fid));
		if (got > 0 && (size_t)got == n && !memcmp(fid, id, n))
			fd = open(cand[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			elf_file__delete(*ef);
			*ef = NULL;
		}
	}
	return fd;
}

/* The copy of the file open at fd (and as ef): its sections, and the names
 * of LuaJIT's functions that only its code and data give (elfcopy__names). */
static int embed__extract(int fd, struct elf_file *ef, uint32_t what, struct elfcopy *c)
{
	int err = elfcopy__extract(fd, what, c);

	if (!err && (err = elfcopy__names(c, ef)) == -EINVAL)
		err = 0;	/* a bad .eh_frame: no ranges to name */
	return err;
}

/* Write record r and count it; 0 or the writer's error. */
static int embedder__put(struct embedder *e, struct snapfile_writer *w,
			 const struct snapfile_embed *r)
{
	int err = snapfile_writer__embed(w, r);

	if (!err) {
		e->objects++;
		e->raw += r->raw_len;
		e->packed += r->len + r->extents_len + r->names_len;
		e->names += r->names_len;
	}
	return err;
}

/* Write the EMBED record of one copy; see embed.h. */
int embedder__write(struct embedder *e, struct snapfile_writer *w, const char *path,
		    const uint8_t *id, size_t n, const struct elfcopy *c)
{
	struct embed_pack p;
	int err = embed_pack__init(&p, path, id, n, c);

	if (!err)
		err = embedder__put(e, w, &p.rec);
	if (!err)	/* for the next recordings: only a saving if it fails */
		(void)embed_cache__put(&e->cache, id, n, e->what, &p.rec);
	embed_pack__exit(&p);
	return err;
}

/* Copy one file; see embed.h. */
int embedder__copy(struct embedder *e, struct snapfile_writer *w, uint32_t pid, uint64_t start,
		   uint64_t end, const char *path, const uint8_t *id, size_t n)
{
	struct snapfile_embed rec;
	struct elfcopy c = { 0 };
	struct elf_file *ef = NULL;
	uint64_t *slot, t0 = embed__now();
	char *blob;
	int fd = -1, found, err;

	found = intmap__slot(&e->seen, embed__key(id, n), &slot);
	if (found != 0)
		return found < 0 ? found : 0;
	*slot = 1;	/* tried once, whatever comes of it */
	if (!embed_cache__get(&e->cache, id, n, e->what, &rec, &blob)) {
		rec.path = path;
		err = embedder__put(e, w, &rec) ? -ENOENT : 1;
		e->cached += err == 1;
		free(blob);
		goto out;
	}
	err = -ENOENT;
	fd = embed__open(pid, start, end, path, id, n, &ef);
	if (fd < 0 || embed__extract(fd, ef, e->what, &c) != 0)
		goto out;
	err = embedder__write(e, w, path, id, n, &c);
	if (err == -E2BIG && (e->what & ELFCOPY_DEBUG)) {
		/* the DWARF does not fit a frame: the unwind tables and symbols do */
		elfcopy__exit(&c);
		err = embed__extract(fd, ef, e->what & ~ELFCOPY_DEBUG, &c);
		if (!err)
			err = embedder__write(e, w, path, id, n, &c);
	}
	/* Not copied, whatever the reason; a write error of the capture is
	 * sticky and comes back from the next record written. */
	err = err ? -ENOENT : 1;
out:
	e->failed += err == -ENOENT;
	if (fd >= 0)
		close(fd);
	elf_file__delete(ef);
	elfcopy__exit(&c);
	e->ns += embed__now() - t0;
	return err;
}

/* Copy the files a process maps; see embed.h. */
int embedder__mappings(struct embedder *e, struct snapfile_writer *w, uint32_t pid,
		       const struct lj_mapping *maps, size_t n)
{
	size_t i;
	int err = 0;

	for (i = 0; i < n && !err && !e->off; i++) {
		const struct lj_mapping *m = &maps[i];

		if (!m->path || m->path[0] != '/' || m->build_id_len <= 0 ||
		    !strncmp(m->path, "/dev/", 5) || !strncmp(m->path, "/memfd:", 7) ||
		    !strncmp(m->path, "/SYSV", 5))
			continue;
		err = embedder__copy(e, w, pid, m->start, m->end, m->path, m->build_id,
				     (size_t)m->build_id_len);
		err = err < 0 && err != -ENOENT ? err : 0;
	}
	return err;
}

/* Hand an EMBED record to the pipeline; see embed.h. */
int embed__load(struct ljs_pipe *pipe, const struct snapfile_embed *r)
{
	struct elfcopy c;
	int err;

	if (!r->build_id_len)
		return -EBADMSG;
	err = embed_pack__unpack(r, &c);
	if (!err)
		err = ljs_pipe__copy(pipe, r->build_id, r->build_id_len, &c);
	elfcopy__exit(&c);
	return err;
}
