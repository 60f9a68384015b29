/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljtrace.c -- GCtrace headers, snapshot search and snapshot decoding.
 * See ljtrace.h for the LuaJIT facts used.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/vec.h"
#include "unwind/ljtrace.h"

#define IRINS		8u		/* sizeof(IRIns) */
#define REF_MAX		0x10000u	/* IRRef1 is 16 bits */
#define IR_SCAN_MAX	(LJT_WHOLE_MAX / IRINS)	/* instructions searched for a guard */

/* -- Little-endian helpers ---------------------------------------------- */

/* n little-endian bytes at p. */
static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	uint32_t v32;
	uint16_t v16;

	switch (n) {	/* the sizes of every field, without the byte loop */
	case 2: memcpy(&v16, p, 2); return le16toh(v16);
	case 4: memcpy(&v32, p, 4); return le32toh(v32);
	case 8: memcpy(&v, p, 8); return le64toh(v);
	}
	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* -- Header ------------------------------------------------------------- */

/* A header field: offset and size, from the layout. */
struct hfield {
	uint32_t ofs, size;
};

/* The fields of a GCtrace that never change once the trace is saved. */
static size_t hdr__fields(const struct lj_layout *lay, struct hfield *f)
{
	uint32_t r = lay->ref_size;
	size_t n = 0;

#define HF(o, s) (f[n].ofs = (o), f[n].size = (s), n++)
	HF(r + 1, 1);			/* gct (after nextgc, marked) */
	HF(lay->t_nsnap, 2);
	HF(lay->t_nins, 4);
	HF(lay->t_ir, 8);
	HF(lay->t_nk, 4);
	HF(lay->t_nsnapmap, 4);
	HF(lay->t_snap, 8);
	HF(lay->t_snapmap, 8);
	HF(lay->t_startpt, r);
	HF(lay->t_startpc, r);
	HF(lay->t_startins, 4);
	HF(lay->t_szmcode, 4);
	HF(lay->t_mcode, 8);
	HF(lay->t_mcloop, 4);
	HF(lay->t_spadjust, 2);
	HF(lay->t_traceno, 2);
	HF(lay->t_link, 2);
	HF(lay->t_root, 2);
#undef HF
	return n;
}

/* Decode a header from len bytes copied from T. */
static int hdr__parse(const struct lj_layout *lay, uint64_t T, const uint8_t *b, size_t len,
		      struct ljt_hdr *h, int flushed_ok)
{
	struct hfield f[24];
	size_t n, i;
	uint32_t r;

	if (!lay || !b || !h || (lay->ref_size != 4 && lay->ref_size != 8) || lay->t_size == 0)
		return -EINVAL;
	r = lay->ref_size;
	n = hdr__fields(lay, f);
	for (i = 0; i < n; i++)
		if ((uint64_t)f[i].ofs + f[i].size > len || f[i].ofs + f[i].size > lay->t_size)
			return -EINVAL;
	memset(h, 0, sizeof(*h));
	h->T = T;
	h->gct = b[r + 1];
	h->nsnap = (uint32_t)le(b + lay->t_nsnap, 2);
	h->nins = (uint32_t)le(b + lay->t_nins, 4);
	h->ir = le(b + lay->t_ir, 8);
	h->nk = (uint32_t)le(b + lay->t_nk, 4);
	h->nsnapmap = (uint32_t)le(b + lay->t_nsnapmap, 4);
	h->snap = le(b + lay->t_snap, 8);
	h->snapmap = le(b + lay->t_snapmap, 8);
	h->startpt = le(b + lay->t_startpt, r);
	h->startpc = le(b + lay->t_startpc, r);
	h->startins = (uint32_t)le(b + lay->t_startins, 4);
	h->szmcode = (uint32_t)le(b + lay->t_szmcode, 4);
	h->mcode = le(b + lay->t_mcode, 8);
	h->mcloop = (uint32_t)le(b + lay->t_mcloop, 4);
	h->spadjust = (uint32_t)le(b + lay->t_spadjust, 2);
	h->traceno = (uint32_t)le(b + lay->t_traceno, 2);
	h->link = (uint32_t)le(b + lay->t_link, 2);
	h->root = (uint32_t)le(b + lay->t_root, 2);
	if (h->gct != LJT_GCT_TRACE || (h->traceno == 0 && !(flushed_ok && h->link == 0)) ||
	    h->nk > LJT_REF_BIAS || h->nins < LJT_REF_BIAS || h->nins > REF_MAX || h->nsnap == 0)
		return -EINVAL;
	return 0;
}

