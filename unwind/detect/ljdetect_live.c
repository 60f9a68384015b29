/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljdetect_live.c -- check and calibrate a layout against live memory.
 *
 * Everything reads through a memsrc, so the same code runs on a live
 * process (unwind/detect/livemem.c) or on captured windows.  GG_State places the
 * main lua_State right before g and the dispatch table after g and J:
 *   GG_State { lua_State L; global_State g; jit_State J; HotCount hc[64];
 *              ASMFunction dispatch[GG_LEN_DISP]; BCIns bcff[57]; }
 * so a g reached through any lua_State's glref gives, with no table,
 * GG_OFS(g) and GG_DISP2G.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/vec.h"
#include "unwind/detect/ljdetect.h"

#define LJD_G_SCAN	16384	/* bytes after g searched (GG_State is < 7 KiB) */
#define LJD_DISP_CHECK	16	/* dispatch entries that must point into the VM */

/* Read a GCRef/MRef of the layout's size. */
static int ljd__ref(const struct lj_layout *lay, const struct memsrc *ms, uint64_t a, uint64_t *v)
{
	uint32_t v32;
	int err;

	if (lay->ref_size == 8)
		return memsrc__u64(ms, a, v);
	err = memsrc__u32(ms, a, &v32);
	*v = v32;
	return err;
}

/* Is there a lua_State (gct 6) at L whose glref is g? */
static int ljd__is_thread_of(const struct lj_layout *lay, const struct memsrc *ms, uint64_t L,
			     uint64_t g)
{
	uint64_t v;
	uint8_t gct;

	return ljd__ref(lay, ms, L + lay->l_glref, &v) == 0 && v == g &&
	       memsrc__u8(ms, L + lay->ref_size + 1, &gct) == 0 && gct == 6;
}

/* Check g against the GG_State self-references. */
int lj_detect__validate_g(const struct lj_layout *lay, const struct memsrc *ms, uint64_t g)
{
	uint64_t L, v;
	uint8_t gct;
	uint32_t len;

	if (!lay || !ms || !g || (g & 7) || g < lay->gg_ofs_g || !lay->ref_size)
		return -EINVAL;
	if (lay->ref_size == 4 && g > UINT32_MAX)
		return -EINVAL;
	L = g - lay->gg_ofs_g;
	if (ljd__ref(lay, ms, g + lay->g_mainthref, &v) || v != L)
		return -EINVAL;
	/* The main thread: glref == g, and GC type LJ_TTHREAD (gct 6). */
	if (!ljd__is_thread_of(lay, ms, L, g))
		return -EINVAL;
	if (lay->g_strempty) {
		/* g->strempty: a GCstr with gct 4 (LJ_TSTR) and len 0. */
		if (memsrc__u8(ms, g + lay->g_strempty + lay->ref_size + 1, &gct) || gct != 4)
			return -EINVAL;
		if (memsrc__u32(ms, g + lay->g_strempty + lay->str_len, &len) || len != 0)
			return -EINVAL;
	}
	return 0;
}

/* Does v look like a user-space address the layout can hold? */
static int ljd__plausible(const struct lj_layout *lay, uint64_t v)
{
	return v >= 4096 && !(v & 7) && v < (1ull << 47) &&
	       (lay->ref_size == 8 || v <= UINT32_MAX);
}

