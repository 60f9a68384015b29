/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * objfile.c -- object files found on this machine, and process mappings
 * resolved against them (see objfile.h).
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symtab/elf.h"
#include "symtab/elfcopy.h"
#include "symtab/objfile.h"

#define OBJCACHE_BUCKETS	1024
#define OBJFILE_DELETED		" (deleted)"

/* A copy of an ELF file carried by the capture (objcache__add_copy). */
struct objcopy {
	uint8_t id[BUILDID_MAX];
	size_t n;
	struct elfcopy ec;
	uint8_t *names;		/* the names saved with it (symtab/funcs.h), or NULL */
	size_t names_len;
	int fd;			/* the rebuilt file, -1 until first used */
	char path[32];		/* /proc/self/fd/N */
	struct objcopy *next;
};

struct objcache {
	struct buildid_opts opts;
	char *sysroot, *debug_dirs;
	struct objfile *bucket[OBJCACHE_BUCKETS];
	struct objfile *images;		/* in-memory images (objcache__add_image) */
	struct objcopy *copies;		/* copies carried by the capture */
};

static const char *const objfile_status_names[OBJFILE__MAX] = {
	"ok", "missing", "build-id mismatch", "not ELF",
};

/* Name of a status. */
const char *objfile_status__name(enum objfile_status s)
{
	return (unsigned)s < OBJFILE__MAX ? objfile_status_names[s] : "?";
}

/* -- The cache ------------------------------------------------------------- */

/* Create a cache. */
struct objcache *objcache__new(const struct buildid_opts *o)
{
	struct objcache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (o && o->sysroot && o->sysroot[0] && !(c->sysroot = strdup(o->sysroot)))
		goto fail;
	if (o && o->debug_dirs && !(c->debug_dirs = strdup(o->debug_dirs)))
		goto fail;
	c->opts.sysroot = c->sysroot;
	c->opts.debug_dirs = c->debug_dirs;
	return c;
fail:
	free(c->sysroot);
	free(c);
	return NULL;
}

/* Free one object. */
static void objfile__delete(struct objfile *obj)
{
	if (!obj)
		return;
	elf_file__delete(obj->ef);
	free(obj->path);
	free(obj->found);
	free(obj->debug);
	free(obj);
}

/* Free the cache and every object in it. */
void objcache__delete(struct objcache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < OBJCACHE_BUCKETS; i++) {
		struct objfile *o = c->bucket[i], *next;

		for (; o; o = next) {
			next = o->next;
			objfile__delete(o);
		}
	}
	while (c->images) {
		struct objfile *o = c->images;

		c->images = o->next;
		objfile__delete(o);
	}
	while (c->copies) {
		struct objcopy *k = c->copies;

		c->copies = k->next;
		if (k->fd >= 0)
			close(k->fd);
		elfcopy__exit(&k->ec);
		free(k->names);
		free(k);
	}
	free(c->sysroot);
	free(c->debug_dirs);
	free(c);
}

/* The cache's options. */
const struct buildid_opts *objcache__opts(const struct objcache *c)
{
	return &c->opts;
}

/* Open path and check it against the recorded build id.  Returns 1 = use it
 * (*ef set), 0 = absent, -1 = another build, -2 = not ELF. */
static int objfile__try(const char *path, const uint8_t *id, size_t n, struct elf_file **ef,
			int *verified)
{
	uint8_t fid[BUILDID_MAX];
	int len, err;

	err = elf_file__open(path, ef);
	if (err == -ENOENT || err == -ENOTDIR || err == -EACCES)
		return 0;
	if (err)
		return -2;
	if (!n) {
		*verified = 0;
		return 1;
	}
	len = elf_file__build_id(*ef, fid, sizeof(fid));
	if (len > 0 && (size_t)len == n && memcmp(fid, id, n) == 0) {
		*verified = 1;
		return 1;
	}
	elf_file__delete(*ef);
	*ef = NULL;
	return -1;
}

/* The rebuilt copy of build id (id, n), or NULL when the capture carries
 * none (or it cannot be rebuilt). */
static struct objcopy *objcache__copy(struct objcache *c, const uint8_t *id, size_t n)
{
	struct objcopy *k;

