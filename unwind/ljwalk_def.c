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
 * function reaches every function the chunk defines while it runs.
 *
 * The parent is gone once it has returned and nothing refers to its
 * prototype (lj_gc.c marks a proto from its closures and its parent, never
 * from a child): the main function of every module that require() has
 * loaded.  Its local functions live on as the upvalues of the closures that
 * use them, named by the local (lj_parse.c fs_fixup_uv2, lj_debug_uvname),
 * and `local function g` is immutable there (parse_local stores it without
 * VSTACK_VAR_RW).  So a frame still unnamed takes the name of an immutable
 * upvalue of a closure on the stack that holds its function: its own
 * closure first (g calling itself), then the others innermost first, within
 * a budget of reads.  Fields and methods of a module table have no such
 * trace; they keep no definition name and frame_name.c uses the call site's.
 *
 * What the reads do not reach in one sample an earlier one may have: a
 * prototype's definition name is remembered across walks (checked against
 * its firstline, sizebc and chunkname's bytes before use, since the address
 * may hold another prototype by then) and given to its frames that this
 * walk could not name.  It is looked up only after every read, so the bytes a
 * walk reads, which the recorder keeps (formats/capture/harvest.h), do not
 * depend on the walks before it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/vec.h"

#include "unwind/ljwalk_int.h"

