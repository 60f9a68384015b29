/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljwalk_name.c -- function names the way LuaJIT infers them.
 *
 * Facts from LuaJIT's lj_debug.c (lj_debug_funcname, lj_debug_slotname,
 * debug_varname, lj_debug_uvname): the name of a callee comes from the
 * caller's instruction at the saved PC.  A call instruction names the slot it
 * calls: a live local (varinfo), else whatever last wrote that slot going
 * backwards (GGET -> global, TGETS -> field, or method when the previous
 * instruction copied the table into the self slot, UGET -> upvalue, MOV ->
 * follow the source slot).  Any other instruction with a metamethod names
 * the metamethod ("__index", "__add", ...).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/vec.h"

#include "unwind/ljwalk_int.h"

#define VARS_MAX	4096			/* variable lists kept across walks */
#define VARS_BYTES_MAX	((size_t)16 << 20)	/* and their bytes */

/* Operand mode of the A field (LuaJIT BCMode, only what the scan needs). */
enum { AM_NONE, AM_DST, AM_BASE, AM_VAR, AM_RBASE, AM_UV };

/* Metamethods, in LuaJIT's MMS order. */
enum { MM_index, MM_newindex, MM_gc, MM_mode, MM_eq, MM_len, MM_lt, MM_le,
	MM_concat, MM_call, MM_add, MM_sub, MM_mul, MM_div, MM_mod, MM_pow,
	MM_unm, MM__NONE };

static const char *const mm_names[MM__NONE] = {
	"__index", "__newindex", "__gc", "__mode", "__eq", "__len", "__lt", "__le",
	"__concat", "__call", "__add", "__sub", "__mul", "__div", "__mod", "__pow",
	"__unm",
};

/* Opcodes 0..88 (ISLT .. JMP): the same numbering in every tree. */
#define NOPS_COMMON 89
static const uint8_t op_amode[NOPS_COMMON] = {
	/* ISLT..ISNEP */ AM_VAR, AM_VAR, AM_VAR, AM_VAR, AM_VAR, AM_VAR, AM_VAR, AM_VAR,
	AM_VAR, AM_VAR, AM_VAR, AM_VAR,
	/* ISTC ISFC IST ISF ISTYPE ISNUM */ AM_DST, AM_DST, AM_NONE, AM_NONE, AM_VAR, AM_VAR,
	/* MOV NOT UNM LEN */ AM_DST, AM_DST, AM_DST, AM_DST,
	/* ADDVN..MODVV, POW, CAT */ AM_DST, AM_DST, AM_DST, AM_DST, AM_DST, AM_DST, AM_DST,
	AM_DST, AM_DST, AM_DST, AM_DST, AM_DST, AM_DST, AM_DST, AM_DST, AM_DST, AM_DST,
	/* KSTR KCDATA KSHORT KNUM KPRI KNIL */ AM_DST, AM_DST, AM_DST, AM_DST, AM_DST, AM_BASE,
	/* UGET USETV USETS USETN USETP UCLO FNEW */ AM_DST, AM_UV, AM_UV, AM_UV, AM_UV,
	AM_RBASE, AM_DST,
	/* TNEW TDUP GGET GSET TGETV TGETS TGETB TGETR */ AM_DST, AM_DST, AM_DST, AM_VAR,
	AM_DST, AM_DST, AM_DST, AM_DST,
	/* TSETV TSETS TSETB TSETM TSETR */ AM_VAR, AM_VAR, AM_VAR, AM_BASE, AM_VAR,
	/* CALLM CALL CALLMT CALLT ITERC ITERN VARG ISNEXT */ AM_BASE, AM_BASE, AM_BASE,
	AM_BASE, AM_BASE, AM_BASE, AM_BASE, AM_BASE,
	/* RETM RET RET0 RET1 */ AM_BASE, AM_RBASE, AM_RBASE, AM_RBASE,
	/* FORI JFORI FORL IFORL JFORL ITERL IITERL JITERL */ AM_BASE, AM_BASE, AM_BASE,
	AM_BASE, AM_BASE, AM_BASE, AM_BASE, AM_BASE,
	/* LOOP ILOOP JLOOP JMP */ AM_RBASE, AM_RBASE, AM_RBASE, AM_RBASE,
};
static const uint8_t op_mm[NOPS_COMMON] = {
	/* ISLT ISGE ISLE ISGT */ MM_lt, MM_lt, MM_le, MM_le,
	/* ISEQV..ISNEP */ MM_eq, MM_eq, MM_eq, MM_eq, MM_eq, MM_eq, MM_eq, MM_eq,
	/* ISTC..ISNUM */ MM__NONE, MM__NONE, MM__NONE, MM__NONE, MM__NONE, MM__NONE,
	/* MOV NOT UNM LEN */ MM__NONE, MM__NONE, MM_unm, MM_len,
	/* xxVN */ MM_add, MM_sub, MM_mul, MM_div, MM_mod,
	/* xxNV */ MM_add, MM_sub, MM_mul, MM_div, MM_mod,
	/* xxVV */ MM_add, MM_sub, MM_mul, MM_div, MM_mod,
	/* POW CAT */ MM_pow, MM_concat,
	/* KSTR..KNIL */ MM__NONE, MM__NONE, MM__NONE, MM__NONE, MM__NONE, MM__NONE,
	/* UGET..UCLO */ MM__NONE, MM__NONE, MM__NONE, MM__NONE, MM__NONE, MM__NONE,
	/* FNEW TNEW TDUP */ MM_gc, MM_gc, MM_gc,
	/* GGET GSET */ MM_index, MM_newindex,
	/* TGETV TGETS TGETB TGETR */ MM_index, MM_index, MM_index, MM_index,
	/* TSETV TSETS TSETB TSETM TSETR */ MM_newindex, MM_newindex, MM_newindex,
	MM_newindex, MM_newindex,
	/* CALLM CALL CALLMT CALLT ITERC ITERN */ MM_call, MM_call, MM_call, MM_call,
	MM_call, MM_call,
	/* VARG ISNEXT RETM RET RET0 RET1 */ MM__NONE, MM__NONE, MM__NONE, MM__NONE,
	MM__NONE, MM__NONE,
	/* FORI..JMP */ MM__NONE, MM__NONE, MM__NONE, MM__NONE, MM__NONE, MM__NONE,
	MM__NONE, MM__NONE, MM__NONE, MM__NONE, MM__NONE, MM__NONE,
};