	for (k = c->copies; k; k = k->next)
		if (k->n == n && !memcmp(k->id, id, n))
			break;
	if (!k)
		return NULL;
	if (k->fd < 0) {
		if (!k->ec.data || elfcopy__memfd(&k->ec, &k->fd) != 0)
			return NULL;
		snprintf(k->path, sizeof(k->path), "/proc/self/fd/%d", k->fd);
		elfcopy__exit(&k->ec);	/* the memfd holds it now */
	}
	return k;
}

/* Resolve a new object: the binary, then its debug file. */
static int objfile__resolve(struct objcache *c, struct objfile *obj)
{
	char buf[BUILDID_PATH_MAX], dirs[BUILDID_PATH_MAX];
	struct objcopy *k;
	const char *p, *e;
	int r, i, seen_other = 0, seen_bad = 0;

	if (buildid__rooted(c->opts.sysroot, obj->path, buf, sizeof(buf)) == 0) {
		r = objfile__try(buf, obj->build_id, obj->build_id_len, &obj->ef, &obj->verified);
		seen_other |= r == -1;
		seen_bad |= r == -2;
		if (r == 1)
			goto found;
	}
	snprintf(dirs, sizeof(dirs), "%s", c->opts.debug_dirs ? c->opts.debug_dirs : "/usr/lib/debug");
	for (p = dirs, i = 0; obj->build_id_len >= 2 && *p && i < 16; i++, p = *e ? e + 1 : e) {
		char root[BUILDID_PATH_MAX];

		e = strchr(p, ':');
		if (!e)
			e = p + strlen(p);
		if (snprintf(root, sizeof(root), "%s%.*s", c->opts.sysroot ? c->opts.sysroot : "",
			     (int)(e - p), p) >= (int)sizeof(root) ||
		    buildid__path(root, obj->build_id, obj->build_id_len, "", buf, sizeof(buf)))
			continue;
		r = objfile__try(buf, obj->build_id, obj->build_id_len, &obj->ef, &obj->verified);
		if (r == 1)
			goto found;
	}
	obj->status = seen_other ? OBJFILE_MISMATCH : seen_bad ? OBJFILE_BAD : OBJFILE_MISSING;
	k = obj->build_id_len ? objcache__copy(c, obj->build_id, obj->build_id_len) : NULL;
	if (k && snprintf(buf, sizeof(buf), "%s", k->path) < (int)sizeof(buf) &&
	    objfile__try(buf, obj->build_id, obj->build_id_len, &obj->ef, &obj->verified) == 1) {
		obj->file_status = obj->status;
		obj->from_copy = 1;
		obj->copy_names = k->names;
		obj->copy_names_len = k->names_len;
		goto found;
	}
	goto debug;
found:
	obj->status = OBJFILE_OK;
	obj->found = strdup(buf);
	if (!obj->found)
		return -ENOMEM;
debug:
	r = buildid__find_debug(&c->opts, obj->path, obj->ef, obj->build_id, obj->build_id_len, buf,
				sizeof(buf));
	if (r > 0) {
		obj->debug_how = r;
		obj->debug = strdup(buf);
		if (!obj->debug)
			return -ENOMEM;
	}
	return 0;
}

/* The object for (path, build id). */
struct objfile *objcache__get(struct objcache *c, const char *path, const uint8_t *id, size_t n)
{
	struct objfile *obj;
	size_t len, dl = strlen(OBJFILE_DELETED);
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i, b;

	if (!c || !path || !path[0])
		return NULL;
	if (n > BUILDID_MAX)
		n = BUILDID_MAX;
	len = strlen(path);
	if (len > dl && strcmp(path + len - dl, OBJFILE_DELETED) == 0)
		len -= dl;
	for (i = 0; i < len; i++)
		h = (h ^ (uint8_t)path[i]) * 0x100000001b3ull;
	for (i = 0; i < n; i++)
		h = (h ^ id[i]) * 0x100000001b3ull;
	b = (size_t)(h % OBJCACHE_BUCKETS);
	for (obj = c->bucket[b]; obj; obj = obj->next)
		if (obj->build_id_len == n && memcmp(obj->build_id, id, n) == 0 &&
		    strlen(obj->path) == len && memcmp(obj->path, path, len) == 0)
			return obj;
	obj = calloc(1, sizeof(*obj));
	if (!obj || !(obj->path = strndup(path, len))) {
		free(obj);
		return NULL;
	}
	if (n)
		memcpy(obj->build_id, id, n);
	obj->build_id_len = (uint32_t)n;
	if (objfile__resolve(c, obj) != 0) {
		objfile__delete(obj);
		return NULL;
	}
	obj->next = c->bucket[b];
	c->bucket[b] = obj;
	return obj;
}