#define DEF_LOADS_MAX	16	/* nested prototypes read per walk to find parents */
#define DEF_QUEUE_MAX	256	/* children waiting to be read */
#define PROTO_CHILD	0x01	/* lj_obj.h: has child prototypes */
#define DEF_NAMED	(1ull << 63)	/* defs value: named, low bits = frame index */
#define DEF_UV_READS_MAX 64	/* closure and upvalue reads per walk */
#define UV_IMMUTABLE	0x4000	/* lj_obj.h PROTO_UV_IMMUTABLE, in GCproto.uv[] */
#define UV_MAX		60	/* LJ_MAX_UPVAL */
#define KNOWN_MAX	(1u << 16)	/* definition names remembered across walks */

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
	const uint8_t *bc;
	uint64_t child, *v;
	uint32_t pos, ins;
	int found;

	if (p->defscan || p->err != LJW_R_NONE || !p->mem || !(p->flags & PROTO_CHILD))
		return;
	p->defscan = 1;
	/* The bytecode straight from the whole allocation, as ljw__proto_ins
	 * reads it (p->mem holds all of it): most instructions are not FNEW. */
	bc = p->mem + w->d.lay->pt_size;
	for (pos = 0; pos < p->sizebc; pos++) {
		if (bc[4 * (size_t)pos] != LJW_BC_FNEW)	/* the opcode is the low byte */
			continue;
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

/* The GCfunc a TValue holds, else 0 (lj_obj.h: LJ_TFUNC is ~8u; GC64 keeps
 * the type in the bits above 47). */
static uint64_t tv__func(const struct ljw *w, uint64_t tv)
{
	if (w->d.ref == 8)
		return tv >> 47 == 0x1fff7 ? tv & ((1ull << 47) - 1) : 0;
	return (uint32_t)(tv >> 32) == 0xfffffff7u ? (uint32_t)tv : 0;
}

/* The function upvalue uv holds, else 0.  GCupval (lj_obj.h): GCHeader,
 * closed, immutable, then the value itself (closed) or the open list
 * links, then MRef v (the stack slot of an open upvalue). */
static uint64_t uv__func(struct ljw *w, uint64_t uv)
{
	uint32_t r = w->d.ref, tvo = (w->d.gct_ofs + 3 + 7) & ~7u, vo = tvo + 2 * r;
	uint8_t b[64];
	uint64_t tv = 0, v = 0;

	if (vo + r > sizeof(b) || memsrc__read(w->d.ms, uv, b, vo + r) ||
	    b[w->d.gct_ofs] != LJD_GCT_UPVAL)
		return 0;
	if (b[w->d.gct_ofs + 1]) {		/* closed */
		memcpy(&tv, b + tvo, 8);
	} else {
		memcpy(&v, b + vo, r);		/* little endian; upper bytes zero if r == 4 */
		if (memsrc__read(w->d.ms, v, &tv, 8))
			return 0;
	}
	return tv__func(w, tv);
}

/* Give the frames running fn that have no name yet the name n; fn is no
 * longer wanted. */
static void def__give(struct ljw *w, struct intmap *want, uint64_t fn, const char *n)
{
	size_t i;

	for (i = 0; i < w->nframes; i++) {
		struct ljw_frame *f = &w->frames[i];

		if (f->fn == fn && frame__wants(f) && !f->defname) {
			f->defname = n;
			f->defwhat = "upvalue";
		}
	}
	intmap__del(want, fn);
}

/* Name unnamed frames from the immutable upvalues of closure fn (prototype
 * p), each GCupval read once (closures of one chunk share them: seen holds
 * the closures and upvalues read); *reads counts down the budget. */
static void def__closure(struct ljw *w, struct intmap *want, struct intmap *seen, uint64_t fn,
			 const struct ljw_proto *p, int *reads)
{
	uint8_t refs[UV_MAX * 8], flags[UV_MAX * 2];
	uint64_t uvp = 0, uvarr = 0, val, *sv;
	uint32_t i, r = w->d.ref, n = p->sizeuv;
	const char *name;

	if (n == 0 || n > UV_MAX || ljw__proto_read(w, p, p->pt + w->d.lay->pt_uv, &uvarr, r) ||
	    ljw__proto_read(w, p, uvarr, flags, 2 * n))
		return;
	/* GCfuncL.uvptr[] follows GCfuncHeader where GCfuncC.f is (lj_obj.h). */
	if ((*reads)-- <= 0 || memsrc__read(w->d.ms, fn + w->d.lay->fn_f, refs, (size_t)n * r))
		return;
	for (i = 0; i < n && *reads > 0 && intmap__count(want); i++) {
		if (!((flags[2 * i] | flags[2 * i + 1] << 8) & UV_IMMUTABLE))
			continue;
		uvp = 0;
		memcpy(&uvp, refs + (size_t)i * r, r);
		if (intmap__slot(seen, uvp, &sv) != 0)
			continue;	/* shared with a closure read before */
		(*reads)--;
		val = uv__func(w, uvp);
		if (!val || !intmap__find(want, val))
			continue;
		name = ljw__uvname(w, p, i);
		if (name && name[0])
			def__give(w, want, val, name);
	}
}

/* Name the frames still unnamed from the upvalues of the closures on the
 * stack: each one's own closure first, then the others innermost first. */
static void def__upvalues(struct ljw *w)
{
	struct intmap *want = &w->uvwant, *seen = &w->uvseen;
	int reads = DEF_UV_READS_MAX, pass;
	uint64_t ci, *v;
	size_t i;

	for (i = 0; i < w->nframes; i++) {
		const struct ljw_frame *f = &w->frames[i];

		if (f->fn && frame__wants(f) && !f->defname && intmap__put(want, f->fn, 1))
			goto out;
	}
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < w->nframes && reads > 0 && intmap__count(want); i++) {
			const struct ljw_frame *f = &w->frames[i];

			if (f->kind != LJW_FRAME_LUA || !f->fn ||
			    (pass == 0 && !intmap__find(want, f->fn)))
				continue;
			if (!intmap__get(&w->byaddr, f->pt, &ci) || w->protos[ci].err != LJW_R_NONE)
				continue;
			if (intmap__slot(seen, f->fn, &v) != 0)
				continue;	/* scanned, or out of memory */
			def__closure(w, want, seen, f->fn, &w->protos[ci], &reads);
		}
	}
out:
	intmap__clear(seen);
	intmap__clear(want);
}

/* The prototype of a Lua frame, when it is usable. */
static const struct ljw_proto *frame__proto(const struct ljw *w, const struct ljw_frame *f)
{
	uint64_t ci;

	if (!intmap__get(&w->byaddr, f->pt, &ci) || w->protos[ci].err != LJW_R_NONE)
		return NULL;
	return &w->protos[ci];
}

