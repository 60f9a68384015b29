/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_ljtrace.c -- the trace and snapshot decoder (unwind/ljtrace.h): the
 * sample's LJS_SEC_TRACE section parsed as a GCtrace header, then bound to
 * the memory table and every snapshot found and decoded, with the IR
 * constants the frames name (input format: fuzz_lj.h).
 */
#include <stdint.h>

#include "tests/fuzz/fuzz_lj.h"
#include "unwind/ljtrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_trace(struct ljt *t, const struct fz_lj *x, const struct memsrc *ms,
		      const struct ljt_hdr *h)
{
	static struct ljt_snap sn;
	uint32_t snapno, i, j;
	uint64_t v;
	uint8_t irt;

	if (ljt__bind(t, &x->lay, ms, h))
		return;
	if (ljt__snap_find(t, x->s.regs.ip - h->mcode, &snapno) == 0 &&
	    ljt__snap_decode(t, snapno, &sn) == 0)
		(void)ljt_snap__contpc(&sn, (int32_t)x->s.regs.ax);
	for (i = 0; i < h->nsnap && i < 16; i++) {
		if (ljt__snap_decode(t, i, &sn))
			continue;
		for (j = 0; j < sn.nframes; j++)
			(void)ljt_snap__contpc(&sn, sn.frames[j].slot);
	}
	/* IR references from the registers: constants and guarded prototypes. */
	for (i = 0; i < 4; i++) {
		uint32_t ref = (uint32_t)(((const uint64_t *)&x->s.regs)[i] & 0xffff);

		(void)ljt__kgc(t, ref, &v, &irt);
		(void)ljt__k64(t, ref, &v);
		(void)ljt__guarded_bc(t, ref);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_lj x;
	struct memtable_src mts;
	struct ljt_hdr h, hm;
	struct ljt t;
	uint32_t i;

	fz_lj__decode(&x, data, size);
	if (!x.mt)
		return 0;
	memtable__memsrc(&mts, x.mt, x.s.pid, x.s.time_ns, NULL);
	ljt__init(&t);
	for (i = 0; i < x.s.nsec; i++) {
		const struct ljs_section *sec = &x.s.sec[i];

		if (sec->kind != LJS_SEC_TRACE ||
		    ljt_hdr__parse(&x.lay, sec->addr, sec->data, sec->len, &h))
			continue;
		if (ljt_hdr__read(&x.lay, &mts.ms, sec->addr, &hm) == 0)
			(void)ljt_hdr__same(&h, &hm);
		one_trace(&t, &x, &mts.ms, &h);
	}
	ljt__exit(&t);
	memtable__delete(x.mt);
	return 0;
}
