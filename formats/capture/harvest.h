/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * harvest.h -- keep the target memory the walker needs in the capture file.
 *
 * While recording, every LuaJIT sample is walked once with a memory source
 * chain: the sample's own windows, then this harvest cache, then the live
 * process (process_vm_readv).  A range the walk reads live is stored in the
 * cache and written as a MEMORY record the first time it is seen with that
 * content.  Every later use re-reads it live: identical bytes are served
 * from the cache and not written again; different bytes (a GCproto freed by
 * the GC and another allocated at the same address) become a new generation
 * with its own record, so report never confuses the two.
 *
 * Any byte counts, the GC's own header bytes included: a prototype whose
 * mark byte flipped is written again.  Treating such a range as unchanged
 * would keep only its first record, and report must then prefer an old
 * record over newer overlapping ones of objects that lived at that address
 * in between, which it cannot tell apart from a stale one.
 *
 * A record is valid from its sample's time until a newer record of the
 * same range, and report ranks overlapping ranges by that time.  So when a
 * range gets a record whose bytes disagree with an overlapping cached range
 * (the gct byte of a function read alone just after the GC freed it, next
 * to the whole header read at every sample), the overlapping range is
 * written again, unchanged, the next time a walk confirms it: otherwise the
 * lone stale byte would outrank the header for as long as nobody re-read it.
 */
#ifndef LJSNAP_HARVEST_H
#define LJSNAP_HARVEST_H

#include <stddef.h>
#include <stdint.h>
#include "unwind/memsrc.h"

struct snapfile_writer;
struct harvest;

struct harvest_stats {
	uint64_t reads;		/* reads that reached the harvest layer */
	uint64_t live_reads;	/* process_vm_readv calls */
	uint64_t live_faults;	/* live reads that failed */
	uint64_t stale_served;	/* live failed (process gone), cached bytes served */
	uint64_t records;	/* MEMORY records written */
	uint64_t bytes;		/* bytes in those records */
	uint64_t generations;	/* ranges whose content changed (new generation) */
	uint64_t evictions;	/* cache resets at the size cap */
	uint64_t reconfirmed;	/* unchanged ranges written again (see above) */
	uint64_t late_changes;	/* new generations dated from the read, not the sample */
	uint64_t prefetch_calls;	/* batched reads (harvest__prefetch) */
	uint64_t prefetched;	/* ranges validated by them */
};

/* One range of a batched read: the reader sets ok when all len bytes at
 * addr were copied to buf. */
struct harvest_range {
	uint64_t addr;
	void *buf;
	uint32_t len;
	int ok;
};
#define HARVEST_PREFETCH_BATCH	512	/* ranges per batched read (<= IOV_MAX) */

/* Read n ranges of the current process at once (process_vm_readv with
 * many iovecs, say). */
typedef void harvest_readv_fn(void *ctx, struct harvest_range *r, size_t n);

struct harvest *harvest__new(struct snapfile_writer *w, size_t max_bytes);
void harvest__delete(struct harvest *h);

/* Memory source for one sample of pid taken at sample_ns: harvest cache +
 * the live process, read through live (e.g. unwind/detect/livemem.h, which
 * must outlive the source); a range is read live once per sample.  now_ns is when the
 * live reads happen (the same clock).  A record is valid from its sample's
 * time, unless the old bytes of the range were seen after that sample was
 * taken (the recorder trails its samples): then the sample used those, and
 * the new bytes are valid from now_ns.  Valid until the next
 * harvest__source call. */
const struct memsrc *harvest__source(struct harvest *h, uint32_t pid, uint64_t sample_ns,
				     uint64_t now_ns, const struct memsrc *live);

/*
 * After harvest__source: the sample is one of a batch (a nonzero id, new for
 * each batch), samples walked one after the other, every one of them taken
 * before the batch's first read.  A range read live or prefetched for one
 * sample of the batch is then valid for the others: it was read after they
 * were all taken, as their own live read would be.  The hot ranges are
 * prefetched once per batch.  harvest__source ends the batch (0: none).
 */
void harvest__batch(struct harvest *h, uint64_t batch);

/*
 * After harvest__source: read every range the last 8 walks of this process
 * read (those of the last quarter second at most), in a few batched reads
 * (readv), and validate them at
 * this sample: a range the previous walk read as that walk's own live read
 * would (unchanged: served from the cache; changed: a new generation,
 * written); an older one only if unchanged (else a walk that needs it reads
 * it live).  The walk then reads live only what is new.  The bytes are read
 * at the same moment as the walk's own reads; a range the walk then does
 * not use was still true at the sample, so its record is never wrong, at
 * worst not needed.
 */
void harvest__prefetch(struct harvest *h, harvest_readv_fn *readv, void *ctx);

/* Forget a process (it exited or exec'd). */
void harvest__forget(struct harvest *h, uint32_t pid);

/* First write error met (sticky), or 0. */
int harvest__error(const struct harvest *h);

const struct harvest_stats *harvest__stats(const struct harvest *h);

#endif
