/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * capture.h -- the in-process stand-in for the BPF program: build a struct
 * ljs_sample of this very process by the same rules the BPF program uses,
 * reading memory with process_vm_readv on ourselves (a bad pointer gives a
 * failed read, never a crash).  Also the memory sources the harness walks
 * with: live (process_vm_readv), and a recorder that keeps every range the
 * walker had to read, as `ljsnap record` does when it harvests.
 */
#ifndef LJSNAP_TEST_CAPTURE_H
#define LJSNAP_TEST_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/ljlayout.h"
#include "unwind/memsrc.h"
#include "unwind/sample.h"

struct cap_cfg {
	const struct lj_layout *lay;
	uint64_t vm_lo, vm_hi;		/* interpreter code range */
	uint32_t lstack_bytes;		/* budget for cur_L's Lua stack */
	uint32_t ustack_bytes;		/* native stack bytes from sp */
};

struct cap_sample {
	struct ljs_sample s;
	size_t used, size;
	uint8_t buf[];			/* section bytes */
};

/* A sample buffer with room for size bytes of sections (free() it). */
struct cap_sample *cap_sample__new(size_t size);

/* Copy len bytes of our own memory at addr; bytes copied (0 on fault). */
size_t cap__peek(uint64_t addr, void *buf, size_t len);

/* Take a sample of the calling thread: regs as seen at the C function's
 * entry, L the lua_State it was called with (fallback for g).  0 or -errno. */
int cap__take(const struct cap_cfg *c, const struct ljs_regs *regs, uint64_t L,
	      struct cap_sample *out);

/* A memsrc reading our own memory (the "live process"). */
struct cap_live {
	uint64_t nreads, nbytes;
};
void cap__live_init(struct memsrc *ms, struct cap_live *st);

/* A memsrc that forwards to `inner` and records every range it served. */
struct cap_rec {
	const struct memsrc *inner;
	struct memsrc_window *w;
	size_t n, cap;
	size_t bytes;
	struct memsrc_windows ws;	/* view over w for memsrc__init_windows */
};
void cap__rec_init(struct memsrc *ms, struct cap_rec *r, const struct memsrc *inner);
void cap__rec_reset(struct cap_rec *r);
void cap__rec_exit(struct cap_rec *r);

#endif /* LJSNAP_TEST_CAPTURE_H */
