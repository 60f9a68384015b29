/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljwalk_def.c -- names of Lua functions by where they are defined.
 *
 * The call site names a callee the way lj_debug.c's lj_debug_funcname does
 * (ljwalk_name.c), so a tail-called function takes its caller's name and a
 * function called through several slots gets several names.  The definition
 * gives one name per function.  A GCproto does not link to its parent, but
 * the parent holds it as a constant: lj_parse.c (parse_body) emits
 * FNEW dst, index with the child at proto_kgc(parent, ~index) (lj_obj.h),
 * and the statement's store of dst follows it (lj_parse.c bcemit_store):
 *
 *   local function g / local g = function   FNEW into g's own slot: g is live
 *                                 at the FNEW (var_add precedes parse_body) or
 *                                 just after it, and the parent's varinfo names it
 *   g = function (g an upvalue)   USETV uv, dst
 *   function gf()                 GSET dst, "gf"
 *   function M.h() / M:m()        TSETS dst, M, "h", M named the way a called
 *                                 slot is (local, global, upvalue, field); a
 *                                 method's first parameter is "self"
 *                                 (lj_parse.c parse_func, parse_body needself)
 *
 * The parents searched are the prototypes this walk read (every Lua frame's)
 * and, within a budget, the prototypes nested in them: a chunk's main
 * function reaches every function the chunk defines while it runs.  A
 * function whose parent is not among them (the main function of a module
 * that has returned: nothing refers to its prototype any more, lj_gc.c) gets
 * no definition name; frame_name.c then uses the call-site name.
 */
#include <errno.h>
#include <string.h>

#include "unwind/ljwalk_int.h"

#define DEF_LOADS_MAX	16	/* nested prototypes read per walk to find parents */
#define DEF_QUEUE_MAX	256	/* children waiting to be read */
#define PROTO_CHILD	0x01	/* lj_obj.h: has child prototypes */
#define DEF_NAMED	(1ull << 63)	/* defs value: named, low bits = frame index */

/* Reference constant idx of a prototype (proto_kgc(pt, ~idx)). */
static int kgc__ref(struct ljw *w, const struct ljw_proto *p, uint32_t idx, uint64_t *ref)
{
	uint8_t b[8] = { 0 };

	if (idx >= p->sizekgc || p->k == 0 || w->d.ref > sizeof(b))
		return -ERANGE;
	if (ljw__proto_read(w, p, p->k - (uint64_t)w->d.ref * (idx + 1), b, w->d.ref))
		return -EFAULT;
	memcpy(ref, b, sizeof(*ref));	/* little endian; upper bytes zero if ref == 4 */
	return 0;
}

/* Enter the children of protos[pi] (every FNEW's constant) in w->defs and
 * queue the new ones. */
static void def__scan(struct ljw *w, size_t pi, uint64_t *queue, size_t *nq)
{
	struct ljw_proto *p = &w->protos[pi];
	uint64_t child, *v;
	uint32_t pos, ins;
	int found;

	if (p->defscan || p->err != LJW_R_NONE || !p->mem || !(p->flags & PROTO_CHILD))
		return;
	p->defscan = 1;
	for (pos = 0; pos < p->sizebc; pos++) {
		if (ljw__proto_ins(w, p, pos, &ins) || ljd_bc_op(ins) != LJW_BC_FNEW)
			continue;
		if (kgc__ref(w, p, ljd_bc_d(ins), &child) || child == 0)
			continue;
		found = intmap__slot(&w->defs, child, &v);
		if (found < 0) {
			w->nomem = 1;
			return;
		}
		if (found)
			continue;
		*v = (uint64_t)pi << 32 | pos;
		if (*nq < DEF_QUEUE_MAX)
			queue[(*nq)++] = child;
	}
}

/* A frame that wants a definition name. */
static int frame__wants(const struct ljw_frame *f)
{
	return f->kind == LJW_FRAME_LUA && f->pt &&
	       !(f->flags & (LJW_F_MAIN | LJW_F_BUILTIN_LUA));
}

/* 1 when some frame's parent is still unknown. */
static int def__pending(const struct ljw *w)
{
	size_t i;

	for (i = 0; i < w->nframes; i++)
		if (frame__wants(&w->frames[i]) && !intmap__find(&w->defs, w->frames[i].pt))
			return 1;
	return 0;
}

/* A key usable after '.' (a Lua name). */
static int key__is_name(const char *s)
{
	const char *p;

	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return 0;
	for (p = s; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_' ||
		      (*p >= '0' && *p <= '9')))
			return 0;
	return 1;
}

/* "tab.key", "tab:key" or tab["key"] in the arena (key alone without tab). */
static const char *name__join(struct ljw *w, const char *tab, const char *key, int method)
{
	size_t n;
	char *s;

	if (!tab || !tab[0])
		return key;
	n = strlen(tab) + strlen(key) + 5;
	if (!(s = ljw__alloc(w, n)))
		return NULL;
	strcpy(s, tab);
	if (key__is_name(key)) {
		strcat(s, method ? ":" : ".");
		strcat(s, key);
	} else {
		strcat(s, "[\"");
		strcat(s, key);
		strcat(s, "\"]");
	}
	return s;
}

