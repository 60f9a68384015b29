/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapfile_dedup.h -- format 3's stack references (docs/capture-format.md,
 * "Stack references").
 *
 * A thread's stacks change little from one sample to the next: the outer
 * frames of the user stack (its high addresses) and the bottom of the Lua
 * stack (its low addresses) stay.  In format 3 the writer stores such a
 * section as its changed bytes only, followed by a REF section: its addr is
 * the offset in the section of a range of want bytes that are the same as
 * at their address in the section of the same kind and aux of the thread's
 * previous sample in the chunk, and its aux the number of that sample among
 * the thread's samples in the chunk (1 for the first).  The reader puts the
 * bytes back, so that every reader of samples sees the sections as they were
 * captured.
 *
 * One struct serves the writer (it remembers copies of the sections) and
 * the reader (it remembers where the rebuilt sections are).  Both forget
 * everything at each chunk: a chunk is read without the ones before it.
 */
#ifndef LJSNAP_SNAPFILE_DEDUP_H
#define LJSNAP_SNAPFILE_DEDUP_H

#include <stdint.h>
#include "unwind/sample.h"

/* The section kind of a reference; outside the range of BPF section kinds. */
#define SNAPFILE_SEC_REF	64
#define SNAPFILE_DEDUP_MIN	2048	/* fewest bytes a reference stands for (zstd
					 * finds shorter runs about as cheaply) */

/* What the writer found for one section: [lo, hi) is the same as in the
 * thread's previous sample (lo == hi: nothing). */
struct snapfile_ref {
	uint64_t lo, hi;
};

struct snapfile_dedup;

struct snapfile_dedup *snapfile_dedup__new(void);
void snapfile_dedup__delete(struct snapfile_dedup *d);

/* Forget every thread (a new chunk starts). */
void snapfile_dedup__reset(struct snapfile_dedup *d);

/* Writer: for each section of s, the range that equals the thread's
 * previous sample (ref[0..s->nsec)), and in *prev_seq the number of that
 * sample.  Returns how many sections have one; at most `room`. */
uint32_t snapfile_dedup__match(struct snapfile_dedup *d, const struct ljs_sample *s,
			       struct snapfile_ref *ref, uint32_t room, uint32_t *prev_seq);

/* Writer: s is written with the references ref (as __match gave them, or
 * NULL): count it, and remember copies of its stack sections for the
 * thread's next sample (only the bytes outside a reference are copied).
 * 0 or -ENOMEM (then the next sample refers to none). */
int snapfile_dedup__remember(struct snapfile_dedup *d, const struct ljs_sample *s,
			     const struct snapfile_ref *ref);

/* Writer: the thread's last sample (remembered) was not written after all. */
void snapfile_dedup__unwrite(struct snapfile_dedup *d, uint32_t tid);

/* Reader: rebuild the sections of s that a REF section follows, drop the
 * REF sections, and remember s's stack sections (those that came whole must
 * stay where they are until the chunk ends; rebuilt ones are kept here, in
 * a window per section that the next rebuild changes in place: valid until
 * the next call for the thread).  A reference that
 * cannot be resolved (its sample was lost) leaves the section's bytes
 * before the range, with status LJS_ST_FAULT.  0 or -ENOMEM. */
int snapfile_dedup__resolve(struct snapfile_dedup *d, struct ljs_sample *s);

/* References resolved and left unresolved so far (reader). */
void snapfile_dedup__counts(const struct snapfile_dedup *d, uint64_t *resolved,
			    uint64_t *unresolved);

/* Heap bytes held. */
size_t snapfile_dedup__mem(const struct snapfile_dedup *d);

#endif /* LJSNAP_SNAPFILE_DEDUP_H */
