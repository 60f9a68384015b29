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
#include <sys/uio.h>
#include <unistd.h>

#include "daemon/cache.h"
#include "daemon/ksyms_cache.h"

#define KC_MAGIC	"ljsnap-kallsyms 1 "
#define KC_FILE		"kallsyms"
#define KC_MAX		(256u << 20)	/* a larger copy is not read */
#define KC_PREFIX	4096		/* live bytes compared with the copy */
#define KC_BOOT_ID	"/proc/sys/kernel/random/boot_id"

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
	char id[37], head[128], *body = NULL, *w;
	int err, tagged, hn;
	struct iovec iov[2];
	size_t nlen, blen;

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
	hn = snprintf(head, sizeof(head), KC_MAGIC "%s %" PRIx64 " %" PRIx64 " %zu\n", id, lo, hi,
		      blen);
	iov[0] = (struct iovec){ head, (size_t)hn };
	iov[1] = (struct iovec){ body, blen };
	if ((err = cache__mkdir(dir)) == 0)
		err = cache__write(dir, KC_FILE, iov, 2);
out:
	free(body);
	return err;
}
/* See ksyms_cache.h. */
int ksyms_cache__read(const char *dir, const char *kallsyms, char **bufp, size_t *len,
		      uint64_t *lo, uint64_t *hi)
{
	char path[PATH_MAX], id[37], fid[37], live[KC_PREFIX], *b = NULL, *nl;
	unsigned long long l, h;
	size_t blen, hlen, sz;
	int err, used = 0;
	ssize_t got;

	if (snprintf(path, sizeof(path), "%s/" KC_FILE, dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if ((err = cache__read(path, KC_MAX, &b, &sz)) != 0)
		return err;
	err = -ESTALE;
	nl = memchr(b, '\n', sz < 160 ? sz : 160);
	if (!nl || strncmp(b, KC_MAGIC, strlen(KC_MAGIC)))
		goto out;
	*nl = 0;
	if (sscanf(b + strlen(KC_MAGIC), "%36s %llx %llx %zu%n", fid, &l, &h, &blen, &used) != 4 ||
	    b + strlen(KC_MAGIC) + used != nl || h <= l)
		goto out;
	hlen = (size_t)(nl + 1 - b);
	if (blen != sz - hlen || boot_id(id) || strcmp(id, fid))
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
	free(b);
	return err;
}