int ljt_hdr__parse(const struct lj_layout *lay, uint64_t T, const uint8_t *b, size_t len,
		   struct ljt_hdr *h)
{
	return hdr__parse(lay, T, b, len, h, 0);
}

/* Compare a header field list entry by offset (insertion sort helper). */
static void hfields__sort(struct hfield *f, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		struct hfield x = f[i];

		for (j = i; j > 0 && f[j - 1].ofs > x.ofs; j--)
			f[j] = f[j - 1];
		f[j] = x;
	}
}

/* Read the stable header fields through ms (merged into a few ranges). */
static int hdr__read(const struct lj_layout *lay, const struct memsrc *ms, uint64_t T,
		     struct ljt_hdr *h, int flushed_ok)
{
	struct hfield f[24];
	uint8_t b[512];
	size_t n, i, j;
	int err;

	if (!lay || !ms || !h || lay->t_size == 0 || lay->t_size > sizeof(b) || T == 0)
		return -EINVAL;
	n = hdr__fields(lay, f);
	hfields__sort(f, n);
	memset(b, 0, sizeof(b));
	for (i = 0; i < n; i = j) {
		uint32_t lo = f[i].ofs, hi = f[i].ofs + f[i].size;

		/* Merge fields that touch or overlap into one read. */
		for (j = i + 1; j < n && f[j].ofs <= hi; j++)
			if (f[j].ofs + f[j].size > hi)
				hi = f[j].ofs + f[j].size;
		if (hi > lay->t_size)
			return -EINVAL;
		err = memsrc__read(ms, T + lo, b + lo, hi - lo);
		if (err)
			return err;
	}
	return hdr__parse(lay, T, b, lay->t_size, h, flushed_ok);
}

int ljt_hdr__read(const struct lj_layout *lay, const struct memsrc *ms, uint64_t T,
		  struct ljt_hdr *h)
{
	return hdr__read(lay, ms, T, h, 0);
}

/* Do two headers describe the same trace? */
int ljt_hdr__same(const struct ljt_hdr *a, const struct ljt_hdr *b)
{
	return a->T == b->T && a->gct == b->gct && a->nsnap == b->nsnap && a->nins == b->nins &&
	       a->nk == b->nk && a->nsnapmap == b->nsnapmap && a->ir == b->ir &&
	       a->snap == b->snap && a->snapmap == b->snapmap && a->startpt == b->startpt &&
	       a->startpc == b->startpc && a->startins == b->startins &&
	       a->szmcode == b->szmcode && a->mcode == b->mcode && a->mcloop == b->mcloop &&
	       a->spadjust == b->spadjust && a->traceno == b->traceno && a->link == b->link &&
	       a->root == b->root;
}

/* Is the trace at was->T in ms still the one a sample ran (see ljtrace.h)? */
int ljt_hdr__check_run(const struct lj_layout *lay, const struct memsrc *ms,
		       const struct ljt_hdr *was)
{
	struct ljt_hdr now;
	int err = hdr__read(lay, ms, was->T, &now, 1);

	if (err)
		return err == -EINVAL ? -ESTALE : err;
	return ljt_hdr__same_run(was, &now) ? 0 : -ESTALE;
}

/* A sampled trace, maybe flushed since (see ljtrace.h). */
int ljt_hdr__same_run(const struct ljt_hdr *was, const struct ljt_hdr *now)
{
	struct ljt_hdr h;

	if (now->traceno != 0 || now->link != 0 || was->traceno == 0)
		return ljt_hdr__same(was, now);
	h = *now;
	h.traceno = was->traceno;
	h.link = was->link;
	return ljt_hdr__same(was, &h);
}

/* -- Arrays ----------------------------------------------------------------- */

/* Point a buffer at [addr, addr + len) (nothing read yet). */
static void buf__set(struct ljt_buf *b, uint64_t addr, uint64_t len)
{
	b->addr = addr;
	b->len = len;
	b->state = 0;
}

/* Copy n bytes at offset off of an array: the whole array is read once when
 * small (one range for a harvesting source), else piece by piece. */
