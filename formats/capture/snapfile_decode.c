/* SPDX-License-Identifier: GPL-2.0-or-later */
/* snapfile_decode.c -- decode capture file payloads into the public structs. */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "formats/capture/mpread.h"
#include "formats/capture/snapfile_int.h"
#include "formats/capture/snapfile_schema.h"

/* -- Arena ------------------------------------------------------------------ */

#define ARENA_BLOCK (64 * 1024)

struct snapfile_arena_blk {
	struct snapfile_arena_blk *next;
	size_t used, cap;
	_Alignas(16) uint8_t data[];
};

/* size bytes, 16-byte aligned, or NULL. */
void *snapfile_arena__alloc(struct snapfile_arena *a, size_t size)
{
	struct snapfile_arena_blk *b = a->head;
	size_t cap;

	if (size > SIZE_MAX / 2)
		return NULL;
	size = (size + 15) & ~(size_t)15;
	if (!b || b->cap - b->used < size) {
		cap = size > ARENA_BLOCK ? size : ARENA_BLOCK;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->used = 0;
		b->cap = cap;
		b->next = a->head;
		a->head = b;
		a->held += cap;
	}
	b->used += size;
	return b->data + b->used - size;
}

/* A NUL-terminated copy of (s, len), or NULL. */
char *snapfile_arena__strdup(struct snapfile_arena *a, const char *s, uint32_t len)
{
	char *d = snapfile_arena__alloc(a, (size_t)len + 1);

	if (!d)
		return NULL;
	if (len)
		memcpy(d, s, len);
	d[len] = 0;
	return d;
}

/* Forget every allocation (keeps one small block for reuse). */
void snapfile_arena__reset(struct snapfile_arena *a)
{
	struct snapfile_arena_blk *b = a->head, *keep = NULL;

	while (b) {
		struct snapfile_arena_blk *next = b->next;

		if (!keep && b->cap == ARENA_BLOCK) {
			keep = b;
		} else {
			a->held -= b->cap;
			free(b);
		}
		b = next;
	}
	a->head = keep;
	if (keep) {
		keep->used = 0;
		keep->next = NULL;
	}
}

/* Free everything. */
void snapfile_arena__exit(struct snapfile_arena *a)
{
	snapfile_arena__reset(a);
	free(a->head);
	a->head = NULL;
	a->held = 0;
}

/* -- Field helpers ------------------------------------------------------------ */

/* Mark c failed for lack of memory. */
static void snapfile__nomem(struct mp_cur *c)
{
	if (!c->err) {
		c->err = -ENOMEM;
		c->why = "out of memory";
	}
}

/* Read a string into the arena; "" on error. */
static const char *snapfile__str(struct mp_cur *c, struct snapfile_arena *a)
{
	const char *s;
	uint32_t len;
	char *d;

	if (mp_cur__str(c, &s, &len))
		return "";
	d = snapfile_arena__strdup(a, s, len);
	if (!d) {
		snapfile__nomem(c);
		return "";
	}
	return d;
}

/* Read a comm (str) into a fixed NUL-terminated buffer, truncating. */
static void snapfile__comm(struct mp_cur *c, char comm[LJS_COMM_LEN])
{
	const char *s;
	uint32_t len;

	memset(comm, 0, LJS_COMM_LEN);
	if (mp_cur__str(c, &s, &len))
		return;
	if (len > LJS_COMM_LEN - 1)
		len = LJS_COMM_LEN - 1;
	memcpy(comm, s, len);
}

/* Read an unsigned integer that must fit in 16 bits. */
static uint16_t snapfile__u16(struct mp_cur *c)
{
	uint32_t v;

	if (mp_cur__u32(c, &v))
		return 0;
	if (v > UINT16_MAX) {
		mp_cur__fail(c, "value does not fit in 16 bits");
		return 0;
	}
	return (uint16_t)v;
}

