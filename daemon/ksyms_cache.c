/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ksyms_cache.c -- the per-boot copy of the core kernel's kallsyms lines;
 * see ksyms_cache.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/ksyms_cache.h"

#define KC_MAGIC	"ljsnap-kallsyms 1 "
#define KC_FILE		"kallsyms"
#define KC_MAX		(256u << 20)	/* a larger copy is not read */
#define KC_PREFIX	4096		/* live bytes compared with the copy */
#define KC_BOOT_ID	"/proc/sys/kernel/random/boot_id"

/* See ksyms_cache.h. */
const char *ksyms_cache__dir(void)
{
	const char *d = getenv("LJSNAP_CACHE_DIR");

	if (d)
		return *d ? d : NULL;
	return "/run/ljsnap";
}

/* Read up to cap bytes of path with one read (a /proc file gives whole
 * lines); the count or -errno. */
static ssize_t read_some(const char *path, char *b, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (fd < 0)
		return -errno;
	do
		got = read(fd, b, cap);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		got = -errno;
	close(fd);
	return got;
}

/* The running kernel's boot id (36 characters) in id[37]; 0 or -errno. */
static int boot_id(char id[37])
{
	ssize_t got = read_some(KC_BOOT_ID, id, 36);

	if (got < 0)
		return (int)got;
	if (got != 36)
		return -ENODATA;
	id[36] = 0;
	return 0;
}

/* One kallsyms line "ADDR T name[\t[module]]" from p to e (its '\n' or the
 * end): its address, its name (*name, *nlen) and whether a module's (or a
 * BPF program's, a trampoline's: anything tagged "\t[").  0 for a line
 * that does not parse. */
static int kline_parse(const char *p, const char *e, uint64_t *addr, const char **name,
		       size_t *nlen, int *tagged)
{
	const char *q = p, *t;
	uint64_t a = 0;

	for (; q < e && q - p < 16; q++) {
		int c = (unsigned char)*q;

		if (c >= '0' && c <= '9')
			a = a << 4 | (uint64_t)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			a = a << 4 | (uint64_t)((c | 0x20) - 'a' + 10);
		else
			break;
	}
	if (q == p || e - q < 4 || q[0] != ' ' || q[2] != ' ')
		return 0;
	*name = q + 3;
	t = memchr(*name, '\t', (size_t)(e - *name));
	*nlen = (size_t)((t ? t : e) - *name);
	*tagged = t && t + 1 < e && t[1] == '[';
	*addr = a;
	return *nlen > 0;
}

static int is_name(const char *name, size_t nlen, const char *want)
{
	return nlen == strlen(want) && !memcmp(name, want, nlen);
}

/* The end of the line at p (its '\n', or end). */
static const char *line_end(const char *p, const char *end)
{
	const char *e = memchr(p, '\n', (size_t)(end - p));

	return e ? e : end;
}

