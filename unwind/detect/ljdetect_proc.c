/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljdetect_proc.c -- find LuaJIT in a live process through /proc/PID/maps.
 *
 * Each mapped file is opened through /proc/PID/map_files/START-END (works
 * for deleted files and other mount namespaces), else /proc/PID/root/PATH,
 * else PATH, and detected once: results are cached per (device, inode),
 * revalidated by size and mtime, so 60 nginx workers cost one parse.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "unwind/detect/livemem.h"
#include "unwind/detect/ljdetect.h"
#include "symtab/vec.h"

#define LJD_MAPS_MAX_LINES	(1u << 20)	/* /proc/PID/maps lines read */
#define LJD_CACHE_MAX		4096		/* files remembered before a reset */
#define LJD_NVM_TRACK		16		/* distinct LuaJIT files counted */

struct ljd_cache_ent {
	uint64_t dev, ino;
	int64_t size, mtime_ns;		/* -1 when the file could not be stat'ed */
	int err;			/* lj_detect__elf result */
	uint8_t build_id[LJ_DETECT_BUILD_ID_MAX];
	int build_id_len;
	struct lj_detect *det;		/* only for LuaJIT files */
};

struct lj_detect_cache {
	struct ljd_cache_ent *v;
	size_t n, cap;
};

/* -- Cache --------------------------------------------------------------- */

/* An empty cache. */
struct lj_detect_cache *lj_detect_cache__new(void)
{
	return calloc(1, sizeof(struct lj_detect_cache));
}

/* Forget every entry (keeps the array). */
static void lj_detect_cache__clear(struct lj_detect_cache *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->v[i].det);
	c->n = 0;
}

/* Free the cache and every detection in it. */
void lj_detect_cache__delete(struct lj_detect_cache *cache)
{
	if (!cache)
		return;
	lj_detect_cache__clear(cache);
	free(cache->v);
	free(cache);
}

/* Cached entry for (dev, ino) still valid for (size, mtime), or NULL. */
static struct ljd_cache_ent *ljd_cache__find(struct lj_detect_cache *c, uint64_t dev, uint64_t ino,
					     int64_t size, int64_t mtime_ns)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		struct ljd_cache_ent *e = &c->v[i];

		if (e->dev != dev || e->ino != ino)
			continue;
		if (size >= 0 && e->size >= 0 && (e->size != size || e->mtime_ns != mtime_ns)) {
			/* Same inode, new contents: drop the stale entry. */
			free(e->det);
			*e = c->v[--c->n];
			return NULL;
		}
		return e;
	}
	return NULL;
}

/* Detect one mapped file and add it to the cache. */
static struct ljd_cache_ent *ljd_cache__add(struct lj_detect_cache *c, int pid,
					    const struct lj_mapping *m)
{
	char cand[3][4096 + 64];
	struct lj_detect *det;
	struct ljd_cache_ent *e;
	struct stat st;
	int64_t size = -1, mtime = -1;
	int i, n = 0, err = -ENOENT;

	snprintf(cand[n++], sizeof(cand[0]), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid,
		 m->start, m->end);
	if (m->path && m->path[0] == '/') {
		snprintf(cand[n++], sizeof(cand[0]), "/proc/%d/root%s", pid, m->path);
		snprintf(cand[n++], sizeof(cand[0]), "%s", m->path);
	}
	for (i = 0; i < n; i++) {
		if (stat(cand[i], &st) == 0 && (uint64_t)st.st_ino == m->inode) {
			size = st.st_size;
			mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
			break;
		}
	}
	e = ljd_cache__find(c, m->dev, m->inode, size, mtime);
	if (e)
		return e;
	det = malloc(sizeof(*det));
	if (!det)
		return NULL;
	for (i = 0; i < n; i++) {
		err = lj_detect__elf(cand[i], det);
		/* Same file, other path: only a failure to open is worth a retry. */
		if (err != -ENOENT && err != -EACCES && err != -EPERM && err != -ELOOP)
			break;
	}
	if (c->n >= LJD_CACHE_MAX)
		lj_detect_cache__clear(c);
	if (VEC_GROW(c->v, &c->cap, c->n + 1) != 0) {
		free(det);
		return NULL;
	}
	e = &c->v[c->n++];
	memset(e, 0, sizeof(*e));
	e->dev = m->dev;
	e->ino = m->inode;
	e->size = size;
	e->mtime_ns = mtime;
	e->err = err;
	if (err == 0) {
		e->build_id_len = det->build_id_len;
		memcpy(e->build_id, det->build_id, sizeof(e->build_id));
	}
	if (err == 0 && det->is_luajit) {
		e->det = det;
		det = NULL;
	}
	free(det);
	return e;
}