/* Read the next map key (an error if it is not a string). */
static int snapfile__key(struct mp_cur *c, const char **k, uint32_t *klen)
{
	*k = NULL;
	*klen = 0;
	if (mp_cur__peek(c) != MP_STR)
		return mp_cur__fail(c, "map key is not a string");
	return mp_cur__str(c, k, klen);
}

/* Check the record has at least need fields (records may have more). */
static int snapfile__need(struct mp_cur *c, uint32_t nfields, uint32_t need)
{
	if (nfields < need)
		return mp_cur__fail(c, "record has fewer fields than its kind requires");
	return 0;
}

/* Read a record's single map field: [kind, {map}, extra...]; *n pairs. */
static int snapfile__map_rec(struct mp_cur *c, uint32_t nfields, uint32_t *n)
{
	*n = 0;
	if (snapfile__need(c, nfields, 1))
		return c->err;
	return mp_cur__map(c, n);
}

/* -- Schema ---------------------------------------------------------------------- *
 * Read the fields of formats/capture/snapfile_schema.h: SR_<type>(member) reads one
 * value from the cursor `c` into the struct `r` (strings and arrays into the
 * arena `a`, SAMPLE regs through the header's regmap `rm`); a pair member
 * (elements, count) is taken apart by the SR_<type>_ that follows it. */

static void snapfile__regmap(struct mp_cur *c, struct snapfile_regmap *rm);
static void snapfile__regs_bin(struct mp_cur *c, struct ljs_regs *regs,
			       const struct snapfile_regmap *rm);
static void snapfile__maps(struct mp_cur *c, const struct procmap_desc **out, uint32_t *nout,
			   struct snapfile_arena *a);
static void snapfile__luajit(struct mp_cur *c, struct snapfile_process *r,
			     struct snapfile_arena *a);
static void snapfile__layout(struct mp_cur *c, struct lj_layout *lay);
static void snapfile__strs(struct mp_cur *c, const char *const **out, uint32_t *nout,
			   struct snapfile_arena *a);
static void snapfile__sections(struct mp_cur *c, struct ljs_section *sec, uint32_t *nsec);
static void snapfile__ksym_list(struct mp_cur *c, const struct ksym **out,
				uint32_t *nout, struct snapfile_arena *a);
static void snapfile__counters(struct mp_cur *c, const struct snapfile_stat **out,
			       uint32_t *nout, struct snapfile_arena *a);

#define SR_u16(m)		(r->m = snapfile__u16(c))
#define SR_u32(m)		mp_cur__u32(c, &r->m)
#define SR_u64(m)		mp_cur__uint(c, &r->m)
#define SR_str(m)		(r->m = snapfile__str(c, a))
#define SR_comm(m)		snapfile__comm(c, r->m)
#define SR_bin(m)		SR_bin_ m
#define SR_bin_(d, n)		mp_cur__bin(c, &r->d, &r->n)
#define SR_regnames(m)		snapfile__regmap(c, rm)
#define SR_regs(m)		snapfile__regs_bin(c, &r->m, rm)
#define SR_maps(m)		SR_maps_ m
#define SR_maps_(e, n)		snapfile__maps(c, &r->e, &r->n, a)
#define SR_lj(m)		snapfile__luajit(c, r, a)
#define SR_layout(m)		snapfile__layout(c, &r->m)
#define SR_prov(m)		SR_prov_ m
#define SR_prov_(e, n)		snapfile__strs(c, &r->e, &r->n, a)
#define SR_sections(m)		SR_sections_ m
#define SR_sections_(e, n)	snapfile__sections(c, r->e, &r->n)
#define SR_ksyms(m)		SR_ksyms_ m
#define SR_ksyms_(e, n)		snapfile__ksym_list(c, &r->e, &r->n, a)
#define SR_counters(m)		SR_counters_ m
#define SR_counters_(e, n)	snapfile__counters(c, &r->e, &r->n, a)

