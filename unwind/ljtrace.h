/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljtrace.h -- the data of a JIT trace, decoded offline: the GCtrace header,
 * the snapshot that covers a machine-code offset, and the frames a snapshot
 * says are inlined into the trace at that point.
 *
 * Facts (LuaJIT 2.1 lj_jit.h, lj_snap.c, lj_trace.c, lj_ir.h, lj_asm.c):
 *   - A GCtrace is one allocation: header, IR [nk, nins) (T->ir is biased so
 *     that T->ir[ref] is instruction ref; constants lie below REF_BIAS
 *     0x8000), then nsnap SnapShots, then nsnapmap SnapEntry words.
 *   - SnapShot.mcofs (upstream >= 2021-03; absent in Tarantool 2.6) is the
 *     offset of the snapshot's code from T->mcode: snapshot i covers
 *     [mcofs_i, mcofs_i+1); lj_trace_unwind takes the rightmost mcofs <= ofs.
 *   - A snapshot's map is nent entries (slot << 24 | flags | ref, sorted by
 *     slot; SNAP_FRAME 0x010000, SNAP_CONT 0x020000), then the PC:
 *       FR2 (GC64): one u64 (pc << 8) | (baseslot - 2);
 *       non-FR2: one u32 PC, then one link word per frame above the trace's
 *       base frame, innermost first (lj_snap.c snapshot_framelinks), which
 *       lj_snap_restore hands out from the end, in ascending slot order, to
 *       every SNAP_FRAME/SNAP_CONT entry with slot != 0.
 *   - Slot s lives at jit_base + 8 * (s - 1 - FR2); a frame whose function
 *     sits in slot s has BASE jit_base + 8 * s.  In FR2 a frame's function
 *     slot holds the function (no flag) and the next slot the SNAP_FRAME link
 *     (a KNUM constant: the frame link the interpreter had, a return PC or a
 *     typed delta); a continuation's PC is the SNAP_CONT KNUM one slot below
 *     the metamethod's function.  In non-FR2 the function slot carries
 *     SNAP_FRAME itself and its link comes from the PC list.
 *   - IR instructions are 8 bytes: op1 u16, op2 u16, t u8, o u8, prev u16.
 *     KGC (o 24): the GCRef is in the next instruction slot (8 bytes) in GC64,
 *     in op12 (4 bytes) otherwise; KNUM (28) and KINT64 (29) hold their 8
 *     bytes in the next slot; KPTR (25) like KGC.  EQ is o 8, NOP 12, LOOP
 *     17, CNEWI 84, CONV 91, CALLS 98, CALLXS 99.  These numbers are the
 *     same in every 2.1 tree with SnapShot.mcofs (upstream, OpenResty,
 *     Tarantool's lj_ir.h IRDEF).
 *
 * A pure library: memory comes through a memsrc, every count is checked
 * against the data, hostile snapshots yield -EINVAL, never a crash.
 */
#ifndef LJSNAP_LJTRACE_H
#define LJSNAP_LJTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/ljlayout.h"
#include "unwind/memsrc.h"

#define LJT_REF_BIAS		0x8000u
#define LJT_SNAP_FRAME		0x010000u
#define LJT_SNAP_CONT		0x020000u
#define LJT_SNAP_NORESTORE	0x040000u
#define LJT_IR_EQ		8
#define LJT_IR_NOP		12
#define LJT_IR_LOOP		17
#define LJT_IR_CNEWI		84
#define LJT_IR_CONV		91
#define LJT_IR_CALLS		98
#define LJT_IR_CALLXS		99
#define LJT_IR_KGC		24
#define LJT_IR_KPTR		25
#define LJT_IR_KKPTR		26
#define LJT_IR_KNUM		28
#define LJT_IR_KINT64		29
#define LJT_IRT_FUNC		8
#define LJT_GCT_TRACE		9
#define LJT_MAX_FRAMES		256	/* > 255 entries of one snapshot */
#define LJT_WHOLE_MAX		(256u * 1024)	/* arrays up to this are read in one piece */

/* The GCtrace header fields the profiler uses. */
struct ljt_hdr {
	uint64_t T;			/* address */
	uint8_t gct;
	uint32_t nsnap, nins, nk, nsnapmap;
	uint64_t ir, snap, snapmap, startpt, startpc, mcode;
	uint32_t startins, szmcode, mcloop;
	uint32_t spadjust, traceno, link, root;
};

/* Decode a header from len bytes copied from T (the sample's LJS_SEC_TRACE).
 * 0, or -EINVAL when too short, not a trace, or its counts are impossible. */
int ljt_hdr__parse(const struct lj_layout *lay, uint64_t T, const uint8_t *b, size_t len,
		   struct ljt_hdr *h);

/* Read the same header through ms, only the fields that never change after
 * the trace is saved (gct, counts, pointers, start, mcode, numbers), so a
 * harvesting source stores stable ranges.  0, -EFAULT or -EINVAL. */
int ljt_hdr__read(const struct lj_layout *lay, const struct memsrc *ms, uint64_t T,
		  struct ljt_hdr *h);

/* Do two headers describe the same trace (every field above equal)? */
int ljt_hdr__same(const struct ljt_hdr *a, const struct ljt_hdr *b);

/* Is now (read later from memory) the trace whose header a sample took
 * (was)?  The same, or the same flushed since: lj_trace.c
 * lj_trace_flushall (jit.flush, or a full machine-code area) zeroes each
 * trace's traceno and link and drops it from J->trace[], but its IR and
 * snapshots stay until the GC frees it (lj_trace_free), and a trace that
 * was running when sampled has not run since. */
int ljt_hdr__same_run(const struct ljt_hdr *was, const struct ljt_hdr *now);

/* Read the header at was->T through ms: 0 when it is the trace the sample
 * ran (ljt_hdr__same_run, a flushed header accepted), -ESTALE when another
 * or no trace is there now, -EFAULT unreadable. */
int ljt_hdr__check_run(const struct lj_layout *lay, const struct memsrc *ms,
		       const struct ljt_hdr *was);

/* One array of the trace, read whole when small, else element by element. */
struct ljt_buf {
	uint64_t addr, len;
	int state;			/* 0 not tried, 1 whole in data, 2 piecewise */
	uint8_t *data;
	size_t cap;			/* allocated bytes (kept across traces) */
};

/* A trace being decoded (owns its buffers; reuse it across samples). */
struct ljt {
	const struct lj_layout *lay;
	const struct memsrc *ms;
	uint32_t ref, fr2;
	struct ljt_hdr h;
	struct ljt_buf snap, map, irk;	/* snapshots, snapshot map, IR constants */
	struct ljt_buf irs;		/* IR instructions (only when searched) */
};

/* One frame a snapshot records above the trace's base frame. */
struct ljt_frame {
	int32_t slot;			/* the function's slot (root function = 0) */
	uint64_t fn;			/* GCfunc from a KGC constant, 0 if not constant */
	uint64_t pt;			/* fn == 0: GCproto the trace guards on, or 0 */
	uint64_t link;			/* the frame link (return PC or typed delta) */
	int has_link;
};

/* A decoded snapshot. */
struct ljt_snap {
	uint32_t snapno;
	uint32_t nent, nslots;
	uint64_t pc;			/* bytecode the snapshot resumes at */
	int32_t topslot;		/* FR2: the innermost frame's function slot
					 * (baseslot - 2); non-FR2: -1 (not stored) */
	uint64_t root_fn;		/* function the snapshot puts in slot 0, or 0 */
	uint32_t nframes;		/* frames above the base frame, ascending slot */
	struct ljt_frame frames[LJT_MAX_FRAMES];
	uint32_t ncont;			/* continuation PCs by slot */
	int32_t cont_slot[LJT_MAX_FRAMES];
	uint64_t cont_pc[LJT_MAX_FRAMES];
};

/* Zero a decoder; free its buffers. */
void ljt__init(struct ljt *t);
void ljt__exit(struct ljt *t);

/* Bind to a trace whose header h was read and checked by the caller; the
 * arrays are read through ms (without the sample windows).  0, -EINVAL for
 * a bad layout or header, -ENOMEM. */
int ljt__bind(struct ljt *t, const struct lj_layout *lay, const struct memsrc *ms,
	      const struct ljt_hdr *h);

/* The snapshot covering machine-code offset ofs (rightmost mcofs <= ofs, as
 * lj_trace_unwind).  0 with *snapno, -ENOENT when the build has no mcofs or
 * ofs is outside the trace, -EFAULT unreadable, -EINVAL inconsistent
 * (decreasing or out-of-range offsets). */
int ljt__snap_find(struct ljt *t, uint64_t ofs, uint32_t *snapno);

/* RIP in C code a side-effecting call of the trace (IR CALLS, CALLXS: FFI
 * calls, lj_crecord.c crec_call; library calls with side effects, lj_ir.c
 * lj_ir_call) runs, whose return address lies in the code of snapshot
 * snapno; target: the function that call went to (0 unknown).  That
 * snapshot was taken before the call was recorded, maybe before the Lua
 * functions around it were entered; the recorder takes the next one right
 * after the call's bytecode (J->needsnap, lj_record.c lj_record_ins), with
 * the call's frames, unless lj_snap_add merged it into a later one.  So:
 * the call in snapno's IR range (the one CALLXS to target when there are
 * several), its pre-loop original when it is in a loop body (lj_opt_loop.c
 * copies and may merge snapshots), and the first snapshot after that, when
 * only the call's result conversion lies between them.  0 with *out;
 * -ENOENT when the range holds no such call (the covering snapshot
 * applies); -ESRCH
 * when the frames at the call are not known (calls it cannot tell apart, a
 * merged snapshot, loop parts that do not match); -EFAULT, -EINVAL. */
int ljt__snap_call(struct ljt *t, uint32_t snapno, uint64_t target, uint32_t *out);
/* For each side-effecting call in snapshot snapno's IR range, in IR order,
 * the snapshot ljt__snap_call would give for it alone (the caller compares
 * them when it cannot tell the calls apart): 0 with out[0 .. *n), *n >= 1;
 * -ENOENT none; -E2BIG more than max; -ESRCH when one's frames are not
 * known; -EFAULT, -EINVAL. */
int ljt__snap_calls(struct ljt *t, uint32_t snapno, uint32_t *out, uint32_t max, uint32_t *n);

/* Decode snapshot snapno: PC, slot-0 function and the frames above the base
 * frame.  0, -EFAULT unreadable, -EINVAL inconsistent. */
int ljt__snap_decode(struct ljt *t, uint32_t snapno, struct ljt_snap *out);

/* Continuation PC recorded for a slot (the slot below a metamethod's
 * function), or 0. */
uint64_t ljt_snap__contpc(const struct ljt_snap *s, int32_t slot);

/* An IR constant: a KGC object (*gct of the object is not checked here) or
 * the 64 bits of a KNUM/KINT64/KPTR.  0, -EFAULT, -EINVAL (not such a
 * constant). */
int ljt__kgc(struct ljt *t, uint32_t ref, uint64_t *obj, uint8_t *irt);
int ljt__k64(struct ljt *t, uint32_t ref, uint64_t *v);

/* The prototype a trace guards a dynamic function ref on (LuaJIT
 * specializes polymorphic closures to their prototype: EQ(FLOAD(ref,
 * func.pc), KPTR(bc))): the bytecode address, or 0 when none is found. */
uint64_t ljt__guarded_bc(struct ljt *t, uint32_t ref);

#endif /* LJSNAP_LJTRACE_H */
