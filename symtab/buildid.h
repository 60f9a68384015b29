/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * buildid.h -- build ids and where separate debug files live.
 *
 * A separate debug file for an object is looked for, in this order (gdb's):
 *   <dir>/.build-id/xx/yyyy.debug        for each debug dir (build id xxyyyy...)
 *   <objdir>/<debuglink>                 the .gnu_debuglink name, next to the object
 *   <objdir>/.debug/<debuglink>
 *   <dir>/<objdir>/<debuglink>           for each debug dir
 * A build-id match is trusted as is; a debuglink candidate must have the
 * object's build id when both have one, else the CRC32 stored in the link.
 * Debug dirs default to "/usr/lib/debug"; a sysroot (a copy of the recorded
 * machine's files) is prefixed to every path.
 */
#ifndef LJSNAP_SYMTAB_BUILDID_H
#define LJSNAP_SYMTAB_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#define BUILDID_MAX	64	/* bytes kept of a build id (GNU ones are 20) */
#define BUILDID_PATH_MAX 4096

struct elf_file;

/* Lower-case hex of a build id into buf; "" when n == 0.  Returns buf. */
char *buildid__hex(const uint8_t *id, size_t n, char *buf, size_t size);

/* <root>/.build-id/xx/yyyy<suffix> into buf.  0 or -EINVAL / -ENAMETOOLONG. */
int buildid__path(const char *root, const uint8_t *id, size_t n, const char *suffix, char *buf,
		  size_t size);

/* The .gnu_debuglink of ef: file name and CRC.  0 or -ENOENT. */
int buildid__debuglink(struct elf_file *ef, char *name, size_t size, uint32_t *crc);

/* The CRC32 that .gnu_debuglink uses (zlib's polynomial), over a file's bytes. */
int buildid__file_crc(const char *path, uint32_t *crc);

/* CRC32 update over a buffer (start with crc = 0). */
uint32_t buildid__crc32(uint32_t crc, const void *buf, size_t len);

struct buildid_opts {
	const char *sysroot;		/* prefix for every path, or NULL/"" */
	const char *debug_dirs;		/* colon-separated; NULL = "/usr/lib/debug" */
};

/* How a debug file was found. */
enum buildid_how {
	BUILDID_NONE = 0,
	BUILDID_BY_ID,			/* .build-id/xx/yyyy.debug */
	BUILDID_BY_LINK,		/* .gnu_debuglink */
};

/* Find the separate debug file of an object: obj_path is the object's path
 * as recorded (may be missing on this machine), ef the object if it could
 * be opened (for its debuglink), id its build id (n may be 0).  Writes the
 * path into out.  Returns enum buildid_how (> 0) or -ENOENT. */
int buildid__find_debug(const struct buildid_opts *o, const char *obj_path, struct elf_file *ef,
			const uint8_t *id, size_t n, char *out, size_t size);

/* Join sysroot and path into buf ("" sysroot = path itself).  0 or -ENAMETOOLONG. */
int buildid__rooted(const char *sysroot, const char *path, char *buf, size_t size);

#endif /* LJSNAP_SYMTAB_BUILDID_H */