/* A global_State among the words a thread saved (see ljdetect.h). */
int lj_detect__g_from_words(const struct lj_layout *lay, const struct memsrc *ms,
			    const uint64_t *w, size_t n, uint32_t max_reads, uint64_t *g)
{
	uint64_t *c, v, cand;
	size_t i, nc = 0;
	uint32_t reads = 0;
	uint8_t gct;
	int err = -ENOENT;

	*g = 0;
	if (!lay || !ms || !lay->ref_size || !lay->gg_ofs_g)
		return -EINVAL;
	if (n == 0)
		return -ENOENT;
	c = malloc(n * sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (ljd__plausible(lay, w[i]))
			c[nc++] = w[i];
	/* Each value once; the order of the words does not matter, as at most
	 * one global_State validates in a process with one VM. */
	qsort(c, nc, sizeof(*c), vec__cmp_u64);
	for (i = 0; i < nc && reads < max_reads; i++) {
		if (i && c[i] == c[i - 1])
			continue;
		/* DISPATCH, saved by a C function the interpreter or a GC64
		 * trace called (r14 is callee-saved): g = DISPATCH + disp2g
		 * (lj_detect__validate_g reads its mainthref first). */
		cand = c[i] + (uint64_t)(int64_t)lay->disp2g;
		if (lay->disp2g && ljd__plausible(lay, cand)) {
			reads++;
			if (lj_detect__validate_g(lay, ms, cand) == 0) {
				*g = cand;
				err = 0;
				break;
			}
		}
		/* A lua_State (the interpreter's C frame keeps one, SAVE_L in
		 * vm_x64.dasc): gct 6, and its glref a valid g. */
		reads++;
		if (memsrc__u8(ms, c[i] + lay->ref_size + 1, &gct) == 0 && gct == 6 &&
		    ljd__ref(lay, ms, c[i] + lay->l_glref, &v) == 0 && ljd__plausible(lay, v) &&
		    lj_detect__validate_g(lay, ms, v) == 0) {
			*g = v;
			err = 0;
			break;
		}
	}
	free(c);
	return err;
}

/* Try each possible GG_OFS(g). */
int lj_detect__probe_gg_ofs_g(const struct lj_layout *lay, const struct memsrc *ms, uint64_t g)
{
	static const uint32_t cand[] = { 64, 80, 96, 112 };
	struct lj_layout l;
	size_t i;

	if (!lay)
		return -EINVAL;
	l = *lay;
	for (i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
		l.gg_ofs_g = cand[i];
		if (lj_detect__validate_g(&l, ms, g) == 0)
			return (int)cand[i];
	}
	return -EINVAL;
}

/* -- Live calibration ---------------------------------------------------- */

/* Little-endian u64 at window offset o. */
static uint64_t ljd__w64(const uint8_t *w, size_t o)
{
	uint64_t v;

	memcpy(&v, w + o, 8);
	return v;
}

/* Little-endian u32 at window offset o. */
static uint32_t ljd__w32(const uint8_t *w, size_t o)
{
	uint32_t v;

	memcpy(&v, w + o, 4);
	return v;
}

/* Do LJD_DISP_CHECK words at window offset o all point into the VM? */
static int ljd__vm_words(const uint8_t *w, size_t n, size_t o, uint64_t lo, uint64_t hi)
{
	size_t k;

	if (o + 8 * LJD_DISP_CHECK > n)
		return 0;
	for (k = 0; k < LJD_DISP_CHECK; k++) {
		uint64_t v = ljd__w64(w, o + 8 * k);

		if (v < lo || v >= hi)
			return 0;
	}
	return 1;
}

/* Window offset of dispatch[0] (the first handler, the VM start), or 0. */
static size_t ljd__find_dispatch(const uint8_t *w, size_t n, uint64_t lo, uint64_t hi)
{
	static const size_t ddisp[] = { 154, 161 };	/* GG_LEN_DDISP: BC__MAX + 57 */
	size_t o, i;

	for (o = 8; o + 8 <= n; o += 8) {
		if (ljd__w64(w, o) != lo || !ljd__vm_words(w, n, o, lo, hi))
			continue;
		/* With hooks active the dynamic table is rewritten and this is the
		 * static copy GG_LEN_DDISP entries further. */
		for (i = 0; i < sizeof(ddisp) / sizeof(ddisp[0]); i++)
			if (o >= 8 * ddisp[i] + 8 && ljd__vm_words(w, n, o - 8 * ddisp[i], lo, hi))
				return o - 8 * ddisp[i];
		return o;
	}
	return 0;
}

/* Set one field of the new layout, noting a change from the old one. */
static void ljd__live_set(struct lj_detect *d, uint32_t *field, uint32_t old, uint32_t val,
			  const char *name, const char *how)
{
	*field = val;
	if (old != val)
		lj_detect__note(d, 1, "live: %s is %u, not %u (%s)", name, val, old, how);
}

/* Does the copy w of g hold the empty string's header at o (a GCstr
 * { nextgc 0, gct 4, len 0 } followed by stremptyz 0)? */
static int ljd__is_strempty(const struct lj_layout *l, const uint8_t *w, size_t o)
{
	uint32_t r = l->ref_size;
	uint64_t next;

	if (o + l->str_size + 2 > l->g_size)
		return 0;
	next = r == 8 ? ljd__w64(w, o) : ljd__w32(w, o);
	return !next && w[o + r + 1] == 4 && ljd__w32(w, o + l->str_len) == 0 &&
	       w[o + l->str_size] == 0;
}

/* Read up to LJD_G_SCAN bytes at g (shorter if the mapping ends). */
static size_t ljd__read_g(const struct memsrc *ms, uint64_t g, uint8_t *w)
{
	size_t n;

	for (n = LJD_G_SCAN; n >= 4096; n /= 2)
		if (memsrc__read(ms, g, w, n) == 0)
			return n;
	return 0;
}

/* Recalibrate the g-relative layout from live memory. */
int lj_detect__calibrate_live(struct lj_detect *d, const struct memsrc *ms, uint64_t g,
			      uint64_t vm_lo, uint64_t vm_hi)
{
	static const uint32_t ggc[] = { 64, 80, 96, 112 };
	const struct lj_detect_code *c = &d->code;
	struct lj_layout l, *old = &d->layout;
	uint64_t L0 = 0, D;
	uint8_t *w = NULL;
	size_t n, o, i, dpos;
	uint32_t r;
	int err = -EINVAL;

	if (!d->layout_ok || !(c->have & LJ_DETECT_C_FUNCC) || !g || (g & 7) || vm_hi <= vm_lo)
		return -EINVAL;
	l = *old;
	r = l.ref_size;
	/* 1. GG_OFS(g): the main thread right before g points back at g. */
	for (i = 0; i < sizeof(ggc) / sizeof(ggc[0]) && !L0; i++)
		if (g > ggc[i] && ljd__is_thread_of(&l, ms, g - ggc[i], g))
			L0 = g - ggc[i];
	if (!L0)
		goto out;
	ljd__live_set(d, &l.gg_ofs_g, old->gg_ofs_g, (uint32_t)(g - L0), "gg_ofs_g",
		      "the main lua_State before g");
	l.l_size = l.gg_ofs_g;
	/* 2. GG_DISP2G: find the dispatch table after g. */
	w = malloc(LJD_G_SCAN);
	if (!w)
		goto out;
	n = ljd__read_g(ms, g, w);
	dpos = n ? ljd__find_dispatch(w, n, vm_lo, vm_hi) : 0;
	if (!dpos)
		goto out;
	D = g + dpos;
	l.disp2g = (int32_t)(g - D);
	if (l.disp2g != old->disp2g)
		lj_detect__note(d, 1, "live: disp2g is %d, not %d (dispatch table at g+%#zx)",
				l.disp2g, old->disp2g, dpos);
	/* 3. Every DISPATCH-relative field the code showed. */
	ljd__live_set(d, &l.g_vmstate, old->g_vmstate, (uint32_t)(c->vmstate_disp - l.disp2g),
		      "g_vmstate", "BC_FUNCC displacement");
	if (c->have & LJ_DETECT_C_CUR_L)
		ljd__live_set(d, &l.g_cur_L, old->g_cur_L, (uint32_t)(c->cur_L_disp - l.disp2g),
			      "g_cur_L", "BC_FUNCC displacement");
	l.g_bc_cfunc_int = l.g_cur_L - 8;	/* bc_cfunc_int, bc_cfunc_ext, cur_L */
	l.g_bc_cfunc_ext = l.g_cur_L - 4;
	if (c->have & LJ_DETECT_C_JLOOP) {
		ljd__live_set(d, &l.g_jit_base, old->g_jit_base,
			      (uint32_t)(c->jit_base_disp - l.disp2g), "g_jit_base", "BC_JLOOP");
		ljd__live_set(d, &l.g_tmpbuf_L, old->g_tmpbuf_L,
			      (uint32_t)(c->tmpbuf_L_disp - l.disp2g), "g_tmpbuf_L", "BC_JLOOP");
		l.g2j = c->jtrace_disp - l.disp2g - (int32_t)l.j_trace;
		if (l.g2j != old->g2j)
			lj_detect__note(d, 1, "live: g2j is %d, not %d", l.g2j, old->g2j);
		ljd__live_set(d, &l.g_size, old->g_size, (uint32_t)l.g2j, "g_size",
			      "J follows g in GG_State");
	} else {
		l.g_size = (uint32_t)dpos < l.g_size ? (uint32_t)dpos : l.g_size;
	}
	if (l.g_size > dpos || l.g_cur_L + r > l.g_size || l.g_vmstate + 4 > l.g_size)
		goto out;
	/* 4. mainthref: the detected offset if it refers to the main thread,
	 * else the first reference to it in g.  Other fields can point at the
	 * main thread for a while (the GC's lists and sweep position, in a busy
	 * nginx worker: offset 64 in one run), so a scan alone may pick one. */
	o = old->g_mainthref;
	if (o % r || o + r > l.g_size || o == l.g_cur_L || o == l.g_tmpbuf_L ||
	    (r == 8 ? ljd__w64(w, o) : ljd__w32(w, o)) != L0) {
		for (o = 0; o + r <= l.g_size; o += r) {
			uint64_t v = r == 8 ? ljd__w64(w, o) : ljd__w32(w, o);

			if (v == L0 && o != l.g_cur_L && o != l.g_tmpbuf_L)
				break;
		}
	}
	if (o + r > l.g_size)
		goto out;
	ljd__live_set(d, &l.g_mainthref, old->g_mainthref, (uint32_t)o, "g_mainthref",
		      "the reference to the main thread");
	/* 5. strempty: a GCstr { nextgc 0, gct 4, len 0 } followed by stremptyz 0,
	 * then hookmask; the detected offset if it holds one, else the first. */
	o = old->g_strempty;
	if (o % r || !ljd__is_strempty(&l, w, o)) {
		for (o = 0; o + l.str_size + 2 <= l.g_size; o += r)
			if (ljd__is_strempty(&l, w, o))
				break;
	}
	if (o + l.str_size + 2 <= l.g_size) {
		ljd__live_set(d, &l.g_strempty, old->g_strempty, (uint32_t)o, "g_strempty",
			      "the empty string's header");
		l.g_hookmask = (uint32_t)o + l.str_size + 1;
	} else {
		l.g_strempty = 0;	/* not found: validation skips it */
		lj_detect__note(d, 1, "live: g->strempty not found");
	}
	/* 6. The result must validate, and cur_L must be a thread of this g. */
	{
		uint64_t cur;

		if (lj_detect__validate_g(&l, ms, g) != 0 ||
		    ljd__ref(&l, ms, g + l.g_cur_L, &cur) || !ljd__is_thread_of(&l, ms, cur, g))
			goto out;
	}
	lj_detect__note(d, 0, "live: g %#lx validates; disp2g %d from the dispatch table at g+%#zx",
			(unsigned long)g, l.disp2g, dpos);
	d->layout = l;
	d->live_calibrated = 1;
	err = 0;
out:
	if (err)
		lj_detect__note(d, 1, "live: could not calibrate from g %#lx", (unsigned long)g);
	free(w);
	return err;
}

/* -- g from a DISPATCH value --------------------------------------------- */

#define LJD_G_CANDIDATES	4	/* g candidates tried per DISPATCH value */

/* Read the pages below addr into the end of w (up to n bytes, page by page,
 * stopping at the first unreadable one); returns the bytes read. */
static size_t ljd__read_below(const struct memsrc *ms, uint64_t addr, uint8_t *w, size_t n)
{
	uint64_t lo = addr;

	while (addr - lo < n && lo > 4096) {
		uint64_t p = (lo - 1) & ~(uint64_t)4095;

		if (addr - p > n)
			p = addr - n;
		if (memsrc__read(ms, p, w + n - (addr - p), lo - p) != 0)
			break;
		lo = p;
	}
	return (size_t)(addr - lo);
}

/* Find g below a DISPATCH value and calibrate d from it. */
int lj_detect__calibrate_dispatch(struct lj_detect *d, const struct memsrc *ms, uint64_t dispatch,
				  uint64_t vm_lo, uint64_t vm_hi, uint64_t *g_out)
{
	static const uint32_t ggc[] = { 64, 80, 96, 112 };
	const struct lj_layout *lay = &d->layout;
	uint8_t *w = NULL;
	size_t n, off, i;
	unsigned tried = 0;
	int err = -EINVAL;

	if (!d->layout_ok || !dispatch || (dispatch & 7) || !lay->ref_size)
		return -EINVAL;
	w = malloc(LJD_G_SCAN);
	if (!w)
		return -ENOMEM;
	/* The bytes at dispatch - k are at w[LJD_G_SCAN - k], for k <= n. */
	n = ljd__read_below(ms, dispatch, w, LJD_G_SCAN);
	/* GG_State: L, g, J, hotcount, dispatch: g is thousands of bytes below
	 * DISPATCH, the closest candidates are tried first. */
	for (off = 256; off + 112 <= n && tried < LJD_G_CANDIDATES; off += 8) {
		uint64_t g = dispatch - off;

		for (i = 0; i < sizeof(ggc) / sizeof(ggc[0]); i++) {
			size_t lo = LJD_G_SCAN - off - ggc[i];	/* window offset of L */
			uint64_t glref;
			uint8_t gct;

			if (off + ggc[i] > n || lay->l_glref + lay->ref_size > ggc[i])
				continue;
			glref = lay->ref_size == 8 ? ljd__w64(w, lo + lay->l_glref) :
						     ljd__w32(w, lo + lay->l_glref);
			gct = w[lo + lay->ref_size + 1];
			if (glref != g || gct != 6)
				continue;
			tried++;
			if (lj_detect__calibrate_live(d, ms, g, vm_lo, vm_hi) == 0) {
				lj_detect__note(d, 0, "live: g %#lx found %zu bytes below DISPATCH %#lx",
						(unsigned long)g, off, (unsigned long)dispatch);
				if (g_out)
					*g_out = g;
				err = 0;
				goto out;
			}
			break;
		}
	}
	lj_detect__note(d, 1, "live: no global_State found below DISPATCH %#lx (%u candidates)",
			(unsigned long)dispatch, tried);
out:
	free(w);
	return err;
}
