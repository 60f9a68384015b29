/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * embed.h -- the copies of mapped ELF files a capture carries (EMBED
 * records, docs/capture-format.md): what report needs from each file
 * (symtab/elfcopy.h), zstd-compressed (formats/capture/embed_pack.h), once
 * per build id.
 *
 * Record side: before a PROCESS record, embedder__mappings writes the copy
 * of every file it maps that the capture does not carry yet, from the
 * cache of embed_cache.h when an earlier recording made it.  Report side:
 * embed__load hands a copy to the pipeline's object cache, which uses it
 * for the objects whose file is missing or another build.
 */
#ifndef LJSNAP_EMBED_H
#define LJSNAP_EMBED_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/embed_cache.h"
#include "formats/capture/snapfile.h"
#include "symtab/elfcopy.h"
#include "symtab/intmap.h"

struct ljs_pipe;
struct lj_mapping;

/* The recorder's copies: which build ids the file carries, and their cost. */
struct embedder {
	struct intmap seen;		/* FNV-1a of the build id -> 1 */
	uint32_t what;			/* ELFCOPY_* bits to take (--debug-info adds DEBUG) */
	int off;			/* --no-embed */
	uint64_t objects, failed;	/* copies written; files that could not be copied */
	uint64_t raw, packed;		/* section bytes copied; bytes in the file */
	uint64_t names;			/* of packed: names of LuaJIT's functions (funcs.h) */
	uint64_t ns;			/* time spent reading and compressing */
	uint64_t cached;		/* of objects: taken from the cache (embed_cache.h) */
	struct embed_cache cache;
};

void embedder__init(struct embedder *e, int off, int debug_info);
void embedder__exit(struct embedder *e);

/* Write an EMBED record for every file-backed mapping of pid (maps, n of
 * them, as /proc/PID/maps lists them) whose build id the capture does not
 * carry yet.  The file is read through /proc/PID/map_files (the very file
 * mapped, even when deleted or replaced since), else /proc/PID/root/PATH,
 * else PATH, and only when its build id is the mapping's.  0, or the
 * writer's sticky error; a file that cannot be read is counted and skipped. */
int embedder__mappings(struct embedder *e, struct snapfile_writer *w, uint32_t pid,
		       const struct lj_mapping *maps, size_t n);

/* Copy one file (of build id (id, n), mapped at [start, end) from path in
 * pid; pid 0: read path only) unless its build id was tried before; with
 * the debug information when asked for and it fits a frame, else without.
 * 1 written, 0 tried before, -ENOENT (counted in failed: not readable, not
 * that build, too big, or the write failed: the writer's error is sticky),
 * or -ENOMEM (the set of build ids). */
int embedder__copy(struct embedder *e, struct snapfile_writer *w, uint32_t pid, uint64_t start,
		   uint64_t end, const char *path, const uint8_t *id, size_t n);

/* Write the EMBED record of copy c (its build id (id, n), read from path).
 * Adds to e's counters.  0 or negative errno (-E2BIG: over the frame size). */
int embedder__write(struct embedder *e, struct snapfile_writer *w, const char *path,
		    const uint8_t *id, size_t n, const struct elfcopy *c);

/* Hand an EMBED record to the pipeline's object cache.  0, -EBADMSG or -ENOMEM. */
int embed__load(struct ljs_pipe *pipe, const struct snapfile_embed *r);

#endif
