/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_lj.h -- the input format shared by the walker and trace targets
 * (fuzz_ljwalk.c, fuzz_ljtrace.c) and their seed maker (mkseed_lj.c): one
 * sample, its build layout and a memory table, all from the fuzz input.
 *
 *   u8  layout      built-in table: family 1 + (b % 5), GC64 if b & 0x80
 *   u8  nperturb    then nperturb x { u8 field (mod lj_layout__nfields), u32 value }
 *   regs (struct ljs_regs), u64 g, u32 flags, u64 time_ns,
 *   u64 vm_lo, u64 vm_hi, u8 trace_scan
 *   { u16 kind, u16 status, u32 aux, u64 addr, u32 len, len bytes }*
 *       kind < 0x100: a sample section (the first LJS_SAMPLE_MAX_SECS);
 *       else: a memory-table entry of the sample's pid (gen = kind - 0x100)
 *
 * Every field past the end of the input reads as 0, a window as what is
 * left.  Little endian throughout (x86_64, as the capture file).
 */
#ifndef LJSNAP_FUZZ_LJ_H
#define LJSNAP_FUZZ_LJ_H

#include <stdint.h>
#include <string.h>

#include "unwind/ljlayout.h"
#include "unwind/memtable.h"
#include "unwind/sample.h"

#define FZ_MEM_KIND	0x100u

struct fz {
	const uint8_t *p;
	size_t n;
};

static inline uint64_t fz__u(struct fz *f, unsigned bytes)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < bytes && f->n; i++, f->p++, f->n--)
		v |= (uint64_t)*f->p << (8 * i);
	return v;
}

struct fz_lj {
	struct lj_layout lay;
	struct ljs_sample s;
	uint64_t vm_lo, vm_hi;
	uint32_t trace_scan;
	struct memtable *mt;		/* NULL on -ENOMEM */
};

/* Decode the input into x (x->mt to be freed with memtable__delete). */
static inline void fz_lj__decode(struct fz_lj *x, const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	uint64_t *regs;
	unsigned sel, n, i;

	memset(x, 0, sizeof(*x));
	sel = (unsigned)fz__u(&f, 1);
	/* Every family has a GC64 and a non-GC64 table (ljlayout.c). */
	x->lay = *lj_layout__builtin((enum lj_family)(1 + sel % 5), !!(sel & 0x80));
	n = (unsigned)fz__u(&f, 1);
	for (i = 0; i < n; i++) {
		unsigned fi = (unsigned)fz__u(&f, 1) % lj_layout__nfields;
		uint32_t v = (uint32_t)fz__u(&f, 4);

		memcpy((char *)&x->lay + lj_layout__fields[fi].offset, &v, sizeof(v));
	}
	regs = (uint64_t *)&x->s.regs;
	for (i = 0; i < sizeof(x->s.regs) / 8; i++)
		regs[i] = fz__u(&f, 8);
	x->s.g = fz__u(&f, 8);
	x->s.flags = (uint32_t)fz__u(&f, 4);
	x->s.time_ns = fz__u(&f, 8);
	x->s.pid = 1;
	x->vm_lo = fz__u(&f, 8);
	x->vm_hi = fz__u(&f, 8);
	x->trace_scan = (uint32_t)fz__u(&f, 1);
	x->mt = memtable__new();
	while (f.n) {
		unsigned kind = (unsigned)fz__u(&f, 2), status = (unsigned)fz__u(&f, 2);
		uint32_t aux = (uint32_t)fz__u(&f, 4);
		uint64_t addr = fz__u(&f, 8);
		size_t len = (size_t)fz__u(&f, 4);

		if (len > f.n)
			len = f.n;
		if (kind < FZ_MEM_KIND && x->s.nsec < LJS_SAMPLE_MAX_SECS) {
			struct ljs_section *sec = &x->s.sec[x->s.nsec++];

			sec->kind = (uint16_t)kind;
			sec->status = (uint16_t)status;
			sec->aux = aux;
			sec->addr = addr;
			sec->len = sec->want = (uint32_t)len;
			sec->data = f.p;
		} else if (kind >= FZ_MEM_KIND && x->mt && len) {
			struct memtable_entry e = {
				.pid = x->s.pid, .len = (uint32_t)len, .addr = addr, .data = f.p,
				.first_ns = 0, .last_ns = UINT64_MAX, .gen = kind - FZ_MEM_KIND,
			};

			(void)memtable__add(x->mt, &e);	/* -EINVAL (wrapping range): left out */
		}
		f.p += len;
		f.n -= len;
	}
}

#endif /* LJSNAP_FUZZ_LJ_H */
