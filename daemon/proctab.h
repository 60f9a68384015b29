/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proctab.h -- the recorder's table of processes: what each one is, whether
 * it runs LuaJIT, and with which layout.
 */
#ifndef LJSNAP_PROCTAB_H
#define LJSNAP_PROCTAB_H

#include <stdint.h>
#include "bpf/ljsnap.h"
#include "unwind/ljlayout.h"

enum proc_state {
	PROC_NEW = 0,		/* seen (fork, exec, first sample), not inspected yet */
	PROC_INSPECTED,		/* inspected; see has_luajit */
	PROC_GONE,		/* exited */
};

struct proc {
	uint32_t pid, ppid;
	enum proc_state state;
	char comm[LJS_COMM_LEN];
	int has_luajit;
	int nvm;			/* LuaJIT VM copies mapped */
	struct lj_layout layout;
	uint64_t vm_lo, vm_hi, vm_exit_ret;
	char build[128];		/* human description of the LuaJIT build */
	uint32_t cfg_gen;		/* generation pushed to BPF (0 = none) */
	uint64_t g_hint;		/* a global_State seen in this process (0 = none) */
	uint64_t g_hint_ns;		/* when it was last published */
	uint64_t samples;		/* samples written for this pid */
	uint64_t last_sample_ns;
	uint64_t inspected_ns;		/* monotonic time of the last inspection */
	uint64_t maps_sig;		/* signature of the executable mappings seen */
	int reported;			/* a PROCESS record was written */
	/* live calibration (inspect__sample): done, attempts, next attempt time */
	int live_done;
	uint32_t live_tries;
	uint64_t live_next_ns;
	/* g from saved words (inspect__find_g): searches made, next one due */
	uint32_t g_scans;
	uint64_t g_scan_next_ns;
	/* The executable mappings of the last inspection, sorted, as [lo, hi)
	 * pairs: a sample outside them means the mappings changed (exec in
	 * progress at the first inspection, dlopen, a new JIT code area). */
	uint64_t *xr;
	uint32_t nxr;
	uint64_t reinspect_gap_ns;	/* wait after an inspection before the next check */
	uint32_t image;			/* +1 at each exec or reuse of the pid */
	uint64_t image_key;		/* where the executable was mapped in this image (0 = not seen) */
	uint64_t other_image_ns;	/* since when /proc shows another image (0 = it does not) */
};

struct proctab {
	struct proc *v;		/* open addressing on pid; pid 0 = empty slot */
	uint32_t cap, n;
	void *detect_cache;	/* unwind/detect/ljdetect.h cache shared by all processes */
};

int proctab__init(struct proctab *pt);
void proctab__exit(struct proctab *pt);

/* Find a process, or NULL. */
struct proc *proctab__find(struct proctab *pt, uint32_t pid);

/* Find or add a process (state PROC_NEW when added); NULL on ENOMEM. */
struct proc *proctab__get(struct proctab *pt, uint32_t pid);

/* Iterate: for (i = 0; (p = proctab__next(pt, &i)); ) ... */
struct proc *proctab__next(struct proctab *pt, uint32_t *iter);

/* Replace p's executable ranges with n [lo, hi) pairs sorted by lo, in
 * pairs (malloc'ed, or NULL when n is 0), which p takes over. */
void proctab__set_xranges(struct proc *p, uint64_t *pairs, uint32_t n);

/* Whether addr lies in one of p's executable ranges. */
int proctab__in_xrange(const struct proc *p, uint64_t addr);

/* Forget what p's last inspection saw: an exec replaced the image, or the
 * pid now names another process (the image number goes up). */
void proctab__reset(struct proc *p);

/* Build the BPF configuration for a LuaJIT process. */
void proctab__cfg(const struct proc *p, uint32_t lstack_bytes, struct ljs_proc_cfg *cfg);

#endif