/* Names of LuaJIT's internal loop variables (VARNAMEDEF, index 1..6). */
static const char *const varname_special[7] = {
	NULL, "(for index)", "(for limit)", "(for step)", "(for generator)",
	"(for state)", "(for control)",
};

/* A-operand mode of an opcode for this build. */
static int op__amode(const struct ljw *w, uint32_t op)
{
	uint32_t funcf = w->d.lay->bc_funcf ? w->d.lay->bc_funcf : NOPS_COMMON;

	if (op < NOPS_COMMON)
		return op_amode[op];
	return op < funcf ? AM_DST /* up-head bit ops */ : AM_RBASE /* headers */;
}

/* Metamethod of an opcode for this build. */
static int op__mm(uint32_t op)
{
	return op < NOPS_COMMON ? op_mm[op] : MM__NONE;
}

/* Bytes from addr to the end of the prototype's allocation (read into the
 * arena when the proto was not cached whole); NULL if outside. */
static const uint8_t *proto__tail(struct ljw *w, const struct ljw_proto *p, uint64_t addr,
				  size_t *len)
{
	uint64_t end = p->pt + p->sizept;
	uint8_t *buf;
	size_t n;

	if (addr < p->pt || addr >= end)
		return NULL;
	n = (size_t)(end - addr);
	if (p->mem && end <= p->pt + p->memlen) {
		*len = n;
		return p->mem + (addr - p->pt);
	}
	if (n > (1u << 20))
		n = 1u << 20;
	buf = ljw__alloc(w, n);
	if (!buf || memsrc__read(w->d.ms, addr, buf, n))
		return NULL;
	*len = n;
	return buf;
}

/* Decode one ULEB128 value; 0 and *ok = 0 when it runs past end. */
static uint32_t uleb__read(const uint8_t **pp, const uint8_t *end, int *ok)
{
	const uint8_t *p = *pp;
	uint32_t v = 0;
	unsigned sh = 0;

	while (p < end) {
		uint8_t b = *p++;

		if (sh < 32)
			v |= (uint32_t)(b & 0x7f) << sh;
		sh += 7;
		if (!(b & 0x80)) {
			*pp = p;
			return v;
		}
	}
	*ok = 0;
	return 0;
}

/* Name of the local in slot at bytecode position pc (debug_varname). */
/* Decode the variable list in vs->bytes into vs->v: the variables the scan
 * in ljw__varname passes, up to where it stops whatever the pc.  0 or
 * -ENOMEM. */