/* An array's field: read it.  A map's field: read it if key (k, kl) is its key. */
#define SR_POS(key, m, type, cond)	SR_##type(m);
#define SR_KEY(key, m, type, cond)	else if (mp_key_is(k, kl, key)) SR_##type(m);

/* The n pairs of a map of LIST fields, unknown keys skipped; stops at an error. */
#define SR_MAP(LIST, n) do {						\
	uint32_t i_;							\
									\
	for (i_ = 0; i_ < (n) && !c->err; i_++) {			\
		const char *k;						\
		uint32_t kl;						\
									\
		if (snapfile__key(c, &k, &kl))				\
			break;						\
		if (0) {}						\
		LIST(SR_KEY)						\
		else							\
			mp_cur__skip(c);				\
	}								\
} while (0)

/* The fields of an array of nf elements: at least LIST's, extra ones skipped. */
#define SR_ARRAY(LIST, nf) do {						\
	if (snapfile__need(c, (nf), SNAPFILE_NFIELDS(LIST)))		\
		break;							\
	LIST(SR_POS)							\
	mp_cur__skip_n(c, (nf) - SNAPFILE_NFIELDS(LIST));		\
} while (0)

/* An array field after the first need_ ones: read it if the record has it. */
#define SR_POS_IF(key, m, type, cond)	if (i_++ < nf_) { SR_##type(m); }

/* The fields of an array of nf elements: at least need (its fields of format
 * 1.0), then those of LIST's later fields that it has, extra ones skipped. */
#define SR_ARRAY_NEED(LIST, nf, need) do {				\
	uint32_t i_ = 0, nf_ = (nf);					\
									\
	if (snapfile__need(c, nf_, (need)))				\
		break;							\
	LIST(SR_POS_IF)							\
	if (nf_ > SNAPFILE_NFIELDS(LIST))				\
		mp_cur__skip_n(c, nf_ - SNAPFILE_NFIELDS(LIST));	\
} while (0)

/* -- HEADER --------------------------------------------------------------------- */

/* Only the frozen "major" key of a header map (and "minor").  Written by
 * hand, not from SNAPFILE_HEADER_FIELDS: it must read every version. */
int snapfile__decode_version(struct mp_cur *c, uint32_t nfields, uint32_t *major, uint32_t *minor)
{
	uint32_t n, i;

	*major = *minor = 0;
	if (snapfile__map_rec(c, nfields, &n))
		return c->err;
	for (i = 0; i < n && !c->err; i++) {
		const char *k;
		uint32_t kl;

		snapfile__key(c, &k, &kl);
		if (mp_key_is(k, kl, "major"))
			mp_cur__u32(c, major);
		else if (mp_key_is(k, kl, "minor") && mp_cur__peek(c) == MP_UINT)
			mp_cur__u32(c, minor);
		else
			mp_cur__skip(c);
	}
	return c->err;
}

/* Read the header's "regs" list into a file-index -> struct-offset map. */
static void snapfile__regmap(struct mp_cur *c, struct snapfile_regmap *rm)
{
	uint32_t n, i;
	size_t j;

	if (mp_cur__array(c, &n))
		return;
	rm->n = 0;
	for (i = 0; i < n && !c->err; i++) {
		const char *s;
		uint32_t len, off = SNAPFILE_REG_NONE;

		if (mp_cur__str(c, &s, &len))
			break;
		for (j = 0; j < snapfile__nregs; j++)
			if (mp_key_is(s, len, snapfile__regs[j].name))
				off = snapfile__regs[j].offset;
		if (rm->n < SNAPFILE_REGS_MAX)
			rm->off[rm->n++] = off;
	}
}

/* HEADER: [1, {SNAPFILE_HEADER_FIELDS}]. */
int snapfile__decode_header(struct mp_cur *c, uint32_t nfields, struct snapfile_header *r,
			    struct snapfile_regmap *rm, struct snapfile_arena *a)
{
	uint32_t n, i;

