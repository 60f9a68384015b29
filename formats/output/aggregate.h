/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * aggregate.h -- the profile model every output reads: stacks of named
 * frames (unwind/stack.h) with their sample counts, the walk statistics,
 * samples per JIT trace, the processes sampled and notes on the capture.
 *
 * Names are interned once (frame ids), and stacks as paths in a tree of
 * frames (one node per distinct prefix) with a sample count, so a report
 * over millions of samples holds one copy of each distinct name and of each
 * distinct start of a stack.  Names are made safe for the folded
 * format when interned: ';' and control characters never appear in a frame
 * name.  A plain library: no globals, no I/O.
 */
#ifndef LJSNAP_AGGREGATE_H
#define LJSNAP_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/stack.h"

#define AGG_LINES	0x1	/* Lua frames were named by current line, not by function */
#define AGG_TRACES	0x2	/* keep the samples of each JIT trace (agg__traces) */

#define AGG_NAME_MAX	LJS_NAME_MAX	/* longest frame name kept (bytes) */

#define AGG_NONE	UINT32_MAX	/* no node, no stack (struct agg_tnode) */

/* A stack being built, root first (ids from agg__frame). */
struct agg_stack {
	uint32_t *ids;
	size_t n, cap;
};

/* A process that had samples. */
struct agg_proc {
	uint32_t pid;
	const char *comm;
	const char *build;		/* LuaJIT build description, NULL = no LuaJIT */
	uint64_t samples;
};

/* Samples of one JIT trace. */
struct agg_trace {
	const char *label;		/* "TRACE_<n>::chunk:line (root <r>); starts in ...": */
	size_t name_len;		/* its first name_len bytes name the trace */
	uint64_t n;
};

/* What a sample is besides its stack (pprof labels, speedscope profiles). */
struct agg_labels {
	uint32_t pid, tid;
	int vm;				/* enum ljs_vm, or -1: no LuaJIT state */
};

/* The samples of one stack with the same labels. */
struct agg_group {
	uint32_t stack;			/* index for agg__stack */
	uint32_t label;			/* index into agg__labels */
	uint64_t count;
};

/* A node of the stack tree: frame id called from node parent. */
struct agg_tnode {
	uint32_t parent;		/* AGG_NONE: a root frame */
	uint32_t id;			/* frame id */
	uint32_t stack;			/* the stack that ends here (agg__stack), or AGG_NONE */
	uint64_t count;			/* that stack's samples (0 with no stack) */
};

/* When the samples were taken. */
struct agg_time {
	uint64_t start_ns;		/* wall clock (ns since the epoch) of the recording's start */
	uint64_t duration_ns;		/* first to last sample */
	uint32_t freq_hz;		/* sampling frequency per CPU (0 unknown) */
};

struct agg;

/* Allocate (flags: AGG_*) / free. */
struct agg *agg__new(unsigned flags);
void agg__delete(struct agg *a);

/* -- Building ----------------------------------------------------------------- */

/* Intern a frame name (made folded-safe, cut at AGG_NAME_MAX): its id, or
 * -ENOMEM.  The same name with another kind is another frame. */
long agg__frame(struct agg *a, const char *name, size_t len, enum ljs_fkind kind);

/* Add count samples of a named stack (root first), with their labels (NULL:
 * none kept) and the frames' sources where the stack has them (the first
 * source seen for a frame is kept).  0, -EINVAL (empty), -ENOMEM. */
int agg__add_stack(struct agg *a, const struct ljs_stack *st, const struct agg_labels *l,
		   uint64_t count);

/* Building a stack of ids: reset, then push frames root first.  0 or -ENOMEM. */
void agg_stack__reset(struct agg_stack *sb);
void agg_stack__exit(struct agg_stack *sb);
int agg__push(struct agg *a, struct agg_stack *sb, const char *name, size_t len,
	      enum ljs_fkind kind);
/* Append an id from agg__frame. */
int agg_stack__push_id(struct agg_stack *sb, uint32_t id);

/* Add count samples of a stack of ids.  0, -EINVAL (empty stack, bad id), -ENOMEM. */
int agg__add(struct agg *a, const struct agg_stack *sb, uint64_t count);

