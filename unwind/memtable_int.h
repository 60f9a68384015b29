/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memtable_int.h -- the memory table's internals, shared by memtable.c
 * (adding, the index, lookups) and memtable_expire.c (dropping entries no
 * later read can use).  Not for users of the table: see memtable.h.
 */
#ifndef LJSNAP_MEMTABLE_INT_H
#define LJSNAP_MEMTABLE_INT_H

#include "symtab/intmap.h"
#include "unwind/memtable.h"

#define MT_PENDING_MAX	64		/* unsorted tail merged beyond this, */
#define MT_QUIET_READS	64		/* or after this many lookups without an add */
#define MT_MAX_ENTS	(UINT32_MAX - 1)
#define MT_MEMO		4096		/* lookups remembered across samples (a power of 2) */
#define MT_MEMO_K	6		/* ranges a remembered lookup may overlap */
#define MT_MEMO_NEW	128		/* entries added since a memo that it is checked against */
#define MT_SHRINK_SLACK	64		/* a pid's index keeps this much room when it shrinks */

struct mt_ent {
	struct memtable_entry e;
	uint64_t end;			/* addr + len */
};

/* One range (addr, end) of a pid: its versions are idx[start .. start+n). */
struct mt_run {
	uint64_t addr, end;
	uint64_t maxend;		/* max end over this run and every run before it */
	uint32_t start, n;
	uint32_t overlap;		/* some versions' windows overlap: scan them all */
};

struct mt_pid {
	uint32_t pid;
	uint32_t *idx;			/* [0, nsorted) sorted, then [nsorted, n) unsorted */
	uint64_t *first;		/* first_ns of idx[i], i < nsorted (binary searches) */
	size_t n, nsorted, cap;
	struct mt_run *runs;		/* runs of the sorted prefix, by addr */
	size_t nruns, runcap;
	uint64_t runs_gen;		/* +1 each time the runs are cut again */
	uint32_t quiet;			/* lookups since the last add */
	int dropped;			/* memtable__drop_pid: no read of it follows */
};

/*
 * A read that overlaps at most MT_MEMO_K ranges of its pid, none of them
 * with a version in the unsorted tail: the ranges a lookup considers are
 * then the same at every time.  They are remembered (as runs, in the order
 * look__pass offers them), so that the next lookup of the read ranks just
 * their versions at its own time: the same steps, without the search
 * through every run of the pid.  Valid while the runs are the same ones
 * (runs_gen) and no entry added since (entries are numbered in insertion
 * order, from nents on) overlaps the read.  A lookup at a time inside the
 * span of the last outcome (memtable.c, run__span) does not rank them again.
 */
struct mt_memo {
	uint64_t addr, len;
	int filled;			/* 0: empty */
	uint32_t pid;
	uint32_t n;			/* runs in run */
	struct mt_pid *p;		/* the pid's entry (they never move) */
	uint32_t run[MT_MEMO_K];	/* indexes into the pid's runs */
	uint32_t pos[MT_MEMO_K];	/* where each run's last search ended (run__best) */
	uint64_t runs_gen;		/* the pid's runs_gen they index */
	size_t nents;			/* the table's entries when last known valid */
	/* The last outcome and what it was found from: each run's answer (an
	 * entry index, UINT32_MAX for none) and its rank.  The same answers
	 * of the same ranks give the same outcome (the tie-break keys of a
	 * rank are the entry's own numbers). */
	int have_out;
	uint32_t ans[MT_MEMO_K];
	uint8_t rank[MT_MEMO_K];
	uint32_t out;			/* the entry that answered, or UINT32_MAX */
	/* Times at which every run answers as it did for out (run__span),
	 * with the slack they were found with. */
	uint64_t span_lo, span_hi, span_slack;
};

struct memtable {
	struct mt_ent *ents;
	size_t n, cap;
	struct intmap pids;		/* pid -> struct mt_pid * */
	uint64_t bytes;
	uint32_t *tmp;			/* merge buffer */
	size_t tmpcap;
	uint64_t slack_ns;		/* see memtable__set_slack */
	struct mt_memo *memo;		/* MT_MEMO slots, allocated by the first lookup */
};

/* Merge the unsorted tail of p into its sorted prefix and recut the runs
 * (memtable.c).  0 or -ENOMEM (the tail is then scanned linearly). */
int mt_pid__merge(struct memtable *t, struct mt_pid *p);

/* Cut the sorted index of p (all of it) into runs.  0 or -ENOMEM. */
int mt_pid__runs(struct memtable *t, struct mt_pid *p);

#endif /* LJSNAP_MEMTABLE_INT_H */
