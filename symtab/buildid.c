/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * buildid.c -- build-id strings, .gnu_debuglink and the debug-file search
 * (see buildid.h for the order).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symtab/buildid.h"
#include "symtab/elf.h"

#define BUILDID_DEFAULT_DIRS	"/usr/lib/debug"
#define BUILDID_MAX_DIRS	16

/* Lower-case hex of a build id. */
char *buildid__hex(const uint8_t *id, size_t n, char *buf, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	if (!size)
		return buf;
	for (i = 0; i < n && 2 * i + 2 < size; i++) {
		buf[2 * i] = hex[id[i] >> 4];
		buf[2 * i + 1] = hex[id[i] & 15];
	}
	buf[2 * i] = 0;
	return buf;
}

/* Join sysroot and path. */
int buildid__rooted(const char *sysroot, const char *path, char *buf, size_t size)
{
	int n;

	if (!sysroot)
		sysroot = "";
	n = snprintf(buf, size, "%s%s", sysroot, path);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* <root>/.build-id/xx/yyyy<suffix>. */
int buildid__path(const char *root, const uint8_t *id, size_t n, const char *suffix, char *buf,
		  size_t size)
{
	char hex[2 * BUILDID_MAX + 1];
	int len;

	if (n < 2 || n > BUILDID_MAX)
		return -EINVAL;
	buildid__hex(id, n, hex, sizeof(hex));
	len = snprintf(buf, size, "%s/.build-id/%.2s/%s%s", root, hex, hex + 2, suffix ? suffix : "");
	return len < 0 || (size_t)len >= size ? -ENAMETOOLONG : 0;
}

/* The .gnu_debuglink: NUL-terminated name, padding to 4, then a u32 CRC. */
int buildid__debuglink(struct elf_file *ef, char *name, size_t size, uint32_t *crc)
{
	struct elf_section sec;
	const uint8_t *d;
	size_t len, n, at;

	if (!ef || elf_file__section_data(ef, ".gnu_debuglink", &sec, &d, &len) != 0)
		return -ENOENT;
	n = strnlen((const char *)d, len);
	at = (n + 4) & ~(size_t)3;
	if (n == 0 || n >= len || at + 4 > len || n >= size || memchr(d, '/', n))
		return -ENOENT;
	memcpy(name, d, n);
	name[n] = 0;
	*crc = (uint32_t)d[at] | (uint32_t)d[at + 1] << 8 | (uint32_t)d[at + 2] << 16 |
	       (uint32_t)d[at + 3] << 24;
	return 0;
}

/* CRC32 (reflected, polynomial 0xedb88320), bitwise: called once per candidate file. */
uint32_t buildid__crc32(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	int k;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

/* CRC32 of a whole file. */
int buildid__file_crc(const char *path, uint32_t *crc)
{
	uint8_t buf[65536];
	uint32_t c = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		c = buildid__crc32(c, buf, (size_t)n);
	if (n < 0)
		err = -errno;
	close(fd);
	if (!err)
		*crc = c;
	return err;
}

/* Is path a regular file? */
static int buildid__is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Does a debuglink candidate belong to the object? */
static int buildid__link_ok(const char *path, const uint8_t *id, size_t n, uint32_t crc)
{
	struct elf_file *ef = NULL;
	uint8_t cid[BUILDID_MAX];
	uint32_t fcrc;
	int len, ok = 0;

	if (!buildid__is_file(path))
		return 0;
	if (n && elf_file__open(path, &ef) == 0) {
		len = elf_file__build_id(ef, cid, sizeof(cid));
		elf_file__delete(ef);
		if (len > 0)	/* both have ids: they decide */
			return (size_t)len == n && memcmp(cid, id, n) == 0;
	}
	if (buildid__file_crc(path, &fcrc) == 0)
		ok = fcrc == crc;
	return ok;
}

/* Try the debuglink locations for one object directory. */
static int buildid__by_link(const struct buildid_opts *o, const char *dirs, const char *objdir,
			    const char *link, uint32_t crc, const uint8_t *id, size_t n, char *out,
			    size_t size)
{
	char cand[BUILDID_PATH_MAX];
	const char *p = dirs, *e;
	int len;

	len = snprintf(cand, sizeof(cand), "%s%s/%s", o->sysroot ? o->sysroot : "", objdir, link);
	if (len > 0 && (size_t)len < sizeof(cand) && buildid__link_ok(cand, id, n, crc))
		goto found;
	len = snprintf(cand, sizeof(cand), "%s%s/.debug/%s", o->sysroot ? o->sysroot : "", objdir,
		       link);
	if (len > 0 && (size_t)len < sizeof(cand) && buildid__link_ok(cand, id, n, crc))
		goto found;
	for (int i = 0; *p && i < BUILDID_MAX_DIRS; i++, p = *e ? e + 1 : e) {
		e = strchr(p, ':');
		if (!e)
			e = p + strlen(p);
		len = snprintf(cand, sizeof(cand), "%s%.*s%s/%s", o->sysroot ? o->sysroot : "",
			       (int)(e - p), p, objdir, link);
		if (len > 0 && (size_t)len < sizeof(cand) && buildid__link_ok(cand, id, n, crc))
			goto found;
	}
	return -ENOENT;
found:
	if (strlen(cand) >= size)
		return -ENAMETOOLONG;
	strcpy(out, cand);
	return BUILDID_BY_LINK;
}

/* Find the separate debug file of an object (see buildid.h). */
int buildid__find_debug(const struct buildid_opts *o, const char *obj_path, struct elf_file *ef,
			const uint8_t *id, size_t n, char *out, size_t size)
{
	static const struct buildid_opts none;
	const char *dirs, *p, *e, *slash;
	char root[BUILDID_PATH_MAX], cand[BUILDID_PATH_MAX], objdir[BUILDID_PATH_MAX], link[256];
	uint32_t crc;
	int i;

	if (!o)
		o = &none;
	dirs = o->debug_dirs ? o->debug_dirs : BUILDID_DEFAULT_DIRS;
	for (p = dirs, i = 0; n >= 2 && *p && i < BUILDID_MAX_DIRS; i++, p = *e ? e + 1 : e) {
		e = strchr(p, ':');
		if (!e)
			e = p + strlen(p);
		if (snprintf(root, sizeof(root), "%s%.*s", o->sysroot ? o->sysroot : "",
			     (int)(e - p), p) >= (int)sizeof(root))
			continue;
		if (buildid__path(root, id, n, ".debug", cand, sizeof(cand)) == 0 &&
		    buildid__is_file(cand)) {
			if (strlen(cand) >= size)
				return -ENAMETOOLONG;
			strcpy(out, cand);
			return BUILDID_BY_ID;
		}
	}
	if (!ef || !obj_path || buildid__debuglink(ef, link, sizeof(link), &crc) != 0)
		return -ENOENT;
	slash = strrchr(obj_path, '/');
	if (!slash || (size_t)(slash - obj_path) >= sizeof(objdir))
		return -ENOENT;
	memcpy(objdir, obj_path, (size_t)(slash - obj_path));
	objdir[slash - obj_path] = 0;
	return buildid__by_link(o, dirs, objdir, link, crc, id, n, out, size);
}