/* Count one sample in its JIT trace: in agg__trace_src, and with AGG_TRACES
 * in agg__traces.  0 or -ENOMEM. */
int agg__trace(struct agg *a, const struct ljs_trace_hit *hit);

/* When the samples were taken (copied). */
void agg__set_time(struct agg *a, const struct agg_time *t);

/* The walk statistics of the samples (copied). */
void agg__set_walk(struct agg *a, const struct ljs_walk_stats *ws);

/* Where the samples came from: the file and the selection ("pid 123", or
 * NULL for everything).  Strings copied.  0 or -ENOMEM. */
int agg__set_source(struct agg *a, const char *file, const char *selection);

/* A process that had samples (strings copied).  0 or -ENOMEM. */
int agg__add_proc(struct agg *a, const struct agg_proc *p);

/* A note on the capture or the unwinding, one line (copied).  0 or -ENOMEM. */
int agg__add_note(struct agg *a, const char *note);

/* -- Reading (for the outputs) ----------------------------------------------- */

unsigned agg__flags(const struct agg *a);
uint64_t agg__total(const struct agg *a);		/* samples added */
const struct ljs_walk_stats *agg__walk(const struct agg *a);

size_t agg__nframes(const struct agg *a);
const char *agg__frame_name(const struct agg *a, uint32_t id, size_t *len);
enum ljs_fkind agg__frame_kind(const struct agg *a, uint32_t id);
/* The id of the same name without its "_[j]" / "_[i]" / "_[k]" suffix. */
uint32_t agg__frame_base(const struct agg *a, uint32_t id);

/* Where frame id comes from (pointers valid for the life of a): 1, or 0
 * when no source was given for it. */
int agg__frame_src(const struct agg *a, uint32_t id, struct ljs_frame_src *out);

size_t agg__nstacks(const struct agg *a);
/* Stack i: its ids, root first, into sb (sb->ids, sb->n), and its count.
 * 0, -EINVAL if i is out of range, -ENOMEM. */
int agg__stack(const struct agg *a, size_t i, struct agg_stack *sb, uint64_t *count);
/* Stack i's count (0 if i is out of range). */
uint64_t agg__stack_count(const struct agg *a, size_t i);

/* The stack tree: nodes 0 .. agg__nnodes - 1, each frame made before the
 * frames it calls (a parent's index is lower than its children's), and
 * every stack ends at a node of its own.  0, or -EINVAL if k is out of
 * range. */
size_t agg__nnodes(const struct agg *a);
int agg__node(const struct agg *a, uint32_t k, struct agg_tnode *out);
/* The frames each node calls, for walking the tree from its roots: node k's
 * children are (*kids)[(*start)[k] .. (*start)[k + 1]), and the root frames
 * are those of k = agg__nnodes (start has agg__nnodes + 2 entries).  The
 * caller frees both.  0 or -ENOMEM. */
int agg__kids(const struct agg *a, uint32_t **start, uint32_t **kids);

/* The labelled groups of samples, in the order first seen (those added with
 * labels; their counts add up to agg__total when every sample had labels),
 * or NULL when there are none.  Valid until the next agg__add_stack. */
const struct agg_group *agg__groups(const struct agg *a, size_t *n);
/* The distinct labels of the groups (agg_group.label indexes them), in the
 * order first seen; NULL when there are none.  Valid until the next
 * agg__add_stack. */
const struct agg_labels *agg__labels(const struct agg *a, size_t *n);

const struct agg_time *agg__time(const struct agg *a);

/* Samples per way of attributing them to a trace (index: ljs_trace__src_name). */
const uint64_t *agg__trace_src(const struct agg *a);
/* The traces with samples, by count descending then name (valid until the
 * next agg__trace).  NULL when there are none or on -ENOMEM (*n = 0). */
const struct agg_trace *agg__traces(const struct agg *a, size_t *n);

const char *agg__source_file(const struct agg *a);
const char *agg__source_selection(const struct agg *a);
/* Processes in the order added; notes in the order added. */
const struct agg_proc *agg__procs(const struct agg *a, size_t *n);
const char *const *agg__notes(const struct agg *a, size_t *n);

#endif /* LJSNAP_AGGREGATE_H */
