/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljdecode.h -- the one seam between the walker and a build's encoding.
 *
 * GC64 and non-GC64 builds differ in reference width (8 or 4 bytes), frame
 * header shape (FR2: two slots, function TValue + 64-bit ftsz; otherwise one
 * slot, GCRef in the low word and ftsz in the high word), continuation frame
 * headers, TValue tag position and the cframe slot widths.  Everything that
 * depends on that lives here, driven by struct lj_layout, so a non-GC64 build
 * is data, not another walker.  Every read goes through a struct memsrc.
 */
#ifndef LJSNAP_LJDECODE_H
#define LJSNAP_LJDECODE_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/ljlayout.h"
#include "unwind/memsrc.h"

/* Internal object type tags (gct byte = ~itype), the same in every tree. */
enum {
	LJD_GCT_STR = 4,
	LJD_GCT_UPVAL = 5,
	LJD_GCT_THREAD = 6,
	LJD_GCT_PROTO = 7,
	LJD_GCT_FUNC = 8,
	LJD_GCT_TRACE = 9,
	LJD_GCT_TAB = 11,
};
#define LJD_ITYPE_FUNC		0xfffffff7u
#define LJD_ITYPE_THREAD	0xfffffff9u

/* Frame link types (ftsz & 7). */
enum {
	LJD_FRAME_LUA = 0, LJD_FRAME_C = 1, LJD_FRAME_CONT = 2, LJD_FRAME_VARG = 3,
	LJD_FRAME_LUAP = 4, LJD_FRAME_CP = 5, LJD_FRAME_PCALL = 6, LJD_FRAME_PCALLH = 7,
};
#define LJD_CONT_TAILCALL	0
#define LJD_CONT_FFI_CALLBACK	1

/* One decoded frame header; f is the frame address (BASE - 8). */
struct ljd_frame {
	uint64_t fn;		/* function (or thread, for dummy frames) */
	uint32_t fn_itype;	/* FR2: tag of the function slot; else 0 */
	int64_t ftsz;		/* PC or typed delta, sign-extended */
};

struct ljd {
	const struct lj_layout *lay;
	const struct memsrc *ms;
	uint32_t fr2;		/* 1: two-slot frame headers (GC64) */
	uint32_t ref;		/* GCRef/MRef width: 8 or 4 */
	uint32_t gct_ofs;	/* GCHeader.gct: after nextgc and marked */
	uint32_t hdr_bytes;	/* frame header bytes below BASE: 8 * (1 + fr2) */
	/* ljd__frame's last two answers (at addresses f + 1, 0: none): the
	 * memory does not change between ljd__init and the next one */
	uint64_t fr_at[2];
	struct ljd_frame fr_memo[2];
	unsigned fr_next;
};

/* Set up a decoder; -EINVAL if the layout cannot be decoded. */
int ljd__init(struct ljd *d, const struct lj_layout *lay, const struct memsrc *ms);

/* A GCRef/MRef at addr (zero-extended), a plain 8-byte pointer, an i32. */
int ljd__ref(const struct ljd *d, uint64_t addr, uint64_t *v);
int ljd__ptr(const struct ljd *d, uint64_t addr, uint64_t *v);
int ljd__i32(const struct ljd *d, uint64_t addr, int32_t *v);

/* The gct byte of a GC object. */
int ljd__gct(const struct ljd *d, uint64_t obj, uint8_t *gct);

/* Decode a TValue's tag / GC pointer. */
uint32_t ljd__tv_itype(const struct ljd *d, uint64_t tv);
uint64_t ljd__tv_gcval(const struct ljd *d, uint64_t tv);

/* Read the frame header at f (BASE - 8). */
int ljd__frame(struct ljd *d, uint64_t f, struct ljd_frame *fr);
/* Continuation header of a CONT frame at f: the PC and the special value. */
int ljd__contpc(const struct ljd *d, uint64_t f, uint64_t *pc);
int ljd__contv(const struct ljd *d, uint64_t f, uint64_t *v);
/* A Lua return PC as stored in ftsz (non-FR2: 32-bit). */
uint64_t ljd__ftsz_pc(const struct ljd *d, int64_t ftsz);
/* Mask a register value the way the interpreter uses it (edx/ebx in non-GC64). */
uint64_t ljd__reg(const struct ljd *d, uint64_t r);

/* Interpreter C frame (cframe) slots. */
int ljd__cf_prev(const struct ljd *d, uint64_t cf, uint64_t *prev);
int ljd__cf_pc(const struct ljd *d, uint64_t cf, uint64_t *pc);
int ljd__cf_L(const struct ljd *d, uint64_t cf, uint64_t *L);
int ljd__cf_nres(const struct ljd *d, uint64_t cf, int32_t *nres);

/* Bytecode instruction fields. */
static inline uint32_t ljd_bc_op(uint32_t ins) { return ins & 0xff; }
static inline uint32_t ljd_bc_a(uint32_t ins) { return (ins >> 8) & 0xff; }
static inline uint32_t ljd_bc_b(uint32_t ins) { return ins >> 24; }
static inline uint32_t ljd_bc_c(uint32_t ins) { return (ins >> 16) & 0xff; }
static inline uint32_t ljd_bc_d(uint32_t ins) { return ins >> 16; }

#endif /* LJSNAP_LJDECODE_H */