	memset(r, 0, sizeof(*r));
	r->ljsnap_version = r->host = r->kernel = r->arch = r->target = "";
	/* Without a "regs" key: this build's order. */
	rm->n = (uint32_t)snapfile__nregs;
	for (i = 0; i < rm->n; i++)
		rm->off[i] = snapfile__regs[i].offset;
	if (snapfile__map_rec(c, nfields, &n))
		return c->err;
	SR_MAP(SNAPFILE_HEADER_FIELDS, n);
	mp_cur__skip_n(c, nfields - 1);
	return c->err;
}

/* -- PROCESS ---------------------------------------------------------------------- */

/* "maps": [[SNAPFILE_MAPPING_FIELDS], ...]. */
static void snapfile__maps(struct mp_cur *c, const struct procmap_desc **out, uint32_t *nout,
			   struct snapfile_arena *a)
{
	struct procmap_desc *maps;
	uint32_t n, i;

	if (mp_cur__array(c, &n) || !n)
		return;
	/* A mapping takes at least 7 bytes: bounds the allocation by the payload. */
	if (n > (uint32_t)((c->end - c->p) / 7)) {
		mp_cur__fail(c, "mapping count larger than the record");
		return;
	}
	maps = snapfile_arena__alloc(a, (size_t)n * sizeof(*maps));
	if (!maps) {
		snapfile__nomem(c);
		return;
	}
	memset(maps, 0, (size_t)n * sizeof(*maps));
	for (i = 0; i < n && !c->err; i++) {
		struct procmap_desc *r = &maps[i];
		uint32_t nf;

		if (mp_cur__array(c, &nf))
			break;
		SR_ARRAY(SNAPFILE_MAPPING_FIELDS, nf);
		if (!r->build_id_len)
			r->build_id = NULL;
	}
	*out = maps;
	*nout = n;
}

/* "layout": {field name: int}; unknown names are ignored, missing ones stay 0. */
static void snapfile__layout(struct mp_cur *c, struct lj_layout *lay)
{
	uint32_t n, i;
	size_t j;

	memset(lay, 0, sizeof(*lay));
	if (mp_cur__map(c, &n))
		return;
	for (i = 0; i < n && !c->err; i++) {
		const char *k;
		uint32_t kl;
		int64_t v;

		if (snapfile__key(c, &k, &kl) || mp_cur__int(c, &v))
			break;
		/* Members are 32-bit; signed and unsigned spellings are both kept. */
		if (v < INT32_MIN || v > (int64_t)UINT32_MAX) {
			mp_cur__fail(c, "layout value does not fit in 32 bits");
			break;
		}
		for (j = 0; j < lj_layout__nfields; j++) {
			if (mp_key_is(k, kl, lj_layout__fields[j].name)) {
				uint32_t u = (uint32_t)v;

				memcpy((char *)lay + lj_layout__fields[j].offset, &u, sizeof(u));
				break;
			}
		}
	}
}

/* An array of strings ("prov"): [str, ...]. */
static void snapfile__strs(struct mp_cur *c, const char *const **out, uint32_t *nout,
			   struct snapfile_arena *a)
{
	const char **v;
	uint32_t n, i;

	if (mp_cur__array(c, &n) || !n)
		return;
	v = snapfile_arena__alloc(a, (size_t)n * sizeof(*v));
	if (!v) {
		snapfile__nomem(c);
		return;
	}
	for (i = 0; i < n; i++)
		v[i] = c->err ? "" : snapfile__str(c, a);
	*out = v;
	*nout = n;
}

/* "lj": {SNAPFILE_LUAJIT_FIELDS}. */
static void snapfile__luajit(struct mp_cur *c, struct snapfile_process *r,
			     struct snapfile_arena *a)
{
	uint32_t n;

	if (mp_cur__map(c, &n))
		return;
	r->has_luajit = 1;
	SR_MAP(SNAPFILE_LUAJIT_FIELDS, n);
}

