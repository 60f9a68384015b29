/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * livemem.h -- a memory source that reads a live process with
 * process_vm_readv (no ptrace, no stop).  Used while recording and by tests.
 */
#ifndef LJSNAP_LIVEMEM_H
#define LJSNAP_LIVEMEM_H

#include "unwind/memsrc.h"

struct livemem {
	int pid;
};

/* Set up ms to read process pid (lm must outlive ms); next may be NULL. */
void livemem__init(struct memsrc *ms, struct livemem *lm, int pid, const struct memsrc *next);

#endif /* LJSNAP_LIVEMEM_H */
