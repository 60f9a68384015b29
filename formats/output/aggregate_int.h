/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * aggregate_int.h -- the profile model's insides, shared by aggregate.c
 * (interning frames, stacks, sources and labels) and aggregate_meta.c
 * (what the outputs print beside the stacks).  Outputs use aggregate.h.
 */
#ifndef LJSNAP_AGGREGATE_INT_H
#define LJSNAP_AGGREGATE_INT_H

#include <stdint.h>

#include "formats/output/aggregate.h"
#include "symtab/intmap.h"

#define AGG_IDS_MAX	(UINT32_MAX - 1)	/* frames, stacks, pooled ids */

struct agg_fr {
	uint64_t hash;
	uint64_t off;			/* name bytes at str + off */
	uint32_t len;
	uint32_t base;			/* id of the name without its suffix */
	uint8_t kind;			/* enum ljs_fkind */
};

/* A node of the stack tree: frame id called from node parent (AGG_NONE: a
 * root frame).  A parent is made before its children, so its index is
 * lower.  Stacks share their roots, so the tree holds about a tenth of the
 * ids that stacks stored one after the other would (one node per distinct
 * prefix). */
struct agg_node {
	uint32_t parent;
	uint32_t id;
	uint32_t stack;			/* index of the stack that ends here, or AGG_NONE */
};

/* A stack: the node of its innermost frame. */
struct agg_st {
	uint32_t node;
	uint32_t n;			/* frames */
	uint64_t count;
};

/* A stack as agg__add_stack got it (its frames' lengths, kinds and names,
 * in order: the signature at agg.msig + off), and the stack it made. */
struct agg_memo {
	uint64_t off;
	uint32_t len;
	uint32_t stack;
};

/* A frame's source: string offsets into agg.str. */
struct agg_fsrc {
	int has;
	struct ljs_src_ref src;
};

struct agg {
	unsigned flags;
	char *str;			/* frame names, back to back */
	size_t nstr, strcap;
	struct agg_fr *fr;
	size_t nfr, frcap;
	uint32_t *fhash;		/* open addressing: frame id + 1, 0 = empty */
	size_t fhcap;
	struct agg_node *node;		/* the stack tree */
	size_t nnode, nodecap;
	uint32_t *nhash;		/* open addressing by (parent, id): node index + 1 */
	size_t nhcap;
	struct agg_st *st;
	size_t nst, stcap;
	uint64_t total;
	/* where frames come from (agg__frame_src), by frame id */
	struct agg_fsrc *fsrc;
	size_t nfsrc, fsrccap;
	/* labelled groups: per stack its first group + 1, groups chained */
	uint32_t *sgroup;
	size_t nsgroup, sgroupcap;
	struct agg_group *grp;		/* what agg__groups returns */
	uint32_t *gnext;		/* per group: index + 1 of its stack's next, 0 none */
	size_t ngrp, grpcap, gnextcap;
	/* the groups' distinct labels (a few per thread: a group is 16 bytes,
	 * not 24, and the 1 GB capture of docs/architecture.md has 2 M) */
	struct agg_labels *lab;
	size_t nlab, labcap;
	uint32_t *lhash;		/* open addressing: label index + 1, 0 = empty */
	size_t lhcap;			/* a power of two, at most half full */
	uint32_t llast;			/* the label last found, index + 1 */
	struct ljs_walk_stats walk;
	struct agg_time time;
	struct agg_stack scratch;	/* agg__add_stack's ids */
	/* agg__add_stack's stacks seen before, by their signature's hash */
	struct intmap smemo;		/* hash -> index into memo[] */
	struct agg_memo *memo;
	size_t nmemo, memocap;
	unsigned char *msig;		/* the signatures, back to back */
	size_t nmsig, msigcap;
	unsigned char *sig;		/* the stack being added's */
	size_t sigcap;
	/* samples per JIT trace: open addressing by name */
	struct agg_trace *tr;		/* in the order first seen */
	size_t ntr, trcap;
	uint32_t *trh;			/* open addressing by name: index into tr + 1 */
	size_t trhcap;			/* a power of two */
	uint64_t tsrc[LJS_TRACE_SRC_MAX];
	struct agg_trace *tsorted;	/* agg__traces' copy */
	/* where the samples came from */
	char *file, *selection;
	struct agg_proc *procs;
	size_t nprocs, proccap;
	char **notes;
	size_t nnotes, notecap;
};

/* Free what aggregate_meta.c holds. */
void agg__meta_exit(struct agg *a);

#endif /* LJSNAP_AGGREGATE_INT_H */
