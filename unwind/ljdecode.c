/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljdecode.c -- GC64 / non-GC64 decoding of references, TValues, frame
 * headers and C frames.  See ljdecode.h.
 */
#include <endian.h>
#include <errno.h>

#include "unwind/ljdecode.h"

#define GCVMASK		((UINT64_C(1) << 47) - 1)

/* Set up a decoder; -EINVAL if the layout cannot be decoded. */
int ljd__init(struct ljd *d, const struct lj_layout *lay, const struct memsrc *ms)
{
	if (!d || !lay || !ms)
		return -EINVAL;
	if (lay->ref_size != 4 && lay->ref_size != 8)
		return -EINVAL;
	d->lay = lay;
	d->ms = ms;
	d->ref = lay->ref_size;
	/* FR2 is defined to be exactly GC64 in every tree. */
	d->fr2 = (lay->flags & LJ_LAYOUT_F_GC64) ? 1 : 0;
	if (d->fr2 != (d->ref == 8))
		return -EINVAL;
	d->gct_ofs = d->ref + 1;
	d->hdr_bytes = 8 * (1 + d->fr2);
	d->fr_at[0] = d->fr_at[1] = 0;
	d->fr_next = 0;
	return 0;
}

/* A GCRef/MRef at addr, zero-extended. */
int ljd__ref(const struct ljd *d, uint64_t addr, uint64_t *v)
{
	uint32_t v32;
	int err;

	if (d->ref == 8)
		return memsrc__u64(d->ms, addr, v);
	err = memsrc__u32(d->ms, addr, &v32);
	if (err == 0)
		*v = v32;
	return err;
}

/* A plain 8-byte pointer. */
int ljd__ptr(const struct ljd *d, uint64_t addr, uint64_t *v)
{
	return memsrc__u64(d->ms, addr, v);
}

/* A signed 32-bit value. */
int ljd__i32(const struct ljd *d, uint64_t addr, int32_t *v)
{
	uint32_t u;
	int err = memsrc__u32(d->ms, addr, &u);

	if (err == 0)
		*v = (int32_t)u;
	return err;
}

/* The gct byte of a GC object. */
int ljd__gct(const struct ljd *d, uint64_t obj, uint8_t *gct)
{
	if (obj == 0)
		return -EFAULT;
	return memsrc__u8(d->ms, obj + d->gct_ofs, gct);
}

/* Decode a TValue's internal type tag. */
uint32_t ljd__tv_itype(const struct ljd *d, uint64_t tv)
{
	if (d->fr2)	/* arithmetic shift: tags are the top 17 bits */
		return (uint32_t)(uint64_t)((int64_t)tv >> 47);
	return (uint32_t)(tv >> 32);
}

/* Decode a TValue's GC pointer. */
uint64_t ljd__tv_gcval(const struct ljd *d, uint64_t tv)
{
	if (d->fr2)
		return tv & GCVMASK;
	return tv & 0xffffffffu;
}

/* ljd__frame's read. */
static int ljd__frame_read(const struct ljd *d, uint64_t f, struct ljd_frame *fr)
{
	uint64_t w[2];
	int err;

	if (d->fr2) {
		/* [f-8] = function TValue, [f] = 64-bit ftsz */
		if (f < 8)
			return -EFAULT;
		err = memsrc__read(d->ms, f - 8, w, sizeof(w));
		if (err)
			return err;
		w[0] = le64toh(w[0]);
		w[1] = le64toh(w[1]);
		fr->fn = ljd__tv_gcval(d, w[0]);
		fr->fn_itype = ljd__tv_itype(d, w[0]);
		fr->ftsz = (int64_t)w[1];
		return 0;
	}
	/* one slot: low word GCRef, high word int32 ftsz */
	err = memsrc__u64(d->ms, f, &w[0]);
	if (err)
		return err;
	fr->fn = w[0] & 0xffffffffu;
	fr->fn_itype = 0;
	fr->ftsz = (int64_t)(int32_t)(uint32_t)(w[0] >> 32);
	return 0;
}

/* Read the frame header at f (BASE - 8). */
int ljd__frame(struct ljd *d, uint64_t f, struct ljd_frame *fr)
{
	int err, i;

	/* The walker reads the top frame to choose BASE, then to walk it. */
	for (i = 0; i < 2; i++)
		if (d->fr_at[i] == f + 1) {
			*fr = d->fr_memo[i];
			return 0;
		}
	err = ljd__frame_read(d, f, fr);
	if (err == 0) {
		d->fr_at[d->fr_next] = f + 1;
		d->fr_memo[d->fr_next] = *fr;
		d->fr_next ^= 1;
	}
	return err;
}

/* The PC stored in a continuation frame's extra header. */
int ljd__contpc(const struct ljd *d, uint64_t f, uint64_t *pc)
{
	uint32_t v;
	int err;

	if (d->fr2)	/* (f-2)->ftsz */
		return f < 16 ? -EFAULT : memsrc__u64(d->ms, f - 16, pc);
	if (f < 8)	/* high word of f-1 */
		return -EFAULT;
	err = memsrc__u32(d->ms, f - 8 + 4, &v);
	if (err == 0)
		*pc = v;
	return err;
}

/* The continuation value (0 = tail call, 1 = FFI callback, else code). */
int ljd__contv(const struct ljd *d, uint64_t f, uint64_t *v)
{
	uint32_t v32;
	int err;

	if (d->fr2)	/* (f-3)->u64 */
		return f < 24 ? -EFAULT : memsrc__u64(d->ms, f - 24, v);
	if (f < 8)	/* low word of f-1 */
		return -EFAULT;
	err = memsrc__u32(d->ms, f - 8, &v32);
	if (err == 0)
		*v = v32;
	return err;
}

/* A Lua return PC as stored in ftsz. */
uint64_t ljd__ftsz_pc(const struct ljd *d, int64_t ftsz)
{
	return d->fr2 ? (uint64_t)ftsz : (uint64_t)ftsz & 0xffffffffu;
}

/* Mask a register value the way the interpreter uses it. */
uint64_t ljd__reg(const struct ljd *d, uint64_t r)
{
	return d->ref == 8 ? r : (r & 0xffffffffu);
}

/* SAVE_CFRAME: the previous cframe of the same thread (raw, with flag bits). */
int ljd__cf_prev(const struct ljd *d, uint64_t cf, uint64_t *prev)
{
	return memsrc__u64(d->ms, cf + d->lay->cf_prev, prev);
}

/* SAVE_PC (a reference-sized slot). */
int ljd__cf_pc(const struct ljd *d, uint64_t cf, uint64_t *pc)
{
	return ljd__ref(d, cf + d->lay->cf_pc, pc);
}

/* SAVE_L (a reference-sized slot). */
int ljd__cf_L(const struct ljd *d, uint64_t cf, uint64_t *L)
{
	return ljd__ref(d, cf + d->lay->cf_l, L);
}

/* SAVE_NRES. */
int ljd__cf_nres(const struct ljd *d, uint64_t cf, int32_t *nres)
{
	return ljd__i32(d, cf + d->lay->cf_nres, nres);
}