static int buf__read(struct ljt *t, struct ljt_buf *b, uint64_t off, void *dst, size_t n)
{
	if (off > b->len || n > b->len - off)
		return -EINVAL;
	if (b->state == 0) {
		b->state = 2;
		if (b->len && b->len <= LJT_WHOLE_MAX) {
			if (vec__grow(&b->data, &b->cap, 1, (size_t)b->len) == 0 &&
			    memsrc__read(t->ms, b->addr, b->data, (size_t)b->len) == 0)
				b->state = 1;
		}
	}
	if (b->state == 1) {
		memcpy(dst, b->data + off, n);
		return 0;
	}
	return memsrc__read(t->ms, b->addr + off, dst, n);
}

/* Zero a decoder. */
void ljt__init(struct ljt *t)
{
	memset(t, 0, sizeof(*t));
}

/* Free a decoder's buffers. */
void ljt__exit(struct ljt *t)
{
	free(t->snap.data);
	free(t->map.data);
	free(t->irk.data);
	free(t->irs.data);
	ljt__init(t);
}

/* Bind to a checked header. */
int ljt__bind(struct ljt *t, const struct lj_layout *lay, const struct memsrc *ms,
	      const struct ljt_hdr *h)
{
	if (!t || !lay || !ms || !h || (lay->ref_size != 4 && lay->ref_size != 8) ||
	    lay->snap_size < 8 || h->gct != LJT_GCT_TRACE || h->nk > LJT_REF_BIAS ||
	    h->nins < LJT_REF_BIAS || h->nins > REF_MAX)
		return -EINVAL;
	t->lay = lay;
	t->ms = ms;
	t->ref = lay->ref_size;
	t->fr2 = (lay->flags & LJ_LAYOUT_F_GC64) ? 1 : 0;
	t->h = *h;
	buf__set(&t->snap, h->snap, (uint64_t)h->nsnap * lay->snap_size);
	buf__set(&t->map, h->snapmap, (uint64_t)h->nsnapmap * 4);
	buf__set(&t->irk, h->ir + IRINS * (uint64_t)h->nk,
		 IRINS * (uint64_t)(LJT_REF_BIAS - h->nk));
	buf__set(&t->irs, h->ir + IRINS * (uint64_t)LJT_REF_BIAS,
		 IRINS * (uint64_t)(h->nins - LJT_REF_BIAS));
	return 0;
}

/* -- Snapshots ----------------------------------------------------------------- */

/* A field of snapshot i (n bytes at ofs). */
static int snap__field(struct ljt *t, uint32_t i, uint32_t ofs, unsigned n, uint32_t *v)
{
	uint8_t b[4];
	int err;

	if (i >= t->h.nsnap || ofs + n > t->lay->snap_size)
		return -EINVAL;
	err = buf__read(t, &t->snap, (uint64_t)i * t->lay->snap_size + ofs, b, n);
	if (!err)
		*v = (uint32_t)le(b, n);
	return err;
}

/* mcofs of snapshot i. */
static int snap__mcofs(struct ljt *t, uint32_t i, uint32_t *v)
{
	return snap__field(t, i, t->lay->snap_mcofs, 2, v);
}

/* The snapshot covering machine-code offset ofs. */
int ljt__snap_find(struct ljt *t, uint64_t ofs, uint32_t *snapno)
{
	uint32_t lo = 0, hi, mid, m, prev = 0, i;
	int err;

	if (!t->lay || !(t->lay->flags & LJ_LAYOUT_F_MCOFS) || t->lay->snap_mcofs == UINT32_MAX)
		return -ENOENT;
	if (ofs >= t->h.szmcode)
		return -ENOENT;
	hi = t->h.nsnap;
	if (hi == 0 || t->lay->snap_mcofs + 2 > t->lay->snap_size)
		return -EINVAL;
	/* Small arrays are read whole anyway: check the offsets are ordered. */
	err = snap__mcofs(t, 0, &m);
	if (err)
		return err;
	if (m != 0)
		return -EINVAL;
	if (t->snap.state == 1) {
		for (i = 1; i < hi; i++) {
			if (snap__mcofs(t, i, &m) || m < prev || m > t->h.szmcode)
				return -EINVAL;
			prev = m;
		}
	}
	/* Rightmost binary search (lj_trace_unwind): at most 17 steps. */
	do {
		mid = (lo + hi) >> 1;
		err = snap__mcofs(t, mid, &m);
		if (err)
			return err;
		if (ofs < m)
			hi = mid;
		else
			lo = mid + 1;
	} while (lo < hi);
	if (lo == 0)
		return -EINVAL;
	*snapno = lo - 1;
	return 0;
}