static int vars__decode(struct ljw_vars *vs)
{
	const uint8_t *q = vs->bytes, *end = vs->bytes + vs->len;
	uint32_t lastpc = 0, startpc, endpc, name;
	size_t cap = 0;
	int ok = 1;

	vs->n = 0;
	while (q < end) {	/* every pass consumes at least one byte */
		const uint8_t *nul;
		uint32_t vn = *q;

		name = vn < 7 ? LJW_VAR_SPECIAL | vn : (uint32_t)(q - vs->bytes);
		if (vn < 7) {
			if (vn == 0)
				break;
			q++;
		} else {
			if (!(nul = memchr(q, 0, (size_t)(end - q))))
				break;
			q = nul + 1;
		}
		startpc = lastpc + uleb__read(&q, end, &ok);
		lastpc = startpc;
		if (!ok)
			break;
		endpc = startpc + uleb__read(&q, end, &ok);
		if (!ok)
			break;
		if (VEC_GROW(vs->v, &cap, vs->n + 1))
			return -ENOMEM;
		vs->v[vs->n].startpc = startpc;
		vs->v[vs->n].endpc = endpc;
		vs->v[vs->n].name = name;
		vs->n++;
	}
	return 0;
}

/* The decoded list of the variable bytes q[0, len) at address va, as an
 * earlier walk decoded the same bytes, else decoded now; NULL when out of
 * room (the caller scans the bytes itself). */
static const struct ljw_vars *vars__get(struct ljw *w, uint64_t va, const uint8_t *q, size_t len)
{
	struct ljw_vars *vs;
	uint64_t *idx;
	int found;

	if (len > VARS_BYTES_MAX)
		return NULL;
	found = intmap__slot(&w->byvars, va, &idx);
	if (found < 0)
		return NULL;
	if (found) {
		vs = &w->vars[*idx];
		if (vs->bytes && vs->len == len && !memcmp(vs->bytes, q, len))
			return vs;
	} else {
		if (w->nvars >= VARS_MAX || VEC_GROW(w->vars, &w->capvars, w->nvars + 1)) {
			intmap__del(&w->byvars, va);
			return NULL;
		}
		*idx = w->nvars;
		vs = &w->vars[w->nvars++];
		memset(vs, 0, sizeof(*vs));
	}
	/* Other bytes there now (or none kept): decode these instead. */
	if (vs->bytes)
		w->varbytes -= vs->len;
	free(vs->bytes);
	free(vs->v);
	memset(vs, 0, sizeof(*vs));
	if (w->varbytes + len > VARS_BYTES_MAX || !(vs->bytes = malloc(len ? len : 1)))
		return NULL;
	memcpy(vs->bytes, q, len);
	vs->len = len;
	if (vars__decode(vs)) {
		free(vs->bytes);
		free(vs->v);
		memset(vs, 0, sizeof(*vs));
		return NULL;
	}
	w->varbytes += len;
	return vs;
}

/* Free the decoded variable lists. */
void ljw__vars_exit(struct ljw *w)
{
	size_t i;

	for (i = 0; i < w->nvars; i++) {
		free(w->vars[i].bytes);
		free(w->vars[i].v);
	}
	free(w->vars);
	intmap__exit(&w->byvars);
}

const char *ljw__varname(struct ljw *w, const struct ljw_proto *p, uint32_t pc, uint32_t slot)
{
	const struct ljw_vars *vs;
	const uint8_t *q, *end;
	uint32_t lastpc = 0;
	size_t len, i;
	int ok = 1;

	if (!p->varinfo || !(q = proto__tail(w, p, p->varinfo, &len)))
		return NULL;
	if ((vs = vars__get(w, p->varinfo, q, len)) != NULL) {
		for (i = 0; i < vs->n; i++) {
			const struct ljw_var *v = &vs->v[i];
			const char *name;

			if (v->startpc > pc)
				break;
			if (pc < v->endpc && slot-- == 0) {
				if (v->name & LJW_VAR_SPECIAL)
					return varname_special[v->name & ~LJW_VAR_SPECIAL];
				name = (const char *)vs->bytes + v->name;
				return ljw__strndup(w, name, strlen(name));
			}
		}
		return NULL;
	}
	end = q + len;
	while (q < end) {	/* every pass consumes at least one byte */
		const uint8_t *name = q;
		uint32_t vn = *q, startpc, endpc;

		if (vn < 7) {
			if (vn == 0)
				break;
			q++;
		} else {
			const uint8_t *nul = memchr(q, 0, (size_t)(end - q));

			if (!nul)
				break;
			q = nul + 1;
		}
		startpc = lastpc + uleb__read(&q, end, &ok);
		lastpc = startpc;
		if (!ok || startpc > pc)
			break;
		endpc = startpc + uleb__read(&q, end, &ok);
		if (!ok)
			break;
		if (pc < endpc && slot-- == 0) {
			if (vn < 7)
				return varname_special[vn];
			return ljw__strndup(w, (const char *)name, strlen((const char *)name));
		}
	}
	return NULL;
}