/* PROCESS: [2, {SNAPFILE_PROCESS_FIELDS}]. */
int snapfile__decode_process(struct mp_cur *c, uint32_t nfields, struct snapfile_process *r,
			     struct snapfile_arena *a)
{
	uint32_t n;

	memset(r, 0, sizeof(*r));
	r->exe = r->cmdline = r->lj_build = "";
	if (snapfile__map_rec(c, nfields, &n))
		return c->err;
	SR_MAP(SNAPFILE_PROCESS_FIELDS, n);
	mp_cur__skip_n(c, nfields - 1);
	return c->err;
}

/* -- SAMPLE ------------------------------------------------------------------------- */

/* regs: u64 LE each, in the order the header listed. */
static void snapfile__regs_bin(struct mp_cur *c, struct ljs_regs *regs,
			       const struct snapfile_regmap *rm)
{
	const uint8_t *b;
	uint32_t len, i;

	memset(regs, 0, sizeof(*regs));
	if (mp_cur__bin(c, &b, &len))
		return;
	for (i = 0; i < len / 8 && i < rm->n; i++) {
		uint64_t v;

		if (rm->off[i] == SNAPFILE_REG_NONE)
			continue;
		memcpy(&v, b + 8 * i, 8);
		v = le64toh(v);
		memcpy((char *)regs + rm->off[i], &v, 8);
	}
}

/* One section: [SNAPFILE_SECTION_FIELDS]. */
static void snapfile__section(struct mp_cur *c, struct ljs_section *r)
{
	uint32_t nf;

	memset(r, 0, sizeof(*r));
	if (mp_cur__array(c, &nf))
		return;
	SR_ARRAY(SNAPFILE_SECTION_FIELDS, nf);
}

/* "sections": [[...], ...]; those beyond what struct ljs_sample holds are skipped. */
static void snapfile__sections(struct mp_cur *c, struct ljs_section *sec, uint32_t *nsec)
{
	uint32_t n, i;

	if (mp_cur__array(c, &n))
		return;
	for (i = 0; i < n && !c->err; i++) {
		if (*nsec < LJS_SAMPLE_MAX_SECS)
			snapfile__section(c, &sec[(*nsec)++]);
		else
			mp_cur__skip(c);
	}
}

/* SAMPLE: [3, SNAPFILE_SAMPLE_FIELDS]. */
int snapfile__decode_sample(struct mp_cur *c, uint32_t nfields, struct ljs_sample *r,
			    const struct snapfile_regmap *rm)
{
	memset(r, 0, sizeof(*r));
	SR_ARRAY(SNAPFILE_SAMPLE_FIELDS, nfields);
	return c->err;
}

/* -- MEMORY, OBJECT, EMBED, KSYMS, STATS, END ------------------------------------------------ */

/* MEMORY: [4, SNAPFILE_MEMORY_FIELDS]. */
int snapfile__decode_memory(struct mp_cur *c, uint32_t nfields, struct snapfile_memory *r)
{
	memset(r, 0, sizeof(*r));
	SR_ARRAY(SNAPFILE_MEMORY_FIELDS, nfields);
	return c->err;
}

/* OBJECT: [8, SNAPFILE_OBJECT_FIELDS]. */
int snapfile__decode_object(struct mp_cur *c, uint32_t nfields, struct snapfile_object *r,
			    struct snapfile_arena *a)
{
	memset(r, 0, sizeof(*r));
	SR_ARRAY(SNAPFILE_OBJECT_FIELDS, nfields);
	return c->err;
}

/* EMBED: [9, SNAPFILE_EMBED_FIELDS]. */
int snapfile__decode_embed(struct mp_cur *c, uint32_t nfields, struct snapfile_embed *r,
			   struct snapfile_arena *a)
{
	memset(r, 0, sizeof(*r));
	SR_ARRAY_NEED(SNAPFILE_EMBED_FIELDS, nfields, SNAPFILE_EMBED_NEED);
	if (!r->names_len)
		r->names = NULL;
	if (!c->err && r->extents_len % 16)
		mp_cur__fail(c, "embed extents are not 16-byte pairs");
	return c->err;
}