/* Continuation PC recorded for a slot, or 0. */
uint64_t ljt_snap__contpc(const struct ljt_snap *s, int32_t slot)
{
	uint32_t i;

	for (i = 0; i < s->ncont && i < LJT_MAX_FRAMES; i++)
		if (s->cont_slot[i] == slot)
			return s->cont_pc[i];
	return 0;
}

/* -- IR constants ------------------------------------------------------------ */

/* IR instruction ref (8 bytes) from the constant or instruction area. */
static int ir__ins(struct ljt *t, uint32_t ref, uint8_t *b)
{
	if (ref >= t->h.nk && ref < LJT_REF_BIAS)
		return buf__read(t, &t->irk, IRINS * (uint64_t)(ref - t->h.nk), b, IRINS);
	if (ref >= LJT_REF_BIAS && ref < t->h.nins)
		return buf__read(t, &t->irs, IRINS * (uint64_t)(ref - LJT_REF_BIAS), b, IRINS);
	return -EINVAL;
}

/* A KGC constant's object and IR type. */
int ljt__kgc(struct ljt *t, uint32_t ref, uint64_t *obj, uint8_t *irt)
{
	uint8_t b[IRINS];
	int err;

	if (ref < t->h.nk || ref >= LJT_REF_BIAS)
		return -EINVAL;
	err = ir__ins(t, ref, b);
	if (err)
		return err;
	if (b[5] != LJT_IR_KGC)
		return -EINVAL;
	if (irt)
		*irt = b[4] & 0x1f;
	return ljt__k64(t, ref, obj);	/* the pointer, where the build keeps it */
}

/* The 64 bits of a KNUM / KINT64 / KPTR constant (KGC too in GC64). */
int ljt__k64(struct ljt *t, uint32_t ref, uint64_t *val)
{
	uint8_t b[IRINS], v[IRINS];
	int err;

	if (ref < t->h.nk || ref >= LJT_REF_BIAS)
		return -EINVAL;
	err = ir__ins(t, ref, b);
	if (err)
		return err;
	switch (b[5]) {
	case LJT_IR_KNUM: case LJT_IR_KINT64:
		break;
	case LJT_IR_KPTR: case LJT_IR_KKPTR: case LJT_IR_KGC:
		if (t->ref == 4) {	/* 32-bit pointer in op12 */
			*val = le(b, 4);
			return 0;
		}
		break;
	default:
		return -EINVAL;
	}
	if (ref + 1 >= LJT_REF_BIAS)
		return -EINVAL;
	err = ir__ins(t, ref + 1, v);
	if (!err)
		*val = le(v, 8);
	return err;
}

/* The bytecode address a dynamic function ref is guarded on, or 0. */
uint64_t ljt__guarded_bc(struct ljt *t, uint32_t ref)
{
	uint8_t b[IRINS], x[IRINS];
	uint32_t r, n = t->h.nins - LJT_REF_BIAS, op1, op2;
	uint64_t bc;

	if (ref < LJT_REF_BIAS || ref >= t->h.nins || n > IR_SCAN_MAX)
		return 0;
	for (r = ref + 1; r < t->h.nins; r++) {
		if (ir__ins(t, r, b))
			return 0;
		if (b[5] != LJT_IR_EQ)
			continue;
		op1 = (uint32_t)le(b, 2);
		op2 = (uint32_t)le(b + 2, 2);
		if (op1 <= ref || op1 >= r || op2 >= LJT_REF_BIAS || ir__ins(t, op1, x) ||
		    le(x, 2) != ref)
			continue;
		if (ir__ins(t, op2, x) || x[5] != LJT_IR_KPTR || ljt__k64(t, op2, &bc))
			continue;
		return bc;
	}
	return 0;
}

/* -- Calls the trace makes -------------------------------------------------- */

/* A snapshot's IR ref (SnapShot.ref: the first instruction it covers);
 * nins for the end of the last one. */
static int snap__ref(struct ljt *t, uint32_t i, uint32_t *v)
{
	if (i < t->h.nsnap)
		return snap__field(t, i, t->lay->snap_ref, 2, v);
	*v = t->h.nins;
	return 0;
}

