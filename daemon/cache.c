/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cache.c -- the recorder's cache directory; see cache.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/cache.h"

/* See cache.h. */
const char *cache__dir(void)
{
	const char *d = getenv("LJSNAP_CACHE_DIR");

	if (d)
		return *d ? d : NULL;
	return "/run/ljsnap";
}

/* See cache.h. */
int cache__mkdir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return -EPERM;
	return 0;
}

/* See cache.h. */
int cache__read(const char *path, size_t max, char **bufp, size_t *len)
{
	size_t n = 0, sz;
	struct stat st;
	char *b = NULL;
	ssize_t got;
	int fd, err = -ESTALE;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -ESTALE;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size < 0 || (uint64_t)st.st_size > max)
		goto out;
	sz = (size_t)st.st_size;
	err = -ENOMEM;
	if (!(b = malloc(sz + 1)))
		goto out;
	err = -ESTALE;
	while (n < sz) {
		got = read(fd, b + n, sz - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			goto out;
		n += (size_t)got;
	}
	b[n] = 0;
	*bufp = b;
	*len = n;
	b = NULL;
	err = 0;
out:
	close(fd);
	free(b);
	return err;
}

/* See cache.h. */
int cache__write(const char *dir, const char *name, const struct iovec *iov, int n)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	int fd, err = 0, i;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if ((fd = mkstemp(tmp)) < 0)	/* mode 0600 */
		return -errno;
	for (i = 0; i < n && !err; i++) {
		const char *p = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		while (left && !err) {
			ssize_t w = write(fd, p, left);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				err = w < 0 ? -errno : -EIO;
			else
				p += w, left -= (size_t)w;
		}
	}
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}
