/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * livemem.c -- memsrc over process_vm_readv.
 *
 * All-or-nothing like every memsrc: a short read (the range crosses into an
 * unmapped page) fails with -EFAULT.  Needs the rights ptrace-read would
 * need (root, or CAP_SYS_PTRACE, or same user under Yama scope 0).
 */
#include <errno.h>
#include <sys/uio.h>

#include "unwind/detect/livemem.h"

#define LIVEMEM_MAX_READ	(16u << 20)	/* one read never asks for more */

/* memsrc read callback. */
static int livemem__read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	const struct livemem *lm = ms->ctx;
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (!lm || lm->pid <= 0 || len > LIVEMEM_MAX_READ || addr + len < addr)
		return -EFAULT;
	if (len == 0)
		return 0;
	n = process_vm_readv(lm->pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return errno == ESRCH ? -ESRCH : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* Set up a live-process source. */
void livemem__init(struct memsrc *ms, struct livemem *lm, int pid, const struct memsrc *next)
{
	lm->pid = pid;
	ms->read = livemem__read;
	ms->ctx = lm;
	ms->next = next;
}
