/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * native_int.h -- internals shared by native.c (the walk, libdw's thread
 * callbacks) and native_space.c (one Dwfl per mapping set).
 */
#ifndef LJSNAP_UNWIND_NATIVE_INT_H
#define LJSNAP_UNWIND_NATIVE_INT_H

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "symtab/intmap.h"
#include "unwind/native.h"

#define NATIVE_MAX_SPACES	32
#define NATIVE_MAX_SEGMENTS	256	/* hook steps / restarts per unwind */
#define NATIVE_STACK_GUESS	(64ull << 20)	/* stack bytes assumed above the copy when the
						 * stack mapping is unknown */
#define NATIVE_CB_STOP		2	/* native__on_frame: stop, w->end says why */
#define NATIVE_CB_HOOK		3	/* native__on_frame: run the hook on the last frame */
#define NATIVE_RULE_MEMO	64	/* native_space.rule_memo slots */
#define NATIVE_ALL_REGS		((1u << NATIVE_NREGS) - 1)

/* A mapping as the address space keeps it (paths copied). */
struct native_smap {
	uint64_t start, end, bias;
	char *path;
	uint32_t flags;
	uint32_t idx;		/* index in the caller's array */
	uint8_t has_mod;	/* libdw has a module for it */
};

/* The CFI row of one lookup pc as libdw gives it (native_cfi.c). */
enum native_rule_status {
	NATIVE_RULE_NONE = 0,	/* no module or no CFI there: libdw's frame-pointer step */
	NATIVE_RULE_COMPLEX,	/* CFI in a form the rule does not keep: libdw steps */
	NATIVE_RULE_OK,		/* cfa_reg/cfa_off and kind/arg/reg describe the row */
};
enum native_rule_kind {
	NATIVE_RULE_UNDEF = 0,	/* undefined */
	NATIVE_RULE_SAME,	/* same value */
	NATIVE_RULE_AT_CFA,	/* saved at CFA + arg */
	NATIVE_RULE_CFA,	/* the value CFA + arg */
	NATIVE_RULE_REG,	/* the value of register reg + arg */
};
struct native_rule {
	int64_t cfa_off;
	int64_t arg[NATIVE_NREGS];
	uint8_t kind[NATIVE_NREGS];
	uint8_t reg[NATIVE_NREGS];
	uint32_t live;		/* bit i: kind[i] is not NATIVE_RULE_UNDEF */
	uint8_t status;		/* enum native_rule_status */
	uint8_t cfa_reg;
	uint8_t signal;		/* the CIE marks a signal frame */
	uint8_t ra_undef;	/* the return address is undefined (outermost frame) */
};

/* One Dwfl over one mapping set. */
struct native_space {
	uint64_t key;
	struct native_smap *maps;	/* caller's order */
	uint32_t *sorted;		/* indexes into maps, by start */
	size_t n;
	Dwfl *dwfl;
	Elf *arch_elf;			/* a bare x86_64 ELF header for dwfl_attach_state */
	const struct native_map *last_v;	/* the caller's array last seen equal */
	unsigned char ehdr[sizeof(Elf64_Ehdr)];
	uint64_t last_used;
	struct intmap rule_idx;		/* lookup pc -> index into rules */
	struct {			/* rule_idx's answers found last, by pc */
		uint64_t pc, idx1;	/* idx1: index + 1, 0 for an empty slot */
	} rule_memo[NATIVE_RULE_MEMO];
	struct {			/* native_space__find's, by address */
		uint64_t addr, idx1;	/* idx1: index into maps + 1, 0 for none */
	} find_memo[NATIVE_RULE_MEMO];
	struct native_rule *rules;	/* each distinct rule once (native_cfi.c) */
	size_t nrules, rules_cap;
	struct intmap rule_uniq;	/* a rule's hash -> the first rule with it */
};

/* State of the unwind in progress (the Dwfl callbacks' argument is the unwinder). */
struct native_walk {
	struct native_space *sp;
	const struct native_opts *o;
	const uint8_t *stk;
	uint64_t stk_lo, stk_hi;	/* [lo, hi) copied */
	uint64_t beyond_hi;		/* reads in [stk_hi, beyond_hi) mean "copy too short" */
	struct memsrc stk_ms;		/* stack copy, then o->mem (for the hook) */
	size_t max_frames;
	/* current segment */
	struct native_regs init;
	uint64_t init_pc;
	uint8_t init_act, init_how;
	uint8_t resume_same;		/* first frame of the segment is already recorded */
	uint8_t skip_hook;		/* do not hand the first frame to the hook again */
	uint8_t prev_in_mod;
	size_t seg_frames;
	/* outcome */
	enum native_end end;
	uint64_t fault_addr;
	int fault_beyond;		/* last failed read was above the copy */
	int faulted;
	int probe_unknown;		/* the fast walk asked for the step from a pc
					 * libdw steps by frame pointers (native_fast.c) */
};

struct native_unw {
	struct native_unw_opts opts;
	struct native_space **spaces;
	size_t nspaces;
	uint64_t clock;
	struct native_frame *frames;
	size_t nframes, cap;
	struct native_walk w;
	struct native_unw_stats st;
};

/* libdw's thread callbacks (native.c); the Dwfl argument is the unwinder. */
extern const Dwfl_Thread_Callbacks native__thread_cb;

/* The address space of m, found or created (least recently used evicted). */
int native__space(struct native_unw *u, const struct native_maps *m, struct native_space **out);

/* Free an address space. */
void native_space__delete(struct native_space *s);

/* The mapping of s containing addr, or NULL. */
const struct native_smap *native_space__find(struct native_space *s, uint64_t addr);

/* Does the CFI of f's pc say that frame has no caller? */
int native__outermost(struct native_space *s, const struct native_frame *f);

/* The cached CFI row of a lookup pc (native_cfi.c); NULL on -ENOMEM.  Valid
 * until the next call. */
const struct native_rule *native_space__rule(struct native_space *s, uint64_t pc);

/* Read a word for the walk: the stack copy, then the caller's memory source;
 * a failure is noted in u->w (faulted, fault_addr, fault_beyond).  0 or -1. */
int native__read_word(struct native_unw *u, uint64_t addr, uint64_t *v);

/* End the walk from a frame callback with why: NATIVE_CB_STOP. */
int native__frame_stop(struct native_walk *w, enum native_end why);

/* Check and record a frame read from the walk (native__on_frame's second
 * half): DWARF_CB_OK, NATIVE_CB_STOP or NATIVE_CB_HOOK. */
int native__frame_check(struct native_unw *u, struct native_frame *f);

/* Run one segment with the cached rules instead of libdw (native_fast.c):
 * 0 with *rc as dwfl_getthread_frames would return it, or NATIVE_FAST_BAIL
 * when some step needs libdw itself. */
#define NATIVE_FAST_BAIL	1
int native_fast__segment(struct native_unw *u, int *rc);

#endif /* LJSNAP_UNWIND_NATIVE_INT_H */
