/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljwalk_proto.c -- the walker's result arena, the per-walk prototype cache,
 * bytecode positions, line numbers, string reads and function objects.
 *
 * A prototype is read coarsely: its header, then its whole allocation
 * (sizept bytes from pt: header, bytecode, upvalue map, constants, line info,
 * upvalue and variable names), so a recording memory source stores it as
 * one range.  If that read fails, the pieces are read one by one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/vec.h"
#include "unwind/ljwalk_int.h"

#define ARENA_BLK	(64 * 1024)
#define ARENA_KEEP	(64u * 1024 * 1024)	/* blocks kept across walks */
#define PROTO_WHOLE_MAX	(16u * 1024 * 1024)	/* larger protos are read piecewise */
#define PROTO_SIZEPT_MAX (1u << 30)		/* beyond this a header is garbage */
#define SIZEBC_MAX	(1u << 26)

/* -- Arena ----------------------------------------------------------------- */

/* Forget every allocation but keep (most of) the blocks for the next walk. */
void ljw__arena_reset(struct ljw *w)
{
	struct ljw_blk *b, **pp = &w->blk;
	size_t kept = 0;

	while ((b = *pp) != NULL) {
		if (kept + b->cap > ARENA_KEEP) {
			*pp = b->next;
			free(b);
			continue;
		}
		kept += b->cap;
		b->used = 0;
		pp = &b->next;
	}
}

/* Allocate size bytes (8-aligned) that live until the next walk. */
void *ljw__alloc(struct ljw *w, size_t size)
{
	struct ljw_blk *b;
	size_t need = (size + 7) & ~(size_t)7, cap;

	if (need < size)
		goto fail;
	for (b = w->blk; b; b = b->next)
		if (b->cap - b->used >= need)
			break;
	if (!b) {
		cap = need > ARENA_BLK ? need : ARENA_BLK;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			goto fail;
		b->cap = cap;
		b->used = 0;
		b->next = w->blk;
		w->blk = b;
	}
	b->used += need;
	return b->data + b->used - need;
fail:
	w->nomem = 1;
	return NULL;
}