/* Name of upvalue idx (lj_debug_uvname): "" when there is no uvinfo. */
const char *ljw__uvname(struct ljw *w, const struct ljw_proto *p, uint32_t idx)
{
	const uint8_t *q, *end, *s;
	size_t len;

	if (idx >= p->sizeuv)
		return NULL;
	if (!p->uvinfo)
		return "";
	if (!(q = proto__tail(w, p, p->uvinfo, &len)))
		return NULL;
	end = q + len;
	while (idx && q < end) {
		if (*q++ == 0)
			idx--;
	}
	for (s = q; s < end && *s; s++)
		;
	if (s >= end)
		return NULL;
	return ljw__strndup(w, (const char *)q, (size_t)(s - q));
}

/* String constant ~idx of a prototype (proto_kgc). */
const char *ljw__kgc_str(struct ljw *w, const struct ljw_proto *p, uint32_t idx)
{
	uint64_t addr, ref;
	uint8_t b[8] = { 0 };

	if (idx >= p->sizekgc || p->k == 0)
		return NULL;
	addr = p->k - (uint64_t)w->d.ref * (idx + 1);
	if (ljw__proto_read(w, p, addr, b, w->d.ref))
		return NULL;
	memcpy(&ref, b, sizeof(ref));	/* little endian; upper bytes zero if ref == 4 */
	return ljw__gcstr(w, ref, 256, NULL);
}

/* Deduce the name of the value in slot at position pos (lj_debug_slotname). */
const char *ljw__slotname(struct ljw *w, const struct ljw_proto *p, uint32_t pos,
			  uint32_t slot, const char **name)
{
	const char *lname;
	uint32_t ins, op, ra, insp;

restart:
	lname = ljw__varname(w, p, pos, slot);
	if (lname) {
		*name = lname;
		return "local";
	}
	while (--pos > 0) {	/* bounded: pos only decreases */
		if (ljw__proto_ins(w, p, pos, &ins))
			return NULL;
		op = ljd_bc_op(ins);
		ra = ljd_bc_a(ins);
		switch (op__amode(w, op)) {
		case AM_BASE:
			if (slot >= ra && (op != LJW_BC_KNIL || slot <= ljd_bc_d(ins)))
				return NULL;
			break;
		case AM_DST:
			if (ra != slot)
				break;
			switch (op) {
			case LJW_BC_MOV:
				slot = ljd_bc_d(ins);
				goto restart;
			case LJW_BC_GGET:
				*name = ljw__kgc_str(w, p, ljd_bc_d(ins));
				return *name ? "global" : NULL;
			case LJW_BC_TGETS:
				*name = ljw__kgc_str(w, p, ljd_bc_c(ins));
				if (!*name)
					return NULL;
				if (pos > 0 && ljw__proto_ins(w, p, pos - 1, &insp) == 0 &&
				    ljd_bc_op(insp) == LJW_BC_MOV &&
				    ljd_bc_a(insp) == ra + 1 + w->d.fr2 &&
				    ljd_bc_d(insp) == ljd_bc_b(ins))
					return "method";
				return "field";
			case LJW_BC_UGET:
				*name = ljw__uvname(w, p, ljd_bc_d(ins));
				return *name ? "upvalue" : NULL;
			default:
				return NULL;
			}
		default:
			break;
		}
	}
	return NULL;
}

/* LuaJIT's lj_debug_funcname for a callee called from caller p at pos. */
const char *ljw__funcname(struct ljw *w, const struct ljw_proto *p, int32_t pos,
			  const char **name)
{
	uint32_t ins, op, slot;
	int mm;

	*name = NULL;
	if (!p || p->err != LJW_R_NONE || pos < 0 || (uint32_t)pos >= p->sizebc)
		return NULL;
	if (ljw__proto_ins(w, p, (uint32_t)pos, &ins))
		return NULL;
	op = ljd_bc_op(ins);
	mm = op__mm(op);
	if (mm == MM_call) {
		slot = ljd_bc_a(ins);
		if (op == LJW_BC_ITERC)
			slot -= 3;	/* unsigned wrap never matches a slot, as in LuaJIT */
		return ljw__slotname(w, p, (uint32_t)pos, slot, name);
	}
	if (mm != MM__NONE) {
		*name = mm_names[mm];
		return "metamethod";
	}
	return NULL;
}
