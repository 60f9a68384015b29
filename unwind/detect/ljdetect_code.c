/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljdetect_code.c -- calibrate offsets from the x86_64 interpreter's code.
 *
 * Interpreter handlers address g and J as [DISPATCH(r14) + disp32], so a
 * few instruction patterns give the DISPATCH-relative offsets directly:
 *
 * BC_FUNCC (vm_x64.dasc / vm_x86.dasc):
 *   41 c7 86 <vmstate disp32> <~LJ_VMST_C or ~LJ_VMST_CFUNC>  movl $st, vmstate(%r14)
 *   41 ff d7                                                   call *%r15
 *   ...                                                        mov %rbp, cur_L(%r14)
 * preceded by the prologue (GC64 / non-GC64):
 *   48 8b 6a f0 48 c1 e5 11 ...  / 8b 6a f8   load the GCfuncC from BASE-16 / BASE-8
 *   4c 8b 7d <f>                  mov f(%rbp), %r15
 *   48 8b 6c 24 <L> / 8b 6c 24 <L> mov SAVE_L(%rsp), %rbp
 *   48 89 55 <base> / 89 55 <base> mov %rdx, L->base
 *   48 3b 4d <max> / 3b 4d <max>   cmp L->maxstack, %rcx
 *   48 89 45 <top> / 89 45 <top>   mov %rax, L->top
 * BC_JLOOP:
 *   49|41 8b 8e <J->trace disp32>  mov trace(%r14), %rcx
 *   48 8b 04 c1 / 8b 04 81         mov (%rcx,%rax,8|4), %rax
 *   48 8b 40 <mcode>               mov mcode(%rax), %rax
 *   ... 49|41 89 96 <jit_base>, 49|41 89 ae <tmpbuf.L>, 48 83 ec 10 (sub $16, %rsp)
 * BC_KSHORT (number mode), after movswl %ax,%eax (0f bf c0):
 *   f2 0f 2a c0 f2 0f 11 04 ca          cvtsi2sd; movsd to [BASE+RA*8]: single-number
 *   49 bb <0xfff9000000000000> 4c 09 d8 48 89 04 ca   GC64 dual-number (LUAJIT_NUMMODE=2)
 *   c7 44 ca 04 ff ff fe ff 89 04 ca    non-GC64 dual-number: tag word, then int32
 * Pure: bytes in, struct out.
 */
#include <string.h>

#include "unwind/detect/ljdetect.h"

#define LJD_PROLOGUE_WINDOW	128	/* bytes before the vmstate store holding the prologue */
#define LJD_CUR_L_WINDOW	32	/* bytes after the call holding the cur_L store */
#define LJD_JLOOP_WINDOW	48	/* bytes after the mcode load holding the stores */

/* Little-endian signed 32-bit value at p. */
static int32_t ljd__s32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* Is b a REX prefix? */
static int ljd__is_rex(uint8_t b)
{
	return (b & 0xf0) == 0x40;
}

/* Last position in [lo, hi) where pat matches (and, when norex, the byte
 * before is not a REX prefix); -1 if none. */
static long ljd__rfind(const uint8_t *c, size_t lo, size_t hi, const uint8_t *pat, size_t n,
		       int norex)
{
	size_t i;

	if (hi < lo + n)
		return -1;
	for (i = hi - n + 1; i-- > lo;) {
		if (memcmp(c + i, pat, n) != 0)
			continue;
		if (norex && i > 0 && ljd__is_rex(c[i - 1]))
			continue;
		return (long)i;
	}
	return -1;
}

/* First position in [lo, hi) where pat matches, or -1. */
static long ljd__find(const uint8_t *c, size_t lo, size_t hi, const uint8_t *pat, size_t n)
{
	size_t i;

	for (i = lo; i + n <= hi; i++)
		if (memcmp(c + i, pat, n) == 0)
			return (long)i;
	return -1;
}

/* Match "<op...> disp8" by its last occurrence in [lo, hi); stores disp8 and sets bit. */
static void ljd__disp8(const uint8_t *c, size_t lo, size_t hi, const uint8_t *op, size_t n,
		       int norex, uint32_t *val, uint32_t *have, uint32_t bit)
{
	long at = ljd__rfind(c, lo, hi > 0 ? hi - 1 : 0, op, n, norex);

	if (at < 0 || (size_t)at + n >= hi)
		return;
	*val = c[at + n];
	*have |= bit;
}