/* Add an in-memory image; see objfile.h. */
int objcache__add_image(struct objcache *c, const char *path, const uint8_t *id, size_t n,
			const uint8_t *data, size_t len)
{
	struct objfile *obj;
	uint8_t fid[BUILDID_MAX];
	int flen;

	if (!c || !path || !path[0] || (len && !data))
		return -EINVAL;
	if (n > BUILDID_MAX)
		n = BUILDID_MAX;
	obj = calloc(1, sizeof(*obj));
	if (!obj || !(obj->path = strdup(path))) {
		free(obj);
		return -ENOMEM;
	}
	/* No build id may come as (NULL, 0): memcpy from NULL is undefined even
	 * for 0 bytes (found by tests/fuzz/fuzz_elf.c, UBSan). */
	if (n)
		memcpy(obj->build_id, id, n);
	obj->build_id_len = (uint32_t)n;
	switch (elf_file__open_mem(data, len, path, &obj->ef)) {
	case 0:
		flen = elf_file__build_id(obj->ef, fid, sizeof(fid));
		obj->verified = n && flen > 0 && (size_t)flen == n && !memcmp(fid, id, n);
		obj->status = !n || obj->verified ? OBJFILE_OK : OBJFILE_MISMATCH;
		break;
	case -ENOMEM:
		objfile__delete(obj);
		return -ENOMEM;
	default:
		obj->status = OBJFILE_BAD;
		break;
	}
	if (obj->status != OBJFILE_OK) {
		elf_file__delete(obj->ef);
		obj->ef = NULL;
	}
	obj->next = c->images;
	c->images = obj;
	return 0;
}

/* Take over a copy carried by the capture; see objfile.h. */
int objcache__add_copy(struct objcache *c, const uint8_t *id, size_t n, struct elfcopy *copy)
{
	struct objcopy *k;

	if (!c || !id || !n || n > BUILDID_MAX || !copy)
		return -EINVAL;
	for (k = c->copies; k; k = k->next)
		if (k->n == n && !memcmp(k->id, id, n)) {
			elfcopy__exit(copy);
			return 0;
		}
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	memcpy(k->id, id, n);
	k->n = n;
	k->ec = *copy;
	k->names = copy->names;
	k->names_len = copy->names_len;
	k->ec.names = NULL;
	k->ec.names_len = 0;
	memset(copy, 0, sizeof(*copy));
	k->fd = -1;
	k->next = c->copies;
	c->copies = k;
	return 0;
}

/* The in-memory image for (path, build id); see objfile.h. */
struct objfile *objcache__image(struct objcache *c, const char *path, const uint8_t *id, size_t n)
{
	struct objfile *o;

	if (!n || !id)
		return NULL;
	for (o = c ? c->images : NULL; o; o = o->next)
		if (o->build_id_len == n && !memcmp(o->build_id, id, n) && !strcmp(o->path, path))
			return o;
	return NULL;
}

/* Walk every object. */
int objcache__foreach(struct objcache *c, int (*cb)(struct objfile *obj, void *arg), void *arg)
{
	size_t i;

	for (i = 0; c && i < OBJCACHE_BUCKETS; i++)
		for (struct objfile *o = c->bucket[i]; o; o = o->next) {
			int r = cb(o, arg);

			if (r)
				return r;
		}
	return 0;
}

/* Open the separate debug file. */
int objfile__open_debug(const struct objfile *obj, struct elf_file **out)
{
	if (!obj || !obj->debug)
		return -ENOENT;
	return elf_file__open(obj->debug, out);
}