/* -- /proc/PID/maps ------------------------------------------------------ */

/* Parse one maps line into m (path strdup'ed).  Returns 0, -EINVAL, -ENOMEM. */
static int ljd__parse_maps_line(char *line, struct lj_mapping *m)
{
	unsigned long long start, end, off, ino;
	unsigned maj, min;
	char perms[8];
	int pos = 0;
	char *path;
	size_t len;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &min,
		   &ino, &pos) < 7 || end < start || strlen(perms) < 4)
		return -EINVAL;
	m->start = start;
	m->end = end;
	m->offset = off;
	m->dev = makedev(maj, min);
	m->inode = ino;
	m->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	m->flags = perms[3] == 's' ? LJ_MAP_F_SHARED : 0;
	path = line + pos;
	len = strlen(path);
	while (len && (path[len - 1] == '\n' || path[len - 1] == ' '))
		path[--len] = 0;
	if (len >= 10 && strcmp(path + len - 10, " (deleted)") == 0) {
		m->flags |= LJ_MAP_F_DELETED;
		path[len - 10] = 0;
		len -= 10;
	}
	if (len) {
		m->path = strdup(path);
		if (!m->path)
			return -ENOMEM;
	}
	return 0;
}

/* Read every mapping of pid into pd->maps. */
static int ljd__read_maps(int pid, struct lj_proc_detect *pd)
{
	char fn[64], *line = NULL;
	size_t lcap = 0, cap = 0;
	unsigned nlines = 0;
	FILE *f;
	int err = 0;

	snprintf(fn, sizeof(fn), "/proc/%d/maps", pid);
	f = fopen(fn, "re");
	if (!f)
		return -errno;
	while (nlines++ < LJD_MAPS_MAX_LINES && getline(&line, &lcap, f) > 0) {
		struct lj_mapping m;

		if (ljd__parse_maps_line(line, &m) != 0)
			continue;
		if ((err = VEC_GROW(pd->maps, &cap, pd->nmaps + 1)) != 0) {
			free(m.path);
			goto out;
		}
		pd->maps[pd->nmaps++] = m;
	}
	if (ferror(f))
		err = -EIO;
out:
	free(line);
	fclose(f);
	return err;
}

/* One line of /proc/PID/maps, [l, eol), as an executable mapping: 1 when
 * it is one (x set), else 0; read as ljd__parse_maps_line reads it. */
static int ljd__xmap_line(const char *l, const char *eol, struct lj_xmap *x)
{
	char *e;

	x->start = strtoull(l, &e, 16);
	if (*e != '-')
		return 0;
	x->end = strtoull(e + 1, &e, 16);
	if (*e != ' ' || x->end < x->start || eol - e < 6 || e[3] != 'x')
		return 0;
	strtoull(e + 5, &e, 16);			/* offset */
	while (e < eol && *e == ' ')
		e++;
	while (e < eol && *e != ' ')
		e++;					/* device */
	x->inode = strtoull(e, &e, 10);
	while (e < eol && (*e == ' ' || *e == '\t'))
		e++;
	x->named = e < eol;
	return 1;
}

