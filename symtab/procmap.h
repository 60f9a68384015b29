/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procmap.h -- one process's mappings, as recorded, resolved against the
 * object cache (objfile.h): for an address, the mapping, its file on this
 * machine and the load bias (runtime address = bias + link-time address).
 *
 * The input is what the recorder saw in /proc/PID/maps, with build ids: the
 * capture file's PROCESS records carry exactly this (formats/capture).
 */
#ifndef LJSNAP_SYMTAB_PROCMAP_H
#define LJSNAP_SYMTAB_PROCMAP_H

#include <stddef.h>
#include <stdint.h>

#include "symtab/objfile.h"

/* Mapping protection bits (as in /proc/PID/maps). */
#define PROCMAP_PROT_READ	0x1
#define PROCMAP_PROT_WRITE	0x2
#define PROCMAP_PROT_EXEC	0x4
#define PROCMAP_PROT_SHARED	0x8

/* One mapping as recorded. */
struct procmap_desc {
	uint64_t start, end;		/* [start, end) */
	uint64_t offset;		/* file offset mapped at start */
	uint32_t prot;			/* PROCMAP_PROT_* */
	uint32_t build_id_len;		/* 0 = unknown */
	const char *path;		/* "" for anonymous mappings */
	const uint8_t *build_id;
};

struct procmap_ent {
	uint64_t start, end, offset;
	uint32_t prot;		/* PROCMAP_PROT_* */
	const char *path;	/* as recorded, "" for anonymous (owned by the procmap) */
	struct objfile *obj;	/* NULL for anonymous and [pseudo] mappings (but an image) */
	uint64_t bias;		/* runtime = bias + vaddr, when has_bias */
	int has_bias;
};

struct procmap {
	struct procmap_ent *v;	/* sorted by start */
	size_t n;
	char *strs;
};

/* Resolve a process's mappings against the cache.  Empty mappings are
 * dropped.  0, -EINVAL or -ENOMEM. */
int procmap__new(struct objcache *c, const struct procmap_desc *maps, size_t n,
		 struct procmap **out);
void procmap__delete(struct procmap *pm);

/* The mapping containing addr, or NULL. */
const struct procmap_ent *procmap__find(const struct procmap *pm, uint64_t addr);

/* Read len bytes at runtime address addr from the found file of a read-only
 * file-backed mapping (code, .rodata, .eh_frame); never from the capture's
 * copy of a file (objfile.h), which holds no code.  0 or -EFAULT. */
int procmap__read(const struct procmap *pm, uint64_t addr, void *buf, size_t len);

#endif /* LJSNAP_SYMTAB_PROCMAP_H */
