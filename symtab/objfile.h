/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * objfile.h -- the object files of recorded processes, found on this machine.
 *
 * A capture names every mapped file by path and build id.  At report time
 * (maybe on another machine) each (path, build id) is resolved once:
 *   1. <sysroot><path>, if it is ELF and its build id equals the recorded
 *      one (or none was recorded: then it is used unverified);
 *   2. <debug dir>/.build-id/xx/yyyy (no suffix: a link to the binary, as
 *      Fedora ships them), same check;
 *   3. the copy the capture carries of that build (objcache__add_copy,
 *      symtab/elfcopy.h: unwind tables and symbols, rebuilt in a memfd); the
 *      object is then OK with from_copy set, and file_status says what the
 *      path held (MISSING, MISMATCH or BAD); copy_names are the names of
 *      LuaJIT's functions saved with the copy (symtab/funcs.h);
 *   4. otherwise the object is MISSING or MISMATCH (a file is there but it is
 *      another build): its code is not read, so frames in it fall back to
 *      frame pointers and "module+0xoffset", never to a wrong build's symbols.
 * The separate debug file (buildid.h) is looked up by build id even when the
 * binary itself is missing.  Objects are cached for the life of the cache;
 * symtab/procmap.h resolves one process's mappings against it.
 */
#ifndef LJSNAP_SYMTAB_OBJFILE_H
#define LJSNAP_SYMTAB_OBJFILE_H

#include <stddef.h>
#include <stdint.h>

#include "symtab/buildid.h"

struct elf_file;
struct elfcopy;

enum objfile_status {
	OBJFILE_OK = 0,		/* found (build id equal, or none recorded) */
	OBJFILE_MISSING,	/* nothing at the path nor by build id */
	OBJFILE_MISMATCH,	/* a file is there but its build id differs */
	OBJFILE_BAD,		/* there, but not a readable ELF file */
	OBJFILE__MAX
};

struct objfile {
	char *path;		/* as recorded (" (deleted)" removed) */
	char *found;		/* file opened on this machine, or NULL */
	char *debug;		/* separate debug file, or NULL */
	uint8_t build_id[BUILDID_MAX];
	uint32_t build_id_len;	/* recorded one (0: none recorded) */
	enum objfile_status status;
	int verified;		/* the build id was compared and equal */
	int debug_how;		/* enum buildid_how */
	struct elf_file *ef;	/* the found file, or NULL */
	int from_copy;		/* found is the capture's copy (step 3 above) */
	enum objfile_status file_status;	/* when from_copy: what the path held */
	const uint8_t *copy_names;	/* when from_copy: funcs__save's bytes, or NULL */
	size_t copy_names_len;		/* (owned by the cache) */
	uint64_t hits;		/* lookups that landed in this object (symbolizer counts them) */
	struct objfile *next;	/* hash chain (private) */
};

struct objcache;

/* Create a cache (NULL opts: no sysroot, /usr/lib/debug).  NULL on -ENOMEM. */
struct objcache *objcache__new(const struct buildid_opts *o);
void objcache__delete(struct objcache *c);

/* The object for (path, build id), resolved on first use.  NULL only on
 * -ENOMEM or for an empty path; check ->status. */
struct objfile *objcache__get(struct objcache *c, const char *path, const uint8_t *id, size_t n);

/* Add an ELF image that exists only in memory (the vDSO, carried by the
 * capture) for the mappings whose path is path (e.g. "[vdso]"): its
 * symbols name them.  Its status is OK when its build id equals id (or no
 * id is given), else MISMATCH or BAD (and its code is not used); found
 * stays NULL.  0, -EINVAL or -ENOMEM. */
int objcache__add_image(struct objcache *c, const char *path, const uint8_t *id, size_t n,
			const uint8_t *data, size_t len);

/* The image added for path with this build id (a mapping that carries no
 * build id gets none), or NULL. */
struct objfile *objcache__image(struct objcache *c, const char *path, const uint8_t *id, size_t n);

/* Take over a copy of the ELF file with build id (id, n) that the capture
 * carries (*copy is emptied), for the objects of that build whose file is
 * missing or another build; it is rebuilt in a memfd on first use.  Add it
 * before the objects are looked up (objcache__get).  A second copy of one
 * build id is dropped.  0, -EINVAL or -ENOMEM. */
int objcache__add_copy(struct objcache *c, const uint8_t *id, size_t n, struct elfcopy *copy);

/* Call cb for every object in the cache (in no particular order). */
int objcache__foreach(struct objcache *c, int (*cb)(struct objfile *obj, void *arg), void *arg);

/* The options the cache was made with (never NULL). */
const struct buildid_opts *objcache__opts(const struct objcache *c);

const char *objfile_status__name(enum objfile_status s);

/* Open the separate debug file of obj (caller deletes it).  0, -ENOENT. */
int objfile__open_debug(const struct objfile *obj, struct elf_file **out);

#endif /* LJSNAP_SYMTAB_OBJFILE_H */