/* Copy n bytes of s into the arena as a NUL-terminated string. */
const char *ljw__strndup(struct ljw *w, const char *s, size_t n)
{
	char *p = ljw__alloc(w, n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* -- Prototype cache ------------------------------------------------------- */

/* Drop every cached prototype and what the walks before read (called at
 * the start of a walk). */
void ljw__protos_reset(struct ljw *w)
{
	w->nprotos = 0;
	intmap__clear(&w->byaddr);
	if (++w->walkno == 0) {		/* forget the objects every walk read */
		memset(w->fnc, 0, sizeof(w->fnc));
		memset(w->strc, 0, sizeof(w->strc));
		w->walkno = 1;
	}
}

/* Read a GCstr: len bytes at str + str_size, at most cap, into the arena.
 * Long strings keep their first and last cap/2 bytes joined by "...". */
static const char *gcstr__read(struct ljw *w, uint64_t str, uint32_t cap, uint32_t *lenp)
{
	const struct lj_layout *lay = w->d.lay;
	uint32_t len, half;
	uint8_t gct;
	char *buf;

	uint8_t hdr[64];

	/* One read of the header (gct, len), then one of the bytes. */
	if (str == 0 || lay->str_size > sizeof(hdr) || lay->str_len + 4 > lay->str_size ||
	    w->d.gct_ofs >= lay->str_size || memsrc__read(w->d.ms, str, hdr, lay->str_size))
		return NULL;
	gct = hdr[w->d.gct_ofs];
	len = (uint32_t)hdr[lay->str_len] | (uint32_t)hdr[lay->str_len + 1] << 8 |
	      (uint32_t)hdr[lay->str_len + 2] << 16 | (uint32_t)hdr[lay->str_len + 3] << 24;
	if (gct != LJD_GCT_STR)
		return NULL;
	if (len <= cap) {
		buf = ljw__alloc(w, (size_t)len + 1);
		if (!buf || memsrc__read(w->d.ms, str + lay->str_size, buf, len))
			return NULL;
		buf[len] = '\0';
		*lenp = len;
		return buf;
	}
	half = cap / 2;
	buf = ljw__alloc(w, (size_t)half * 2 + 4);
	if (!buf || memsrc__read(w->d.ms, str + lay->str_size, buf, half) ||
	    memsrc__read(w->d.ms, str + lay->str_size + len - half, buf + half + 3, half))
		return NULL;
	memcpy(buf + half, "...", 3);
	buf[half * 2 + 3] = '\0';
	*lenp = half * 2 + 3;
	return buf;
}

/* The string, once per walk: the prototypes of one chunk share its name,
 * and the walk's memory does not change while it runs. */
const char *ljw__gcstr(struct ljw *w, uint64_t str, uint32_t cap, uint32_t *lenp)
{
	struct ljw_strc *c = &w->strc[(str ^ str >> 6 ^ str >> 12) & (LJW_STRC_SLOTS - 1)];
	const char *s;
	uint32_t len;

	if (c->walk == w->walkno && c->str == str && c->cap == cap) {
		if (lenp)
			*lenp = c->len;
		return c->s;
	}
	s = gcstr__read(w, str, cap, &len);
	if (!s)
		return NULL;
	c->walk = w->walkno;
	c->str = str;
	c->cap = cap;
	c->len = len;
	c->s = s;
	if (lenp)
		*lenp = len;
	return s;
}

/* Read and validate a prototype header, then try to read it whole. */
static void proto__load(struct ljw *w, struct ljw_proto *p)
{
	const struct lj_layout *lay = w->d.lay;
	const struct memsrc *ms = w->d.ms;
	uint8_t hdr[512], *whole;
	uint8_t gct;
	uint32_t hl = lay->pt_size, r = w->d.ref;
	uint64_t v;

#define RD_U32(ofs) ((uint32_t)hdr[ofs] | (uint32_t)hdr[(ofs) + 1] << 8 | \
		     (uint32_t)hdr[(ofs) + 2] << 16 | (uint32_t)hdr[(ofs) + 3] << 24)
#define RD_REF(ofs) (r == 8 ? ((uint64_t)RD_U32((ofs) + 4) << 32 | RD_U32(ofs)) : RD_U32(ofs))
	p->err = LJW_R_BAD_PROTO;
	if (hl == 0 || hl > sizeof(hdr))
		return;
	if (memsrc__read(ms, p->pt, hdr, hl)) {
		p->err = LJW_R_PROTO_UNREADABLE;
		return;
	}
	gct = hdr[w->d.gct_ofs];
	if (gct != LJD_GCT_PROTO)
		return;
	p->numparams = hdr[lay->pt_numparams];
	p->sizebc = RD_U32(lay->pt_sizebc);
	p->sizept = RD_U32(lay->pt_sizept);
	p->sizekgc = RD_U32(lay->pt_sizekgc);
	p->sizeuv = hdr[lay->pt_sizeuv];
	p->flags = hdr[lay->pt_flags];
	p->firstline = (int32_t)RD_U32(lay->pt_firstline);
	p->numline = (int32_t)RD_U32(lay->pt_numline);
	p->k = RD_REF(lay->pt_k);
	p->lineinfo = RD_REF(lay->pt_lineinfo);
	p->uvinfo = RD_REF(lay->pt_uvinfo);
	p->varinfo = RD_REF(lay->pt_varinfo);
	p->chunkname_ref = RD_REF(lay->pt_chunkname);
#undef RD_U32
#undef RD_REF
	if (p->sizebc == 0 || p->sizebc > SIZEBC_MAX || p->sizept > PROTO_SIZEPT_MAX ||
	    p->sizept < hl + 4 * p->sizebc || p->numline < 0)
		return;
	p->err = LJW_R_NONE;
	/* One coarse read of the whole allocation (the recorder stores it). */
	if (p->sizept <= PROTO_WHOLE_MAX) {
		whole = ljw__alloc(w, p->sizept);
		if (whole && memsrc__read(ms, p->pt, whole, p->sizept) == 0) {
			p->mem = whole;
			p->memlen = p->sizept;
		}
	}
	v = p->chunkname_ref;
	p->chunkname = ljw__gcstr(w, v, 4096, &p->chunkname_len);
}

/* The prototype at pt (cached per walk); NULL only when out of memory. */
struct ljw_proto *ljw__proto(struct ljw *w, uint64_t pt)
{
	struct ljw_proto *p;
	uint64_t *idx;
	int found = intmap__slot(&w->byaddr, pt, &idx);

	if (found < 0)
		goto nomem;
	if (found)
		return &w->protos[*idx];
	if (VEC_GROW(w->protos, &w->capprotos, w->nprotos + 1) != 0) {
		intmap__del(&w->byaddr, pt);
		goto nomem;
	}
	*idx = w->nprotos;
	p = &w->protos[w->nprotos++];
	memset(p, 0, sizeof(*p));
	p->pt = pt;
	proto__load(w, p);
	return p;
nomem:
	w->nomem = 1;
	return NULL;
}

/* Copy bytes of a prototype's allocation (cached) or through the memsrc. */
int ljw__proto_read(struct ljw *w, const struct ljw_proto *p, uint64_t addr,
		    void *buf, size_t len)
{
	if (p->mem && addr >= p->pt && addr + len >= addr &&
	    addr + len <= p->pt + p->memlen) {
		memcpy(buf, p->mem + (addr - p->pt), len);
		return 0;
	}
	return memsrc__read(w->d.ms, addr, buf, len);
}

/* Instruction at a bytecode index. */
int ljw__proto_ins(struct ljw *w, const struct ljw_proto *p, uint32_t pos, uint32_t *ins)
{
	uint8_t b[4];

	if (p->err != LJW_R_NONE || pos >= p->sizebc)
		return -ERANGE;
	/* A whole allocation holds all of the bytecode (proto__load checked
	 * sizept >= pt_size + 4 * sizebc): what ljw__proto_read would copy. */
	if (p->mem)
		memcpy(b, p->mem + w->d.lay->pt_size + 4 * (size_t)pos, 4);
	else if (ljw__proto_read(w, p, p->pt + w->d.lay->pt_size + 4 * (uint64_t)pos, b, 4))
		return -EFAULT;
	*ins = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
	return 0;
}

/* Bytecode index of the instruction before a saved PC, or -1 (see header). */
int32_t ljw__proto_pos(struct ljw *w, const struct ljw_proto *p, uint64_t pc)
{
	const struct lj_layout *lay = w->d.lay;
	uint64_t bc, T, startpc;
	uint32_t ins, op;
	uint8_t gct;

	if (!p || p->err != LJW_R_NONE || pc == 0 || (pc & 3))
		return -1;
	bc = p->pt + lay->pt_size;
	if (pc > bc && pc <= bc + 4 * (uint64_t)p->sizebc)
		return (int32_t)((pc - bc) / 4 - 1);
	/* JLOOP quirk: lj_trace_exit can leave a PC just after GCtrace.startins
	 * when the trace started at a RET* or ITERN; the position is startpc. */
	if (lay->t_startins == 0 || pc < 4 + lay->t_startins)
		return -1;
	if (memsrc__u32(w->d.ms, pc - 4, &ins))
		return -1;
	op = ljd_bc_op(ins);
	if (!((op >= LJW_BC_RETM && op <= LJW_BC_RET1) || op == LJW_BC_ITERN))
		return -1;
	T = pc - 4 - lay->t_startins;
	if (ljd__gct(&w->d, T, &gct) || gct != LJD_GCT_TRACE)
		return -1;
	if (ljd__ref(&w->d, T + lay->t_startpc, &startpc))
		return -1;
	if (startpc < bc || startpc >= bc + 4 * (uint64_t)p->sizebc || (startpc & 3))
		return -1;
	return (int32_t)((startpc - bc) / 4);
}

/* Line of a bytecode index (LuaJIT lj_debug_line); 0 if no line info. */
int ljw__proto_line(struct ljw *w, const struct ljw_proto *p, uint32_t pos)
{
	uint8_t b[4] = { 0 };
	uint32_t width, v;

	if (p->err != LJW_R_NONE || p->lineinfo == 0 || pos > p->sizebc)
		return 0;
	if (pos == p->sizebc)
		return p->firstline + p->numline;
	if (pos == 0)
		return p->firstline;
	width = p->numline < 256 ? 1 : p->numline < 65536 ? 2 : 4;
	if (ljw__proto_read(w, p, p->lineinfo + (uint64_t)(pos - 1) * width, b, width))
		return -1;
	v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	    (uint32_t)b[3] << 24;
	return p->firstline + (int32_t)v;
}

/* -- Function objects ------------------------------------------------------ */

/* Read a function object's gct, ffid, pc and (C functions) f: one read of
 * its header when possible, so a recording source stores one range. */
int ljw__fn_read(struct ljw *w, uint64_t fn, uint8_t *gct, uint8_t *ffid, uint64_t *pc,
		 uint64_t *cfn)
{
	const struct lj_layout *lay = w->d.lay;
	uint32_t need = lay->fn_f + 8 > lay->fn_pc + w->d.ref ? lay->fn_f + 8 :
			lay->fn_pc + w->d.ref;
	struct ljw_fnc *c = &w->fnc[(fn ^ fn >> 6 ^ fn >> 12) & (LJW_FNC_SLOTS - 1)];
	uint8_t b[64];

	*pc = *cfn = 0;
	if (fn == 0)
		return -EFAULT;
	if (c->walk == w->walkno && c->fn == fn) {	/* read before in this walk */
		*gct = c->gct;
		*ffid = c->ffid;
		*pc = c->pc;
		*cfn = c->cfn;
		return 0;
	}
	if (need <= sizeof(b) && lay->fn_ffid < need && w->d.gct_ofs < need &&
	    memsrc__read(w->d.ms, fn, b, need) == 0) {
		*gct = b[w->d.gct_ofs];
		*ffid = b[lay->fn_ffid];
		memcpy(pc, b + lay->fn_pc, w->d.ref);	/* little endian; upper bytes zero if ref == 4 */
		memcpy(cfn, b + lay->fn_f, 8);
		goto keep;
	}
	/* The header crosses the end of what is readable: field by field. */
	if (ljd__gct(&w->d, fn, gct) || memsrc__u8(w->d.ms, fn + lay->fn_ffid, ffid) ||
	    ljd__ref(&w->d, fn + lay->fn_pc, pc))
		return -EFAULT;
	if (*ffid != 0 && ljd__ptr(&w->d, fn + lay->fn_f, cfn))
		*cfn = 0;
keep:
	c->walk = w->walkno;
	c->fn = fn;
	c->gct = *gct;
	c->ffid = *ffid;
	c->pc = *pc;
	c->cfn = *cfn;
	return 0;
}

/* Fill a Lua frame from its prototype: chunk, lines, position of pc. */
struct ljw_proto *ljw__frame_fill_proto(struct ljw *w, struct ljw_frame *o, uint64_t pt,
					uint64_t pc, enum ljw_reason *err)
{
	struct ljw_proto *p;

	*err = LJW_R_NONE;
	o->kind = LJW_FRAME_LUA;
	p = ljw__proto(w, pt);
	if (!p) {
		*err = LJW_R_NOMEM;
		return NULL;
	}
	if (p->err != LJW_R_NONE) {
		*err = p->err;
		return NULL;
	}
	o->pt = p->pt;
	o->linedefined = p->firstline;
	o->chunkname = p->chunkname;
	o->chunk = p->chunkname && (p->chunkname[0] == '@' || p->chunkname[0] == '=') ?
		   p->chunkname + 1 : p->chunkname;
	if (p->firstline == 0 && p->numline != 0)
		o->flags |= LJW_F_MAIN;
	if (p->firstline == -1)
		o->flags |= LJW_F_BUILTIN_LUA;
	o->pos = ljw__proto_pos(w, p, pc);
	if (o->pos >= 0) {
		o->pc = pc;
		o->line = ljw__proto_line(w, p, (uint32_t)o->pos);
	} else {
		o->flags |= LJW_F_NOPC;
	}
	return p;
}

/* Fill a frame from a function object; returns its prototype for Lua. */
struct ljw_proto *ljw__frame_fill(struct ljw *w, struct ljw_frame *o, uint64_t fn,
				     uint64_t pc, enum ljw_reason *err)
{
	const struct lj_layout *lay = w->d.lay;
	uint64_t fpc, cfn;
	uint8_t gct, ffid;

	*err = LJW_R_NONE;
	o->fn = fn;
	if (ljw__fn_read(w, fn, &gct, &ffid, &fpc, &cfn)) {
		*err = LJW_R_FUNC_UNREADABLE;
		return NULL;
	}
	if (gct != LJD_GCT_FUNC) {
		*err = LJW_R_BAD_FUNC;
		return NULL;
	}
	o->ffid = ffid;
	if (ffid != 0) {
		o->kind = ffid == 1 ? LJW_FRAME_C : LJW_FRAME_FF;
		o->cfunc = cfn;
		if (ffid >= 2)
			o->ffname = ljw_ffname((enum lj_family)lay->family, ffid);
		return NULL;
	}
	o->kind = LJW_FRAME_LUA;
	if (fpc < lay->pt_size) {
		*err = LJW_R_BAD_FUNC;
		return NULL;
	}
	return ljw__frame_fill_proto(w, o, fpc - lay->pt_size, pc, err);
}
