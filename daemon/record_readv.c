/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record_readv.c -- the recorder's batched reads of target memory for the
 * harvest (harvest__prefetch, formats/capture/harvest.h): many ranges per
 * process_vm_readv, and ranges on one page in one remote iovec.
 */
#include <stdlib.h>
#include <sys/types.h>
#include <sys/uio.h>
#include "daemon/record.h"
#include "formats/capture/harvest.h"

/* The ranges of one batched read, in address order. */
struct rr_batch {
	pid_t pid;		/* the process read */
	struct harvest_range *r;
	uint32_t ord[HARVEST_PREFETCH_BATCH];	/* indexes into r, by address */
	size_t pos[HARVEST_PREFETCH_BATCH];	/* where each (by ord) starts in the copied stream */
	struct iovec local[2 * HARVEST_PREFETCH_BATCH], remote[HARVEST_PREFETCH_BATCH];
	uint8_t gap[LJS_PAGE_SIZE];		/* the bytes between merged ranges go here */
};

/* Order ranges by address (insertion sort: a batch is small and mostly in
 * the order the walk read them). */
static void rr_sort(struct rr_batch *b, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		uint32_t v = (uint32_t)i;

		for (j = i; j > 0 && b->r[b->ord[j - 1]].addr > b->r[v].addr; j--)
			b->ord[j] = b->ord[j - 1];
		b->ord[j] = v;
	}
}

/*
 * Read the ranges ord[from..n) in one process_vm_readv: a range that starts
 * on the page where the previous one ends joins its remote iovec (the bytes
 * between go to a scratch local iovec), since the kernel pins and locks per
 * remote iovec; that page is mapped, the previous range being on it.  Marks
 * the ranges copied whole; returns the index (in ord) where the next call
 * starts, after the remote iovec the kernel stopped in, or n.
 */
static size_t rr_call(struct rr_batch *b, size_t from, size_t n)
{
	size_t i, nl = 0, nr = 0, stream = 0;
	uint64_t end = 0;
	ssize_t got;

	for (i = from; i < n; i++) {
		const struct harvest_range *x = &b->r[b->ord[i]];

		if (nr && x->addr >= end && x->addr / LJS_PAGE_SIZE == (end - 1) / LJS_PAGE_SIZE) {
			size_t g = x->addr - end;

			if (g) {
				b->local[nl++] = (struct iovec){ b->gap, g };
				stream += g;
			}
			b->remote[nr - 1].iov_len += g + x->len;
		} else {
			b->remote[nr++] = (struct iovec){ (void *)(uintptr_t)x->addr, x->len };
		}
		b->pos[i] = stream;
		b->local[nl++] = (struct iovec){ x->buf, x->len };
		stream += x->len;
		end = x->addr + x->len;
	}
	got = process_vm_readv(b->pid, b->local, nl, b->remote, nr, 0);
	if (got < 0)
		return n;	/* gone, or nothing readable: the walk reads live */
	for (i = from; i < n && b->pos[i] + b->r[b->ord[i]].len <= (size_t)got; i++)
		b->r[b->ord[i]].ok = 1;
	if (i == n)
		return n;
	/* Skip what is left of the remote iovec it stopped in. */
	for (end = b->r[b->ord[i]].addr + b->r[b->ord[i]].len, i++; i < n; i++) {
		const struct harvest_range *x = &b->r[b->ord[i]];

		if (!(x->addr >= end && x->addr / LJS_PAGE_SIZE == (end - 1) / LJS_PAGE_SIZE))
			break;
		end = x->addr + x->len;
	}
	return i;
}

/* harvest_readv_fn over process_vm_readv (ctx: a struct rr_batch, pid
 * set): a batch in as few calls as its faults allow (one when every range
 * is readable). */
static void rr_batch__read(void *ctx, struct harvest_range *r, size_t n)
{
	struct rr_batch *b = ctx;
	size_t i = 0;

	b->r = r;
	if (n > HARVEST_PREFETCH_BATCH)
		n = HARVEST_PREFETCH_BATCH;
	rr_sort(b, n);
	while (i < n)
		i = rr_call(b, i, n);
}

/* harvest__prefetch for the current sample of pid, read through b. */
void rr_batch__prefetch(struct rr_batch *b, struct harvest *hv, pid_t pid)
{
	b->pid = pid;
	harvest__prefetch(hv, rr_batch__read, b);
}

/* A batch buffer (about 34 KiB), or NULL. */
struct rr_batch *rr_batch__new(void)
{
	return calloc(1, sizeof(struct rr_batch));
}

void rr_batch__delete(struct rr_batch *b)
{
	free(b);
}