/* See ksyms_cache.h. */
int ksyms_cache__write(const char *dir, const char *buf, size_t len)
{
	const char *end = buf + len, *p, *e, *name;
	uint64_t a, lo = UINT64_MAX, hi = 0, nonzero = 0;
	char id[37], path[PATH_MAX], tmp[PATH_MAX], head[128];
	char *body = NULL, *w;
	int fd = -1, err, tagged, hn;
	size_t nlen, blen;
	struct stat st;

	if ((err = boot_id(id)) != 0)
		return err;
	/* the core kernel's text: _stext (or _text) .. _etext */
	for (p = buf; p < end; p = e + 1) {
		e = line_end(p, end);
		if (!kline_parse(p, e, &a, &name, &nlen, &tagged) || tagged)
			continue;
		nonzero |= a;
		if ((is_name(name, nlen, "_stext") || is_name(name, nlen, "_text")) && a < lo)
			lo = a;
		if (is_name(name, nlen, "_etext"))
			hi = a;
	}
	if (!nonzero)
		return -EPERM;
	if (lo == UINT64_MAX || hi <= lo)
		return -ENODATA;
	if (!(body = malloc(len + 1)))
		return -ENOMEM;
	/* the core lines; nothing else in [lo, hi] */
	for (p = buf, w = body; p < end; p = e + 1) {
		e = line_end(p, end);
		if (!kline_parse(p, e, &a, &name, &nlen, &tagged))
			continue;
		if (tagged && a >= lo && a <= hi) {
			err = -ERANGE;
			goto out;
		}
		if (!tagged) {
			memcpy(w, p, (size_t)(e - p));
			w += e - p;
			*w++ = '\n';
		}
	}
	blen = (size_t)(w - body);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		goto out;
	}
	/* a directory of ours no one else can write into */
	if (lstat(dir, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		err = -EPERM;
		goto out;
	}
	if (snprintf(path, sizeof(path), "%s/" KC_FILE, dir) >= (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s/" KC_FILE ".XXXXXX", dir) >= (int)sizeof(tmp)) {
		err = -ENAMETOOLONG;
		goto out;
	}
	hn = snprintf(head, sizeof(head), KC_MAGIC "%s %" PRIx64 " %" PRIx64 " %zu\n", id, lo, hi,
		      blen);
	if ((fd = mkstemp(tmp)) < 0) {	/* mode 0600 */
		err = -errno;
		goto out;
	}
	errno = 0;
	if (write(fd, head, (size_t)hn) != hn || write(fd, body, blen) != (ssize_t)blen) {
		err = errno ? -errno : -EIO;
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path)) {
		err = -errno;
		unlink(tmp);
		goto out;
	}
	err = 0;
out:
	if (fd >= 0)
		close(fd);
	free(body);
	return err;
}

/* Read the whole regular file fd (st) into a malloc'ed, NUL-terminated *b. */
static int read_file(int fd, const struct stat *st, char **b)
{
	size_t n = 0, sz = (size_t)st->st_size;
	char *buf = malloc(sz + 1);
	ssize_t got;

	if (!buf)
		return -ENOMEM;
	while (n < sz) {
		got = read(fd, buf + n, sz - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			free(buf);
			return got < 0 ? -errno : -ESTALE;
		}
		n += (size_t)got;
	}
	buf[n] = 0;
	*b = buf;
	return 0;
}

/* See ksyms_cache.h. */
int ksyms_cache__read(const char *dir, const char *kallsyms, char **bufp, size_t *len,
		      uint64_t *lo, uint64_t *hi)
{
	char path[PATH_MAX], id[37], fid[37], live[KC_PREFIX], *b = NULL, *nl;
	unsigned long long l, h;
	size_t blen, hlen;
	struct stat st;
	int fd, err, used = 0;
	ssize_t got;

	if (snprintf(path, sizeof(path), "%s/" KC_FILE, dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -ESTALE;
	err = -ESTALE;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size < (off_t)sizeof(KC_MAGIC) || st.st_size > KC_MAX)
		goto out;
	if ((err = read_file(fd, &st, &b)) != 0)
		goto out;
	err = -ESTALE;
	nl = memchr(b, '\n', (size_t)st.st_size < 160 ? (size_t)st.st_size : 160);
	if (!nl || strncmp(b, KC_MAGIC, strlen(KC_MAGIC)))
		goto out;
	*nl = 0;
	if (sscanf(b + strlen(KC_MAGIC), "%36s %llx %llx %zu%n", fid, &l, &h, &blen, &used) != 4 ||
	    b + strlen(KC_MAGIC) + used != nl || h <= l)
		goto out;
	hlen = (size_t)(nl + 1 - b);
	if (blen != (size_t)st.st_size - hlen || boot_id(id) || strcmp(id, fid))
		goto out;
	/* the same first lines as the live file now */
	got = read_some(kallsyms ? kallsyms : "/proc/kallsyms", live, sizeof(live));
	if (got <= 0 || (size_t)got > blen || memcmp(live, nl + 1, (size_t)got))
		goto out;
	memmove(b, nl + 1, blen);
	b[blen] = 0;
	*bufp = b;
	*len = blen;
	*lo = l;
	*hi = h;
	b = NULL;
	err = 0;
out:
	close(fd);
	free(b);
	return err;
}