/* The executable mappings of pid from /proc/PID/maps alone; see ljdetect.h. */
int lj_detect__xmaps(int pid, struct lj_xmap **v, size_t *n)
{
	char fn[64], buf[65536];
	size_t cap = 0, have = 0;
	ssize_t got;
	int fd, err = 0;

	*v = NULL;
	*n = 0;
	snprintf(fn, sizeof(fn), "/proc/%d/maps", pid);
	fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((got = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		char *l = buf, *eol, *end = buf + have + got;

		*end = 0;
		while ((eol = memchr(l, '\n', end - l))) {
			struct lj_xmap x;

			if (ljd__xmap_line(l, eol, &x)) {
				if ((err = VEC_GROW(*v, &cap, *n + 1)) != 0)
					goto out;
				(*v)[(*n)++] = x;
			}
			l = eol + 1;
		}
		have = end - l;
		if (have == sizeof(buf) - 1)
			have = 0;	/* a line longer than the buffer: no path is */
		memmove(buf, l, have);
	}
	if (got < 0)
		err = -errno;
out:
	close(fd);
	if (err) {
		free(*v);
		*v = NULL;
		*n = 0;
	}
	return err;
}

/* -- Process ------------------------------------------------------------- */

/* Does executable mapping m hold the VM of det?  Sets the runtime range. */
static int ljd__vm_in_map(const struct lj_mapping *m, const struct lj_detect *det,
			  uint64_t *bias)
{
	uint64_t rt_lo;

	if (det->vm_src == LJ_DETECT_VM_NONE || !(m->prot & PROT_EXEC))
		return 0;
	if (det->vm_lo_off < m->offset || det->vm_lo_off - m->offset >= m->end - m->start)
		return 0;
	rt_lo = m->start + (det->vm_lo_off - m->offset);
	if (rt_lo + (det->vm_hi - det->vm_lo) > m->end)
		return 0;
	*bias = rt_lo - det->vm_lo;
	return 1;
}

/* Tarantool exports its main lua_State: follow it to g and calibrate the
 * global_State layout live (Tarantool's differs between minor versions). */
static void ljd__tarantool_g(int pid, struct lj_proc_detect *pd)
{
	const struct lj_layout *l = &pd->det.layout;
	struct livemem lm;
	struct memsrc ms;
	uint64_t L = 0, g = 0;
	uint32_t g32 = 0;
	int err;

	livemem__init(&ms, &lm, pid, NULL);
	if (memsrc__u64(&ms, pd->load_bias + pd->det.sym_tarantool_L, &L) != 0 || !L) {
		lj_detect__note(&pd->det, 0, "tarantool_L is not set yet: no live calibration");
		return;
	}
	err = l->ref_size == 8 ? memsrc__u64(&ms, L + l->l_glref, &g)
			       : memsrc__u32(&ms, L + l->l_glref, &g32);
	if (l->ref_size != 8)
		g = g32;
	if (err || lj_detect__calibrate_live(&pd->det, &ms, g, pd->vm_lo, pd->vm_hi) != 0)
		return;
	pd->layout = pd->det.layout;
	pd->g = g;
	lj_detect__note(&pd->det, 0, "g %#lx from tarantool_L %#lx", (unsigned long)g,
			(unsigned long)L);
}

/* Inspect a live process. */
int lj_detect__process(int pid, struct lj_detect_cache *cache, struct lj_proc_detect *out)
{
	struct lj_detect_cache *local = NULL;
	struct { uint64_t dev, ino; } seen[LJD_NVM_TRACK];
	struct ljd_cache_ent *e = NULL;
	size_t i;
	int err;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	if (pid <= 0)
		return -EINVAL;
	if (!cache) {
		cache = local = lj_detect_cache__new();
		if (!cache)
			return -ENOMEM;
	}
	err = ljd__read_maps(pid, out);
	if (err)
		goto out;
	for (i = 0; i < out->nmaps; i++) {
		struct lj_mapping *m = &out->maps[i];
		uint64_t bias;
		unsigned k;

		if (!m->inode || !m->path || m->path[0] != '/')
			continue;
		/* The lines of one file follow each other: stat'ed and looked up
		 * once (the entry stays valid until the next ljd_cache__add). */
		if (!e || e->dev != m->dev || e->ino != m->inode)
			e = ljd_cache__add(cache, pid, m);
		if (!e)
			continue;	/* ENOMEM: this mapping stays without build id */
		m->build_id_len = e->build_id_len;
		memcpy(m->build_id, e->build_id, sizeof(m->build_id));
		if (!e->det || !ljd__vm_in_map(m, e->det, &bias))
			continue;
		for (k = 0; k < out->nvm && k < LJD_NVM_TRACK; k++)
			if (seen[k].dev == e->dev && seen[k].ino == e->ino)
				break;
		if (k < out->nvm)
			continue;	/* the same file mapped twice */
		if (out->nvm < LJD_NVM_TRACK) {
			seen[out->nvm].dev = e->dev;
			seen[out->nvm].ino = e->ino;
		}
		out->nvm++;
		if (out->found)
			continue;
		out->found = 1;
		out->vm_map = i;
		out->load_bias = bias;
		out->det = *e->det;
		out->vm_lo = bias + e->det->vm_lo;
		/* The interpreter proper: lj_vm_ffi_call has its own CFI and is not
		 * a VM activation (its rdx is not BASE, its frame is rbp-based). */
		out->vm_hi = bias + (e->det->vm_ffi > e->det->vm_lo ? e->det->vm_ffi : e->det->vm_hi);
		out->vm_exit_ret = e->det->vm_exit_ret ? bias + e->det->vm_exit_ret : 0;
		out->layout = e->det->layout;
	}
	if (out->found && out->det.layout_ok && out->det.sym_tarantool_L)
		ljd__tarantool_g(pid, out);
out:
	lj_detect_cache__delete(local);
	if (err)
		lj_proc_detect__exit(out);
	return err;
}

/* Free the mapping list. */
void lj_proc_detect__exit(struct lj_proc_detect *pd)
{
	size_t i;

	if (!pd)
		return;
	for (i = 0; i < pd->nmaps; i++)
		free(pd->maps[i].path);
	free(pd->maps);
	pd->maps = NULL;
	pd->nmaps = 0;
}