/* The remembered name of prototype p, or NULL.  The chunkname is compared
 * by its bytes: the GC frees a chunk's name with the chunk, and the next
 * chunk's name may take its address (a loop of loadstring(src, "=genK")). */
static struct ljw_defname *known__find(struct ljw *w, const struct ljw_proto *p)
{
	struct ljw_defname *k;
	uint64_t idx;

	if (!intmap__get(&w->byknown, p->pt, &idx))
		return NULL;
	k = &w->known[idx];
	if (k->firstline != p->firstline || k->sizebc != p->sizebc ||
	    k->chunkname_ref != p->chunkname_ref || !k->chunk != !p->chunkname ||
	    (k->chunk && (k->chunk_len != p->chunkname_len ||
			  memcmp(k->chunk, p->chunkname, k->chunk_len))))
		return NULL;
	return k;
}

/* A copy of name with the chunkname's bytes after it, or NULL. */
static char *known__dup(const char *name, const struct ljw_proto *p)
{
	size_t n = strlen(name) + 1, c = p->chunkname ? p->chunkname_len : 0;
	char *s;

	if (!(s = malloc(n + c + 1)))
		return NULL;
	memcpy(s, name, n);
	memcpy(s + n, p->chunkname ? p->chunkname : "", c);
	s[n + c] = '\0';
	return s;
}

/* Remember frame f's definition name (a store after FNEW beats an upvalue). */
static void known__put(struct ljw *w, const struct ljw_frame *f, const struct ljw_proto *p)
{
	struct ljw_defname *k;
	uint64_t *idx;
	char *n;
	int found;

	k = known__find(w, p);
	if (k && (!strcmp(k->name, f->defname) || strcmp(f->defwhat, "upvalue") == 0))
		return;
	if (!(n = known__dup(f->defname, p)))
		return;
	if (!k) {
		if (w->nknown >= KNOWN_MAX ||
		    VEC_GROW(w->known, &w->capknown, w->nknown + 1) != 0 ||
		    (found = intmap__slot(&w->byknown, p->pt, &idx)) < 0) {
			free(n);
			return;
		}
		if (found) {	/* another prototype lived there: reuse its entry */
			k = &w->known[*idx];
			free(k->name);
		} else {
			*idx = w->nknown;
			k = &w->known[w->nknown++];
		}
	} else {
		free(k->name);
	}
	k->pt = p->pt;
	k->chunkname_ref = p->chunkname_ref;
	k->firstline = p->firstline;
	k->sizebc = p->sizebc;
	k->name = n;
	k->chunk = p->chunkname ? n + strlen(n) + 1 : NULL;
	k->chunk_len = p->chunkname ? p->chunkname_len : 0;
	k->what = f->defwhat;
	w->known_gen++;
}

/* Remember this walk's definition names, then name the frames it could not
 * (and those it named by an upvalue when a store after FNEW named the
 * prototype before).  Two passes: a name is replaced before any frame of
 * this walk points to it. */
static void known__apply(struct ljw *w)
{
	const struct ljw_defname *k;
	const struct ljw_proto *p;
	size_t i;

	for (i = 0; i < w->nframes; i++) {
		const struct ljw_frame *f = &w->frames[i];

		if (frame__wants(f) && f->defname && f->defwhat && (p = frame__proto(w, f)))
			known__put(w, f, p);
	}
	for (i = 0; i < w->nframes; i++) {
		struct ljw_frame *f = &w->frames[i];

		if (!frame__wants(f) || !(p = frame__proto(w, f)) || !(k = known__find(w, p)))
			continue;
		if (!f->defname || (!strcmp(f->defwhat, "upvalue") && strcmp(k->what, "upvalue"))) {
			f->defname = k->name;
			f->defwhat = k->what;
		}
	}
}

/* Free the names remembered across walks. */
void ljw__defnames_exit(struct ljw *w)
{
	size_t i;

	for (i = 0; i < w->nknown; i++)
		free(w->known[i].name);
	free(w->known);
	intmap__exit(&w->byknown);
	intmap__exit(&w->uvwant);
	intmap__exit(&w->uvseen);
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
	def__upvalues(w);
	known__apply(w);
}