/* The BC_FUNCC prologue between its start and the vmstate store at i. */
static void ljd__funcc_prologue(const uint8_t *c, size_t i, int gc64, struct lj_detect_code *o)
{
	static const uint8_t shape64[] = { 0x48, 0x8b, 0x6a, 0xf0, 0x48, 0xc1, 0xe5, 0x11 };
	static const uint8_t shape32[] = { 0x8b, 0x6a, 0xf8 };
	static const uint8_t fn_f[] = { 0x4c, 0x8b, 0x7d };
	static const uint8_t cfl64[] = { 0x48, 0x8b, 0x6c, 0x24 }, cfl32[] = { 0x8b, 0x6c, 0x24 };
	static const uint8_t base64[] = { 0x48, 0x89, 0x55 }, base32[] = { 0x89, 0x55 };
	static const uint8_t max64[] = { 0x48, 0x3b, 0x4d }, max32[] = { 0x3b, 0x4d };
	static const uint8_t top64[] = { 0x48, 0x89, 0x45 }, top32[] = { 0x89, 0x45 };
	size_t lo = i > LJD_PROLOGUE_WINDOW ? i - LJD_PROLOGUE_WINDOW : 0;
	long s64 = ljd__rfind(c, lo, i, shape64, sizeof(shape64), 0);
	long s32 = ljd__rfind(c, lo, i, shape32, sizeof(shape32), 1);
	int shape = -1;
	size_t start;

	/* The handler starts at the callee load closest to the store. */
	if (s64 >= 0 && s64 >= s32)
		shape = 1;
	else if (s32 >= 0)
		shape = 0;
	if (shape < 0)
		return;
	if (o->gc64 < 0)
		o->gc64 = shape;
	if (gc64 >= 0 && gc64 != shape)
		return;		/* shape contradicts the caller: trust neither prologue */
	start = (size_t)(shape ? s64 : s32);
	ljd__disp8(c, start, i, fn_f, sizeof(fn_f), 0, &o->fn_f, &o->have, LJ_DETECT_C_FN_F);
	if (shape) {
		ljd__disp8(c, start, i, cfl64, sizeof(cfl64), 0, &o->cf_l, &o->have, LJ_DETECT_C_CF_L);
		ljd__disp8(c, start, i, base64, sizeof(base64), 0, &o->l_base, &o->have, LJ_DETECT_C_L_BASE);
		ljd__disp8(c, start, i, max64, sizeof(max64), 0, &o->l_maxstack, &o->have,
			   LJ_DETECT_C_L_MAXSTACK);
		ljd__disp8(c, start, i, top64, sizeof(top64), 0, &o->l_top, &o->have, LJ_DETECT_C_L_TOP);
	} else {
		ljd__disp8(c, start, i, cfl32, sizeof(cfl32), 1, &o->cf_l, &o->have, LJ_DETECT_C_CF_L);
		ljd__disp8(c, start, i, base32, sizeof(base32), 1, &o->l_base, &o->have, LJ_DETECT_C_L_BASE);
		ljd__disp8(c, start, i, max32, sizeof(max32), 1, &o->l_maxstack, &o->have,
			   LJ_DETECT_C_L_MAXSTACK);
		ljd__disp8(c, start, i, top32, sizeof(top32), 1, &o->l_top, &o->have, LJ_DETECT_C_L_TOP);
	}
}

/* BC_FUNCC: the vmstate store right before "call *%r15". */
static void ljd__scan_funcc(const uint8_t *c, size_t len, uint64_t vaddr, int gc64,
			    struct lj_detect_code *o)
{
	size_t i;

	for (i = 0; i + 14 <= len; i++) {
		int32_t disp, st;
		size_t j, end;

		if (c[i] != 0x41 || c[i + 1] != 0xc7 || c[i + 2] != 0x86 ||
		    c[i + 11] != 0x41 || c[i + 12] != 0xff || c[i + 13] != 0xd7)
			continue;
		disp = ljd__s32(c + i + 3);
		st = ljd__s32(c + i + 7);
		if (st > -2 || st < -16)
			continue;	/* not a ~LJ_VMST_* constant */
		o->funcc_hits++;
		if (o->have & LJ_DETECT_C_FUNCC) {
			if (disp != o->vmstate_disp || st != o->funcc_state)
				o->funcc_conflicts++;
			continue;
		}
		o->have |= LJ_DETECT_C_FUNCC;
		o->funcc_at = vaddr + i;
		o->vmstate_disp = disp;
		o->funcc_state = st;
		/* cur_L: "mov %rbp, disp(%r14)" after the call (REX.W in GC64). */
		end = i + 14 + LJD_CUR_L_WINDOW < len ? i + 14 + LJD_CUR_L_WINDOW : len;
		for (j = i + 14; j + 7 <= end; j++) {
			if ((c[j] == 0x49 || c[j] == 0x41) && c[j + 1] == 0x89 && c[j + 2] == 0xae) {
				o->cur_L_disp = ljd__s32(c + j + 3);
				o->have |= LJ_DETECT_C_CUR_L;
				break;
			}
		}
		ljd__funcc_prologue(c, i, gc64, o);
	}
}

/* BC_JLOOP: J->trace load, trace->mcode load, jit_base/tmpbuf.L stores, sub rsp. */
static void ljd__scan_jloop(const uint8_t *c, size_t len, uint64_t vaddr, int gc64,
			    struct lj_detect_code *o)
{
	static const uint8_t idx64[] = { 0x48, 0x8b, 0x04, 0xc1 }, idx32[] = { 0x8b, 0x04, 0x81 };
	static const uint8_t subrsp[] = { 0x48, 0x83, 0xec, 0x10 };
	size_t i;

