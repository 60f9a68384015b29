/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report_proc.h -- the report's processes: each pid's descriptions (PROCESS
 * records), one per image, and which one a sample belongs to.
 *
 * Descriptions of one image only grow more complete (a library loaded, the
 * first look taken while exec was under way), so the last one of an image
 * stands for all of it, with one exception: LuaJIT's machine-code areas are
 * anonymous mappings that turn writable and not executable while a trace is
 * compiled into them (lj_mcode.c, MCPROT_GEN), so a look taken then misses
 * an area an earlier look saw.  Every anonymous executable mapping any
 * description of the image had is kept, unless a later one has an
 * executable or file-backed mapping over it.  A description without any
 * mapping (the process was gone when looked at) changes nothing.  A new
 * image (exec, or a reused pid) is described before its first sample: a
 * sample belongs to the image of the last description before it in the
 * file (docs/capture-format.md, PROCESS).
 */
#ifndef LJSNAP_REPORT_PROC_H
#define LJSNAP_REPORT_PROC_H

#include <stddef.h>
#include <stdint.h>
#include "bpf/ljsnap.h"
#include "formats/capture/snapfile.h"
#include "symtab/intmap.h"
#include "unwind/ljlayout.h"
#include "unwind/proc.h"

struct ljs_pipe;

/* One image of a process, as its last description says. */
struct rdesc {
	uint32_t image;
	uint64_t offset;		/* file offset of the image's first description */
	char comm[LJS_COMM_LEN];
	char *build;			/* LuaJIT build, when proc.has_luajit */
	struct ljs_proc proc;		/* mappings resolved on this machine, LuaJIT */
	struct procmap_desc *xanon;	/* anonymous executable mappings seen so far */
	size_t nxanon;
};

struct rproc {
	uint32_t pid;
	char comm[LJS_COMM_LEN];	/* when never described: exit note or sample */
	uint64_t samples;
	struct rdesc *d;		/* by image, in file order */
	size_t nd, dcap, cur;		/* cur: image of the last sample looked up */
};

struct ptab {
	struct rproc *v;		/* in the order first seen */
	size_t n, cap;
	struct intmap bypid;		/* pid -> index into v */
};

/* The entry of pid (created when missing); NULL when out of memory.  It
 * stays where it is until the next entry is created. */
struct rproc *ptab__get(struct ptab *pt, uint32_t pid);

/* Take a PROCESS record found at file offset: it replaces the description
 * of its image (keeping the image's machine-code areas, see above) or
 * starts a new image; an exit note only names a process
 * never described.  0 or -ENOMEM. */
int ptab__process(struct ptab *pt, struct ljs_pipe *rs, const struct snapfile_process *sp,
		  uint64_t offset);

/* Free everything. */
void ptab__exit(struct ptab *pt);

/* The description of the image a sample at file offset belongs to, or NULL
 * when the process was never described.  Offsets must not go down between
 * calls for one process (samples are looked up in file order). */
const struct rdesc *rproc__desc_at(struct rproc *p, uint64_t offset);

/* The description of the process's last image, or NULL. */
const struct rdesc *rproc__last(const struct rproc *p);

#endif
