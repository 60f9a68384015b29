/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cache.h -- the recorder's cache directory: what it need not work out
 * again at each recording (the core kernel's kallsyms lines for this boot,
 * ksyms_cache.h; the EMBED record of a file's build, embed.h).  A cache only
 * saves work: every entry is what the recorder would have made itself, a
 * missing or doubtful one is made again, and a failure to write one costs
 * nothing but the saving.
 *
 * Trust: the directory and its subdirectories are this user's with mode
 * 0700; an entry is used only when it is a regular file of this user that
 * no one else may write (opened without following a symbolic link), and is
 * written whole under a temporary name, then renamed, mode 0600.
 */
#ifndef LJSNAP_DAEMON_CACHE_H
#define LJSNAP_DAEMON_CACHE_H

#include <stddef.h>
#include <sys/uio.h>

/* The directory: $LJSNAP_CACHE_DIR when set (empty: no cache), else
 * /run/ljsnap (a tmpfs on Debian, emptied at every boot).  NULL: none. */
const char *cache__dir(void);

/* Create dir (mode 0700) unless it is there; 0 when it is a directory of
 * this user that no one else may write into, else -EPERM or -errno. */
int cache__mkdir(const char *dir);

/* The entry at path, whole, in a malloc'ed NUL-terminated *buf (*len bytes,
 * at most max).  0; -ENOENT without one; -ESTALE for one not to trust (see
 * above) or over max; -ENOMEM. */
int cache__read(const char *path, size_t max, char **buf, size_t *len);

/* Write the entry name in dir (made with cache__mkdir) from the n buffers of
 * iov, whole or not at all.  0 or -errno. */
int cache__write(const char *dir, const char *name, const struct iovec *iov, int n);

#endif