/* KSYMS "syms": [[SNAPFILE_KSYM_FIELDS], ...]; *out and *nout set only on success. */
static void snapfile__ksym_list(struct mp_cur *c, const struct ksym **out,
				uint32_t *nout, struct snapfile_arena *a)
{
	struct ksym *syms = NULL;
	uint32_t n, i;

	if (mp_cur__array(c, &n))
		return;
	/* An entry takes at least 4 bytes: bounds the allocation by the payload. */
	if (n > (uint32_t)((c->end - c->p) / 4)) {
		mp_cur__fail(c, "symbol count larger than the record");
		return;
	}
	if (n) {
		syms = snapfile_arena__alloc(a, (size_t)n * sizeof(*syms));
		if (!syms) {
			snapfile__nomem(c);
			return;
		}
	}
	for (i = 0; i < n && !c->err; i++) {
		struct ksym *r = &syms[i];
		uint32_t nf;

		if (mp_cur__array(c, &nf))
			break;
		SR_ARRAY(SNAPFILE_KSYM_FIELDS, nf);
	}
	if (!c->err) {
		*out = syms;
		*nout = n;
	}
}

/* KSYMS: [5, SNAPFILE_KSYMS_FIELDS]. */
int snapfile__decode_ksyms(struct mp_cur *c, uint32_t nfields, struct snapfile_ksyms *r,
			   struct snapfile_arena *a)
{
	memset(r, 0, sizeof(*r));
	SR_ARRAY(SNAPFILE_KSYMS_FIELDS, nfields);
	return c->err;
}

/* STATS counters: {name: u64, ...}; values that are not unsigned integers
 * are skipped; *out and *nout set only on success. */
static void snapfile__counters(struct mp_cur *c, const struct snapfile_stat **out,
			       uint32_t *nout, struct snapfile_arena *a)
{
	struct snapfile_stat *v = NULL;
	uint32_t n, i, used = 0;

	if (mp_cur__map(c, &n))
		return;
	if (n) {
		v = snapfile_arena__alloc(a, (size_t)n * sizeof(*v));
		if (!v) {
			snapfile__nomem(c);
			return;
		}
	}
	for (i = 0; i < n && !c->err; i++) {
		const char *k;
		uint32_t kl;

		if (snapfile__key(c, &k, &kl))
			break;
		if (mp_cur__peek(c) != MP_UINT) {
			mp_cur__skip(c);
			continue;
		}
		v[used].name = snapfile_arena__strdup(a, k, kl);
		if (!v[used].name)
			snapfile__nomem(c);
		mp_cur__uint(c, &v[used].value);
		used++;
	}
	if (!c->err) {
		*out = v;
		*nout = used;
	}
}

/* STATS: [6, SNAPFILE_STATS_FIELDS]. */
int snapfile__decode_stats(struct mp_cur *c, uint32_t nfields, struct snapfile_stats *r,
			   struct snapfile_arena *a)
{
	memset(r, 0, sizeof(*r));
	SR_ARRAY(SNAPFILE_STATS_FIELDS, nfields);
	return c->err;
}

/* END: [7, {SNAPFILE_END_FIELDS}]; an END without its map is accepted. */
int snapfile__decode_end(struct mp_cur *c, uint32_t nfields, struct snapfile_end *r)
{
	uint32_t n = 0;

	memset(r, 0, sizeof(*r));
	if (nfields && mp_cur__map(c, &n))
		return c->err;
	SR_MAP(SNAPFILE_END_FIELDS, n);
	if (nfields)
		mp_cur__skip_n(c, nfields - 1);
	return c->err;
}