/* A local's name, not one of LuaJIT's internal "(for ...)" variables. */
static const char *local__name(struct ljw *w, const struct ljw_proto *p, uint32_t pc,
			       uint32_t slot)
{
	const char *n = ljw__varname(w, p, pc, slot);

	return n && n[0] && n[0] != '(' ? n : NULL;
}

/* The TSETS store of a field or method: "M.h", "M:m". */
static const char *def__field(struct ljw *w, const struct ljw_proto *p, const struct ljw_proto *c,
			      uint32_t pos, uint32_t st, const char **what)
{
	const char *key = ljw__kgc_str(w, p, ljd_bc_c(st)), *tab = NULL, *self;
	int method;

	if (!key || !key[0])
		return NULL;
	if (!ljw__slotname(w, p, pos, ljd_bc_b(st), &tab))
		tab = NULL;
	self = c->numparams >= 1 ? ljw__varname(w, c, 0, 0) : NULL;
	method = self && !strcmp(self, "self");
	*what = method ? "method" : "field";
	return name__join(w, tab, key, method);
}

/* The name the parent's code at FNEW index pos gives child c, or NULL. */
static const char *def__name(struct ljw *w, const struct ljw_proto *p, const struct ljw_proto *c,
			     uint32_t pos, const char **what)
{
	uint32_t ins, st, a, op;
	const char *n;

	if (ljw__proto_ins(w, p, pos, &ins))
		return NULL;
	a = ljd_bc_a(ins);
	if ((n = local__name(w, p, pos, a)) || (n = local__name(w, p, pos + 1, a))) {
		*what = "local";
		return n;
	}
	if (ljw__proto_ins(w, p, pos + 1, &st))
		return NULL;
	op = ljd_bc_op(st);
	if (op == LJW_BC_GSET && ljd_bc_a(st) == a) {
		*what = "global";
		return ljw__kgc_str(w, p, ljd_bc_d(st));
	}
	if (op == LJW_BC_USETV && ljd_bc_d(st) == a) {
		n = ljw__uvname(w, p, ljd_bc_a(st));
		*what = "upvalue";
		return n && n[0] ? n : NULL;
	}
	if (op == LJW_BC_MOV && ljd_bc_d(st) == a) {
		*what = "local";
		return local__name(w, p, pos + 2, ljd_bc_a(st));
	}
	if (op == LJW_BC_TSETS && ljd_bc_a(st) == a)
		return def__field(w, p, c, pos + 1, st, what);
	return NULL;
}

/* Name frame i from its parent (defs value v); remember it for its copies. */
static void frame__define(struct ljw *w, size_t i, uint64_t *v)
{
	struct ljw_frame *f = &w->frames[i];
	const struct ljw_proto *p, *c;
	const char *what = NULL, *n;
	uint64_t ci;

	if (*v & DEF_NAMED) {
		const struct ljw_frame *o = &w->frames[*v & 0xffffffffu];

		f->defname = o->defname;
		f->defwhat = o->defwhat;
		return;
	}
	if (!intmap__get(&w->byaddr, f->pt, &ci) || (c = &w->protos[ci])->err != LJW_R_NONE)
		c = NULL;
	p = &w->protos[*v >> 32];
	n = c ? def__name(w, p, c, (uint32_t)(*v & 0xffffffffu), &what) : NULL;
	if (n) {
		f->defname = n;
		f->defwhat = what;
	}
	*v = DEF_NAMED | i;
}

/* Name every Lua frame by its definition where its parent is reachable. */
void ljw__defnames(struct ljw *w)
{
	uint64_t queue[DEF_QUEUE_MAX], *v;
	size_t i, nq = 0, qi = 0, loads = 0;
	struct ljw_proto *p;

	intmap__clear(&w->defs);
	for (i = 0; i < w->nframes && !frame__wants(&w->frames[i]); i++)
		;
	if (i == w->nframes)
		return;
	for (i = 0; i < w->nprotos; i++)	/* every frame's prototype, and traces' */
		def__scan(w, i, queue, &nq);
	/* Parents further up: the prototypes nested in those, breadth first. */
	while (qi < nq && loads < DEF_LOADS_MAX && !w->nomem && def__pending(w)) {
		if (!intmap__find(&w->byaddr, queue[qi]))
			loads++;	/* a read (the recorder stores it) */
		if ((p = ljw__proto(w, queue[qi++])) != NULL)
			def__scan(w, (size_t)(p - w->protos), queue, &nq);
	}
	for (i = 0; i < w->nframes; i++)
		if (frame__wants(&w->frames[i]) && (v = intmap__find(&w->defs, w->frames[i].pt)))
			frame__define(w, i, v);
}
