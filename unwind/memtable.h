/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memtable.h -- a time-aware table of harvested target memory.
 *
 * Each entry holds bytes read from one process at one address, with the time
 * window over which they are known to have been valid and a generation that
 * tells apart successive contents of that memory (a GCproto freed by the GC
 * and a new one allocated at the same address).  `record` writes MEMORY
 * records (formats/capture/harvest.c); `report` loads them into a table and reads
 * through a memory source bound to one pid and one sample time.
 *
 * Entries with the same pid, addr and len are versions of one range.  A
 * read of [addr, addr+len) of a pid at time t is answered like this:
 *   1. each range overlapping the read has an answer at time t: the version
 *      whose [first_ns, last_ns] contains t (several: highest gen, then
 *      latest first_ns); else the latest version with first_ns <= t (ties:
 *      highest gen); else, only if the table has a slack (default 0), the
 *      earliest version first seen within slack after t; else none;
 *   2. answers rank in that order (containing t, then by first_ns);
 *   3. the best-ranked answer whose range covers the whole read is copied
 *      out, unless the answer of another overlapping range ranks above it
 *      and holds different bytes within the read: then other content was
 *      there by time t (a proto freed and a new one allocated at the same
 *      address) and the read fails.
 * A read never assembles bytes from two entries and never returns partial
 * data.  first_ns should be the time of the first sample the bytes were
 * read for (or, for bytes that changed after it, when they were seen).
 *
 * A reader that goes through samples in time order can keep the table to
 * what is still current with memtable__expire.
 *
 * A pure library: no syscalls, no globals.  A lookup costs O(log n) plus
 * the number of distinct ranges overlapping the read: versions of one range
 * (same addr and len) are found by binary search on time.  A read that
 * overlaps at most six ranges is remembered by the table until an entry
 * added later overlaps it (or the index is rebuilt): its next lookup only
 * ranks the versions of those ranges, starting where its last search ended.
 */
#ifndef LJSNAP_MEMTABLE_H
#define LJSNAP_MEMTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/memsrc.h"

#define MEMTABLE_MAX_LEN	(64u << 20)	/* largest entry accepted */

struct memtable_entry {
	uint32_t pid;
	uint32_t len;
	uint64_t addr;
	const uint8_t *data;
	uint64_t first_ns, last_ns;	/* validity window, first_ns <= last_ns */
	uint64_t gen;
};

struct memtable;

/* Allocate / free a table (NULL is a no-op for __delete). */
struct memtable *memtable__new(void);
void memtable__delete(struct memtable *t);

/* Add an entry, copying e->data.  Returns the entry's index (>= 0, stable:
 * entries are numbered in insertion order) or -EINVAL (len 0 or over
 * MEMTABLE_MAX_LEN, address range wraps, first_ns > last_ns, no data),
 * -ENOMEM, -E2BIG (table full). */
long memtable__add(struct memtable *t, const struct memtable_entry *e);

/* 1 if memtable__add would accept e (given its data), else 0. */
int memtable__valid(const struct memtable_entry *e);

/* Same, but take ownership of data (a malloc'ed buffer of e->len bytes,
 * freed by the table).  On error the caller still owns data. */
long memtable__add_owned(struct memtable *t, const struct memtable_entry *e, uint8_t *data);

/* Number of entries, and bytes of entry data held. */
size_t memtable__count(const struct memtable *t);
uint64_t memtable__bytes(const struct memtable *t);

/* Entry i in insertion order, or NULL.  The pointer stays valid until the
 * next add. */
const struct memtable_entry *memtable__entry(const struct memtable *t, size_t i);

/* The entry that answers a read of [addr, addr+len) of pid at time_ns (the
 * rules above), or NULL.  Valid until the next add.  The table is logically
 * const; the call may reorganize its index (not thread-safe). */
const struct memtable_entry *memtable__lookup(struct memtable *t, uint32_t pid, uint64_t addr,
					      uint64_t len, uint64_t time_ns);

/* Drop what no read at time_ns or later can use, and free its bytes: every
 * entry of a pid given to memtable__drop_pid, and each version of a range
 * whose window ended before time_ns when another version of that range was
 * first seen at or before time_ns and after it (a later first_ns, or the
 * same and a higher gen): from time_ns on that one ranks above it at every
 * time (rule 1 above).  Reads at time_ns or later get the same answers as
 * before.  Entries are renumbered (insertion order kept): indexes from
 * __add and pointers from __lookup and __entry are stale after a call that
 * dropped anything.  Returns the entries dropped, or -ENOMEM (nothing
 * dropped).  memtable_expire.c. */
long memtable__expire(struct memtable *t, uint64_t time_ns);

/* No read of pid follows: every later __expire drops its entries, those
 * added after this call too.  0 or -EINVAL. */
int memtable__drop_pid(struct memtable *t, uint32_t pid);

/* Let entries first seen up to slack_ns after a read's time answer it when
 * no entry was seen at or before that time.  The recorder walks samples in
 * ring-buffer order, which can be slightly out of time order across CPUs,
 * so a sample may use bytes first recorded for a slightly later one. */
void memtable__set_slack(struct memtable *t, uint64_t slack_ns);

/* Copy of a lookup: 0, or -EFAULT when no entry answers. */
int memtable__read(struct memtable *t, uint32_t pid, uint64_t addr, void *buf, size_t len,
		   uint64_t time_ns);

/* A memory source over the table for one pid at one sample time.  Bind with
 * memtable__memsrc and pass &src->ms to the walker; src must outlive the
 * walk.  The table may grow between walks, not during one. */
#define MEMTABLE_SRC_CACHE 32		/* answers remembered per source */
struct memtable_src {
	struct memsrc ms;
	struct memtable *t;
	uint32_t pid;
	uint64_t time_ns;
	uint64_t hits, misses;		/* reads answered / refused */
	struct {			/* recent (addr, len) -> answer (or none) */
		uint64_t addr;
		size_t len;		/* 0 = empty slot */
		const struct memtable_entry *e;
	} cache[MEMTABLE_SRC_CACHE];
};
void memtable__memsrc(struct memtable_src *src, struct memtable *t, uint32_t pid,
		      uint64_t time_ns, const struct memsrc *next);

#endif /* LJSNAP_MEMTABLE_H */
