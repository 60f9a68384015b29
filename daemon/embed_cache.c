/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * embed_cache.c -- EMBED records kept in the cache directory; see
 * embed_cache.h.
 *
 * An entry: the 56-byte head (little-endian as x86-64 writes it), then
 * the build id, the extents, the compressed data and the names.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "daemon/cache.h"
#include "daemon/embed_cache.h"
#include "symtab/buildid.h"
#include "symtab/elf.h"

#define EC_MAGIC	"LJEMBC1"	/* and its NUL: 8 bytes */
#define EC_MAX		(256u << 20)	/* a larger entry is not kept */

struct ec_head {
	char magic[8];
	uint32_t want, what;		/* the bits asked for; the record's */
	uint64_t size, raw_len;
	uint32_t build_id_len, extents_len, len, names_len;
	uint64_t reserved;
};

/* See embed_cache.h. */
void embed_cache__init(struct embed_cache *c, const char *root)
{
	int n = root ? snprintf(c->dir, sizeof(c->dir), "%s", root) : 0;

	c->state = n > 0 && (size_t)n < sizeof(c->dir) ? 0 : -1;
}

/* Remove the directory name in the cache root (fd): another build's. */
static void remove_dir(int root, const char *name)
{
	int fd = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	unlinkat(root, name, AT_REMOVEDIR);
}

/* Find or make DIR/embed-SELF; 1 usable, -1 not. */
static int ec__open(struct embed_cache *c)
{
	char self[2 * BUILDID_MAX + 1], root[PATH_MAX], name[sizeof(self) + 8];
	uint8_t id[BUILDID_MAX];
	struct elf_file *ef = NULL;
	struct dirent *de;
	int n = -1, made, fd;
	DIR *d;

	if (!elf_file__open("/proc/self/exe", &ef))
		n = elf_file__build_id(ef, id, sizeof(id));
	elf_file__delete(ef);
	if (n <= 0)
		return -1;
	buildid__hex(id, (size_t)n, self, sizeof(self));
	snprintf(name, sizeof(name), "embed-%s", self);
	memcpy(root, c->dir, sizeof(root));
	if (cache__mkdir(root) || snprintf(c->dir, sizeof(c->dir), "%s/%s", root, name) >=
	    (int)sizeof(c->dir))
		return -1;
	made = access(c->dir, F_OK) != 0;
	if (cache__mkdir(c->dir))
		return -1;
	/* a new build: the entries of the others are of no more use */
	if (made && (fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		if ((d = fdopendir(fd)) != NULL) {
			while ((de = readdir(d)) != NULL)
				if (!strncmp(de->d_name, "embed-", 6) && strcmp(de->d_name, name))
					remove_dir(dirfd(d), de->d_name);
			closedir(d);
		} else {
			close(fd);
		}
	}
	return 1;
}

/* The entry's path, the cache made ready; 0 or -ENOENT. */
static int ec__path(struct embed_cache *c, const uint8_t *id, size_t n, uint32_t what,
		    char *path, size_t size)
{
	char hex[2 * BUILDID_MAX + 1];

	if (!c->state)
		c->state = ec__open(c);
	if (c->state < 0 || !n || n > BUILDID_MAX)
		return -ENOENT;
	buildid__hex(id, n, hex, sizeof(hex));
	return snprintf(path, size, "%s/%s-%x", c->dir, hex, what) < (int)size ? 0 : -ENOENT;
}

/* See embed_cache.h. */
int embed_cache__get(struct embed_cache *c, const uint8_t *id, size_t n, uint32_t what,
		     struct snapfile_embed *rec, char **blobp)
{
	char path[PATH_MAX], *b = NULL;
	struct ec_head h;
	size_t len;
	const uint8_t *p;

	if (ec__path(c, id, n, what, path, sizeof(path)) || cache__read(path, EC_MAX, &b, &len))
		return -ENOENT;
	if (len < sizeof(h))
		goto stale;
	memcpy(&h, b, sizeof(h));
	if (memcmp(h.magic, EC_MAGIC, 8) || h.want != what || h.build_id_len != n ||
	    len != sizeof(h) + (uint64_t)h.build_id_len + h.extents_len + h.len + h.names_len ||
	    memcmp(b + sizeof(h), id, n))
		goto stale;
	p = (const uint8_t *)b + sizeof(h) + n;
	memset(rec, 0, sizeof(*rec));
	rec->build_id = (const uint8_t *)b + sizeof(h);
	rec->build_id_len = h.build_id_len;
	rec->size = h.size;
	rec->what = h.what;
	rec->raw_len = h.raw_len;
	rec->extents = p;
	rec->extents_len = h.extents_len;
	rec->data = p += h.extents_len;
	rec->len = h.len;
	rec->names = h.names_len ? p + h.len : NULL;
	rec->names_len = h.names_len;
	*blobp = b;
	return 0;
stale:
	free(b);
	return -ENOENT;
}

/* See embed_cache.h. */
int embed_cache__put(struct embed_cache *c, const uint8_t *id, size_t n, uint32_t what,
		     const struct snapfile_embed *rec)
{
	char path[PATH_MAX], *name;
	struct iovec iov[5];
	struct ec_head h;

	if (ec__path(c, id, n, what, path, sizeof(path)))
		return -ENOENT;
	if ((uint64_t)rec->extents_len + rec->len + rec->names_len > EC_MAX / 2)
		return -E2BIG;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, EC_MAGIC, 8);
	h.want = what;
	h.what = rec->what;
	h.size = rec->size;
	h.raw_len = rec->raw_len;
	h.build_id_len = (uint32_t)n;
	h.extents_len = rec->extents_len;
	h.len = rec->len;
	h.names_len = rec->names_len;
	iov[0] = (struct iovec){ &h, sizeof(h) };
	iov[1] = (struct iovec){ (void *)id, n };
	iov[2] = (struct iovec){ (void *)rec->extents, rec->extents_len };
	iov[3] = (struct iovec){ (void *)rec->data, rec->len };
	iov[4] = (struct iovec){ (void *)rec->names, rec->names_len };
	name = strrchr(path, '/');
	*name++ = 0;
	return cache__write(path, name, iov, 5);
}