/* Side-effecting calls (CALLS, CALLXS) in IR [lo, hi): how many, and the
 * last one (*last, when any).  -EINVAL past the IR, -EFAULT unreadable. */
static int ir__calls(struct ljt *t, uint32_t lo, uint32_t hi, uint32_t *n, uint32_t *last)
{
	uint8_t b[IRINS];
	uint32_t r;

	*n = 0;
	if (lo < LJT_REF_BIAS || hi > t->h.nins || lo > hi || hi - lo > IR_SCAN_MAX)
		return -EINVAL;
	for (r = lo; r < hi; r++) {
		if (ir__ins(t, r, b))
			return -EFAULT;
		if (b[5] == LJT_IR_CALLS || b[5] == LJT_IR_CALLXS) {
			(*n)++;
			*last = r;
		}
	}
	return 0;
}

/* Of the side-effecting calls in IR [lo, hi), the CALLXS whose function is
 * the constant target (op2 a KPTR/KKPTR/KINT64, lj_crecord.c crec_call):
 * 0 with *c when exactly one is; -ENOENT when none has a constant function
 * (CALLS: an IR call id; a computed pointer); -ESRCH else. */
static int ir__call_to(struct ljt *t, uint32_t lo, uint32_t hi, uint64_t target, uint32_t *c)
{
	uint8_t b[IRINS];
	uint32_t r, op2, m = 0, nconst = 0, hit = 0;
	uint64_t f;

	for (r = lo; r < hi; r++) {
		if (ir__ins(t, r, b))
			return -EFAULT;
		op2 = (uint32_t)le(b + 2, 2);
		if (b[5] != LJT_IR_CALLXS || op2 >= LJT_REF_BIAS || ljt__k64(t, op2, &f))
			continue;
		nconst++;
		if (f == target) {
			m++;
			hit = r;
		}
	}
	if (m == 1) {
		*c = hit;
		return 0;
	}
	return nconst ? -ESRCH : -ENOENT;
}

/* The IR ref of the LOOP instruction before ref, or 0 (no loop). */
static uint32_t ir__loop(struct ljt *t, uint32_t ref)
{
	uint8_t b[IRINS];
	uint32_t r;

	for (r = ref; r-- > LJT_REF_BIAS;)
		if (ir__ins(t, r, b) == 0 && b[5] == LJT_IR_LOOP)
			return r;
	return 0;
}

/* The pre-loop original of side-effecting call c in the loop body after
 * the LOOP at loop: lj_opt_loop.c re-emits [REF_FIRST, LOOP) in order and
 * never folds a call with side effects, so the k-th such call of the body
 * copies the k-th of the pre-loop part.  0, or -ESRCH when the counts of
 * the two parts differ. */
static int call__orig(struct ljt *t, uint32_t loop, uint32_t c, uint32_t *orig)
{
	uint8_t b[IRINS];
	uint32_t npre, nbody, k, r, last = 0;

	if (ir__calls(t, LJT_REF_BIAS + 1, loop, &npre, &last) ||
	    ir__calls(t, loop + 1, t->h.nins, &nbody, &last) || npre != nbody ||
	    ir__calls(t, loop + 1, c, &k, &last))
		return -ESRCH;
	for (r = LJT_REF_BIAS + 1; r < loop; r++) {
		if (ir__ins(t, r, b))
			return -EFAULT;
		if ((b[5] == LJT_IR_CALLS || b[5] == LJT_IR_CALLXS) && k-- == 0) {
			*orig = r;
			return 0;
		}
	}
	return -ESRCH;
}

/* Is every instruction in (c, end) the call's result conversion
 * (lj_crecord.c crec_call: CNEWI of the result, CONV of it) or a NOP
 * left by DCE? */
static int call__result_only(struct ljt *t, uint32_t c, uint32_t end)
{
	uint8_t b[IRINS];
	uint32_t r;

	for (r = c + 1; r < end; r++) {
		if (ir__ins(t, r, b))
			return 0;
		if (b[5] == LJT_IR_NOP || (b[5] == LJT_IR_CONV && le(b, 2) == c) ||
		    (b[5] == LJT_IR_CNEWI && le(b + 2, 2) == c))
			continue;
		return 0;
	}
	return 1;
}

