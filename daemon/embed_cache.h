/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * embed_cache.h -- EMBED records kept in the recorder's cache directory
 * (cache.h), so that a file's copy is worked out once per build of the file
 * and of ljsnap: reading its sections, naming the functions of a stripped
 * LuaJIT (symtab/funcs.h) and compressing them cost 10-20 ms for the five
 * files of a luajit process, at each recording.
 *
 * An entry is the record exactly as embed_pack__init made it, under
 * DIR/embed-SELF/ID-WHAT, where SELF is the build id of the running ljsnap
 * (another build may copy differently, so it never reads these), ID the
 * file's build id and WHAT the ELFCOPY_* bits asked for.  The directories
 * of other ljsnap builds are removed when this build's is made.  An entry is
 * used only when cache.h trusts the file and its lengths, build id and bits
 * are what was asked for; else the copy is made again and written over it.
 */
#ifndef LJSNAP_DAEMON_EMBED_CACHE_H
#define LJSNAP_DAEMON_EMBED_CACHE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/capture/snapfile.h"

struct embed_cache {
	char dir[PATH_MAX];	/* DIR/embed-SELF; "" when there is no cache */
	int state;		/* 0 not looked for yet, 1 usable, -1 none */
};

/* No cache yet: the directory is looked for at the first use (root: the
 * cache directory, NULL for none). */
void embed_cache__init(struct embed_cache *c, const char *root);

/* The record for the file of build id (id, n) copied with the bits what:
 * *rec pointing into *blob (malloc'ed: the caller frees it; rec->path is
 * NULL, to be set).  0, or -ENOENT (none, or none to trust). */
int embed_cache__get(struct embed_cache *c, const uint8_t *id, size_t n, uint32_t what,
		     struct snapfile_embed *rec, char **blob);

/* Keep rec, the copy of the file of build id (id, n) asked for with the
 * bits what.  0 or -errno (nothing else changes: the cache only saves). */
int embed_cache__put(struct embed_cache *c, const uint8_t *id, size_t n, uint32_t what,
		     const struct snapfile_embed *rec);

#endif
