/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc.h -- a process as the pipeline (unwind/pipeline.h) sees it: its
 * mappings resolved against the object cache (symtab/procmap.h), the same
 * mappings as the native unwinder needs them, and where it runs LuaJIT.
 */
#ifndef LJSNAP_UNWIND_PROC_H
#define LJSNAP_UNWIND_PROC_H

#include <stddef.h>
#include <stdint.h>

#include "symtab/procmap.h"
#include "unwind/ljlayout.h"
#include "unwind/memsrc.h"
#include "unwind/native.h"

struct ljs_proc {
	struct procmap *pm;		/* NULL: no mappings recorded */
	struct native_map *nat;		/* pm's mappings for the unwinder */
	struct native_maps nmaps;
	int has_luajit;
	struct lj_layout layout;
	uint64_t vm_lo, vm_hi;		/* interpreter code [lo, hi) */
	uint64_t vm_exit_ret;		/* lj_proc_detect.vm_exit_ret as recorded, 0 if
					 * unknown (then read from the file) */
};

/* Resolve the mappings (none: p->pm stays NULL) into p, whose other fields
 * the caller sets.  0, -EINVAL or -ENOMEM (p then holds no mappings). */
int ljs_proc__maps(struct ljs_proc *p, struct objcache *c, const struct procmap_desc *maps,
		   size_t n);

/* Free the mappings (the fields the caller set stay). */
void ljs_proc__exit(struct ljs_proc *p);

/* A memory source over the file-backed bytes of pm's read-only mappings
 * (code, .rodata, .eh_frame), read from the found files. */
void memsrc__init_procmap(struct memsrc *ms, const struct procmap *pm, const struct memsrc *next);

#endif /* LJSNAP_UNWIND_PROC_H */