/* The snapshot after side-effecting call c that holds its frames: its
 * pre-loop original when c is in a loop body, then the first snapshot
 * after that, when only the call's result conversion lies between them.
 * 0 with *out, -ESRCH, -EFAULT. */
static int call__snap(struct ljt *t, uint32_t c, uint32_t *out)
{
	uint32_t loop = ir__loop(t, c), i, ref = 0;
	int err;

	if (loop && (err = call__orig(t, loop, c, &c)))
		return err;
	/* The first snapshot after the call: lj_ir.c lj_ir_call and crec_call
	 * set J->needsnap, so lj_record_ins takes one before the next bytecode. */
	for (i = 0; i < t->h.nsnap; i++) {
		if ((err = snap__ref(t, i, &ref)))
			return err;
		if (ref > c)
			break;
	}
	if (i >= t->h.nsnap || (loop && ref > loop) || !call__result_only(t, c, ref))
		return -ESRCH;
	*out = i;
	return 0;
}

/* The IR range [*lo, *hi) of snapshot snapno's code. */
static int snap__range(struct ljt *t, uint32_t snapno, uint32_t *lo, uint32_t *hi)
{
	int err;

	if (!t->lay || t->lay->snap_ref + 2 > t->lay->snap_size || snapno >= t->h.nsnap)
		return -EINVAL;
	if ((err = snap__ref(t, snapno, lo)) || (err = snap__ref(t, snapno + 1, hi)))
		return err;
	if (*lo < LJT_REF_BIAS)
		*lo = LJT_REF_BIAS;
	return 0;
}

/* The snapshot holding the frames of the side-effecting call in snapshot
 * snapno's code (see ljtrace.h). */
int ljt__snap_call(struct ljt *t, uint32_t snapno, uint64_t target, uint32_t *out)
{
	uint32_t lo, hi, n, c = 0;
	int err;

	if ((err = snap__range(t, snapno, &lo, &hi)) || (err = ir__calls(t, lo, hi, &n, &c)))
		return err;
	if (n == 0)
		return -ENOENT;
	/* Several calls (their post-call snapshots merged, lj_snap_add, or
	 * lj_opt_loop.c's copies): the one to the function the sample's call
	 * went to. */
	err = target ? ir__call_to(t, lo, hi, target, &c) : -ENOENT;
	if (err == -ENOENT && n > 1)	/* none to tell the calls apart by */
		err = -ESRCH;
	if (err && err != -ENOENT)
		return err;
	return call__snap(t, c, out);
}

/* The snapshots of every side-effecting call in snapshot snapno's code, in
 * IR order (see ljtrace.h). */
int ljt__snap_calls(struct ljt *t, uint32_t snapno, uint32_t *out, uint32_t max, uint32_t *n)
{
	uint8_t b[IRINS];
	uint32_t lo, hi, r;
	int err;

	*n = 0;
	if ((err = snap__range(t, snapno, &lo, &hi)))
		return err;
	if (hi - lo > IR_SCAN_MAX || hi > t->h.nins)
		return -EINVAL;
	for (r = lo; r < hi; r++) {
		if (ir__ins(t, r, b))
			return -EFAULT;
		if (b[5] != LJT_IR_CALLS && b[5] != LJT_IR_CALLXS)
			continue;
		if (*n >= max)
			return -E2BIG;
		if ((err = call__snap(t, r, &out[*n])))
			return err;
		(*n)++;
	}
	return *n ? 0 : -ENOENT;
}

/* -- Snapshot decoding ---------------------------------------------------------- */

/* The function a snapshot entry's ref names: fn for a KGC function, else the
 * prototype of a guarded dynamic closure (fr->pt). */
static void frame__fn(struct ljt *t, uint32_t ref, struct ljt_frame *fr)
{
	uint64_t obj, bc;
	uint8_t irt;

	fr->fn = fr->pt = 0;
	if (ref < LJT_REF_BIAS) {
		if (ljt__kgc(t, ref, &obj, &irt) == 0 && irt == LJT_IRT_FUNC)
			fr->fn = obj;
		return;
	}
	bc = ljt__guarded_bc(t, ref);
	if (bc > t->lay->pt_size)
		fr->pt = bc - t->lay->pt_size;
}