	for (i = 0; i + 7 + 4 + 4 <= len; i++) {
		uint8_t rex = c[i];
		int m64 = rex == 0x49;
		size_t k, end, lo;
		const uint8_t *idx = m64 ? idx64 : idx32;
		size_t nidx = m64 ? sizeof(idx64) : sizeof(idx32);
		long sb, jb, tb;
		int32_t jtrace;

		if ((rex != 0x49 && rex != 0x41) || c[i + 1] != 0x8b || c[i + 2] != 0x8e)
			continue;
		if (gc64 >= 0 && m64 != gc64)
			continue;
		k = i + 7;
		if (k + nidx + 4 > len || memcmp(c + k, idx, nidx) != 0)
			continue;
		k += nidx;
		if (c[k] != 0x48 || c[k + 1] != 0x8b || c[k + 2] != 0x40)
			continue;
		lo = k + 4;
		end = lo + LJD_JLOOP_WINDOW < len ? lo + LJD_JLOOP_WINDOW : len;
		jb = tb = -1;
		for (k = lo; k + 7 <= end; k++) {
			if (c[k] != rex || c[k + 1] != 0x89)
				continue;
			if (c[k + 2] == 0x96 && jb < 0)
				jb = (long)k;
			else if (c[k + 2] == 0xae && tb < 0)
				tb = (long)k;
		}
		sb = ljd__find(c, lo, end, subrsp, sizeof(subrsp));
		if (jb < 0 || tb < 0 || sb < 0)
			continue;
		jtrace = ljd__s32(c + i + 3);
		o->jloop_hits++;
		if (o->have & LJ_DETECT_C_JLOOP) {
			if (jtrace != o->jtrace_disp || ljd__s32(c + jb + 3) != o->jit_base_disp ||
			    ljd__s32(c + tb + 3) != o->tmpbuf_L_disp)
				o->jloop_conflicts++;
			continue;
		}
		o->have |= LJ_DETECT_C_JLOOP;
		o->jloop_at = vaddr + i;
		o->jtrace_disp = jtrace;
		o->t_mcode = c[i + 7 + nidx + 3];
		o->jit_base_disp = ljd__s32(c + jb + 3);
		o->tmpbuf_L_disp = ljd__s32(c + tb + 3);
		if (o->gc64 < 0)
			o->gc64 = m64;
	}
}

/* BC_KSHORT: does the interpreter store small integers as doubles or as
 * tagged int32 (dual-number)?  Every shape that matches counts. */
static void ljd__scan_kshort(const uint8_t *c, size_t len, uint64_t vaddr, struct lj_detect_code *o)
{
	static const uint8_t single[] = { 0xf2, 0x0f, 0x2a, 0xc0, 0xf2, 0x0f, 0x11, 0x04, 0xca };
	static const uint8_t dual64[] = { 0x49, 0xbb, 0, 0, 0, 0, 0, 0, 0xf9, 0xff,
					  0x4c, 0x09, 0xd8, 0x48, 0x89, 0x04, 0xca };
	static const uint8_t dual32[] = { 0xc7, 0x44, 0xca, 0x04, 0xff, 0xff, 0xfe, 0xff,
					  0x89, 0x04, 0xca };
	static const struct { const uint8_t *p; size_t n; int dual; } shapes[] = {
		{ single, sizeof(single), 0 },
		{ dual64, sizeof(dual64), 1 },
		{ dual32, sizeof(dual32), 1 },
	};
	size_t i, k;

	for (i = 0; i + 3 <= len; i++) {
		if (c[i] != 0x0f || c[i + 1] != 0xbf || c[i + 2] != 0xc0)
			continue;
		for (k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
			if (i + 3 + shapes[k].n > len || memcmp(c + i + 3, shapes[k].p, shapes[k].n) != 0)
				continue;
			if (!o->kshort_hits++) {
				o->kshort_at = vaddr + i;
				o->kshort_dual = shapes[k].dual;
				o->have |= LJ_DETECT_C_KSHORT;
			} else if (o->kshort_dual != shapes[k].dual) {
				o->have &= ~(uint32_t)LJ_DETECT_C_KSHORT;	/* contradictory */
			}
		}
	}
}

/* Scan interpreter code for every calibration pattern. */
void lj_detect__scan_code(const uint8_t *code, size_t len, uint64_t vaddr, int gc64,
			  struct lj_detect_code *out)
{
	memset(out, 0, sizeof(*out));
	out->gc64 = -1;
	if (!code || !len)
		return;
	ljd__scan_funcc(code, len, vaddr, gc64, out);
	ljd__scan_jloop(code, len, vaddr, gc64 >= 0 ? gc64 : out->gc64, out);
	ljd__scan_kshort(code, len, vaddr, out);
}