/* Decode snapshot snapno. */
int ljt__snap_decode(struct ljt *t, uint32_t snapno, struct ljt_snap *out)
{
	uint32_t mapofs, nextofs, nent, nslots, words, i, map[2 * 256 + 2];
	uint32_t nlinks = 0, nconsumers = 0, k = 0;
	int32_t last = -1;
	uint8_t raw[sizeof(map)];
	int err;

	memset(out, 0, offsetof(struct ljt_snap, frames));
	out->ncont = 0;
	out->snapno = snapno;
	out->topslot = -1;
	if (snapno >= t->h.nsnap)
		return -EINVAL;
	if ((err = snap__field(t, snapno, t->lay->snap_mapofs, 4, &mapofs)) ||
	    (err = snap__field(t, snapno, t->lay->snap_nent, 1, &nent)) ||
	    (err = snap__field(t, snapno, t->lay->snap_nslots, 1, &nslots)))
		return err;
	nextofs = t->h.nsnapmap;
	if (snapno + 1 < t->h.nsnap &&
	    (err = snap__field(t, snapno + 1, t->lay->snap_mapofs, 4, &nextofs)))
		return err;
	if (mapofs > nextofs || nextofs > t->h.nsnapmap)
		return -EINVAL;
	words = nextofs - mapofs;
	if (words < nent + 1 + t->fr2 || words > sizeof(map) / 4)
		return -EINVAL;
	if (t->fr2)
		words = nent + 2;	/* exactly the u64 PC word follows */
	err = buf__read(t, &t->map, 4 * (uint64_t)mapofs, raw, 4 * (size_t)words);
	if (err)
		return err;
	for (i = 0; i < words; i++)
		map[i] = (uint32_t)le(raw + 4 * i, 4);
	out->nent = nent;
	out->nslots = nslots;
	if (t->fr2) {
		uint64_t w = (uint64_t)map[nent] | (uint64_t)map[nent + 1] << 32;

		out->pc = w >> 8;
		out->topslot = (int32_t)(w & 0xff);
	} else {
		out->pc = map[nent];
		nlinks = words - nent - 1;
		for (i = 0; i < nent; i++)
			if ((map[i] >> 24) != 0 && (map[i] & (LJT_SNAP_FRAME | LJT_SNAP_CONT)))
				nconsumers++;
		if (nconsumers != nlinks)
			return -EINVAL;
	}
	for (i = 0; i < nent; i++) {
		uint32_t e = map[i], ref = e & 0xffff;
		int32_t slot = (int32_t)(e >> 24);
		uint64_t link = 0;

		if (slot <= last)	/* entries are sorted by slot, one per slot */
			return -EINVAL;
		last = slot;
		if (slot == 0 && !(e & LJT_SNAP_CONT)) {
			struct ljt_frame f0;

			frame__fn(t, ref, &f0);
			out->root_fn = f0.fn;
			continue;
		}
		if (!t->fr2 && (e & (LJT_SNAP_FRAME | LJT_SNAP_CONT))) {
			link = map[nent + nlinks - k];	/* from the end, ascending slots */
			k++;
		}
		if (e & LJT_SNAP_CONT) {
			if (t->fr2 && ljt__k64(t, ref, &link))
				return -EINVAL;
			if (out->ncont >= LJT_MAX_FRAMES)
				return -EINVAL;
			out->cont_slot[out->ncont] = slot;
			out->cont_pc[out->ncont++] = link;
			continue;
		}
		if (!(e & LJT_SNAP_FRAME))
			continue;
		if (out->nframes >= LJT_MAX_FRAMES)
			return -EINVAL;
		if (t->fr2) {
			struct ljt_frame *f;

			if (slot < 2)	/* slot 1: the base frame was tail-called */
				continue;
			if (ljt__k64(t, ref, &link))
				return -EINVAL;
			f = &out->frames[out->nframes++];
			memset(f, 0, sizeof(*f));
			f->slot = slot - 1;
			f->link = link;
			f->has_link = 1;
			/* The function is the previous entry, in the slot below. */
			if (i > 0 && (int32_t)(map[i - 1] >> 24) == slot - 1 &&
			    !(map[i - 1] & (LJT_SNAP_FRAME | LJT_SNAP_CONT)))
				frame__fn(t, map[i - 1] & 0xffff, f);
		} else {
			struct ljt_frame *f = &out->frames[out->nframes++];

			memset(f, 0, sizeof(*f));
			f->slot = slot;
			f->link = link;
			f->has_link = 1;
			frame__fn(t, ref, f);
		}
	}
	return 0;
}
