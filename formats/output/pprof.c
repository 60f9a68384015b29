/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pprof.c -- the profile as a gzip-compressed profile.proto (see pprof.h).
 *
 * The protobuf is encoded by hand: varints, length-delimited fields (a
 * message's body is written first; its tag and length go in front of it
 * when it closes), packed repeated integers, proto3 defaults (0) left out.
 * Each top-level field is complete when it closes, so the bytes go to zlib
 * every PB_FLUSH bytes; the string table, which the other fields index,
 * comes last (fields may come in any order, a repeated field's elements
 * keep theirs).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "formats/output/pprof.h"
#include "symtab/intmap.h"
#include "symtab/vec.h"

/* Field numbers of google/pprof's proto/profile.proto. */
enum {
	F_PROFILE_SAMPLE_TYPE = 1, F_PROFILE_SAMPLE = 2, F_PROFILE_MAPPING = 3,
	F_PROFILE_LOCATION = 4, F_PROFILE_FUNCTION = 5, F_PROFILE_STRING_TABLE = 6,
	F_PROFILE_TIME_NANOS = 9, F_PROFILE_DURATION_NANOS = 10, F_PROFILE_PERIOD_TYPE = 11,
	F_PROFILE_PERIOD = 12, F_PROFILE_COMMENT = 13,
};
enum { F_VALUETYPE_TYPE = 1, F_VALUETYPE_UNIT = 2 };
enum { F_SAMPLE_LOCATION_ID = 1, F_SAMPLE_VALUE = 2, F_SAMPLE_LABEL = 3 };
enum { F_LABEL_KEY = 1, F_LABEL_STR = 2, F_LABEL_NUM = 3 };
enum {
	F_MAPPING_ID = 1, F_MAPPING_MEMORY_START = 2, F_MAPPING_MEMORY_LIMIT = 3,
	F_MAPPING_FILE_OFFSET = 4, F_MAPPING_FILENAME = 5, F_MAPPING_BUILD_ID = 6,
	F_MAPPING_HAS_FUNCTIONS = 7, F_MAPPING_HAS_FILENAMES = 8,
	F_MAPPING_HAS_LINE_NUMBERS = 9, F_MAPPING_HAS_INLINE_FRAMES = 10,
};
enum { F_LOCATION_ID = 1, F_LOCATION_MAPPING_ID = 2, F_LOCATION_ADDRESS = 3, F_LOCATION_LINE = 4 };
enum { F_LINE_FUNCTION_ID = 1, F_LINE_LINE = 2 };
enum {
	F_FUNCTION_ID = 1, F_FUNCTION_NAME = 2, F_FUNCTION_SYSTEM_NAME = 3,
	F_FUNCTION_FILENAME = 4, F_FUNCTION_START_LINE = 5,
};

#define WIRE_VARINT	0
#define WIRE_LEN	2

#define PB_FLUSH	(64 * 1024)	/* bytes buffered before they go to zlib */
#define PP_DEFAULT_HZ	99		/* the sampling frequency when the capture has none */

/* Protobuf bytes being built; err keeps the first failure of the writer. */
struct pb {
	uint8_t *v;
	size_t n, cap;
	int err;
};

/* A string of the string table: its bytes in the pool; the next string
 * with the same hash (index + 1, 0: none). */
struct pp_str {
	size_t off;
	uint32_t len, next;
};

/* A location: its frames (at pp.lfr + off, root first: a frame, then the
 * functions the compiler inlined into it), its mapping id, the next
 * location starting with the same frame (index + 1). */
struct pp_loc {
	size_t off;
	uint32_t n, mapping, next;
};

/* A mapping: its strings, range and what its functions have; the next
 * mapping with the same key hash (id, 0: none). */
struct pp_map {
	uint32_t file, build;
	uint64_t start, limit, offset;
	int lines, inlines;
	uint32_t next;
};

struct pp {
	const struct agg *a;
	struct pp_str *s;		/* the string table, "" first */
	size_t ns, scap;
	char *pool;
	size_t npool, poolcap;
	struct intmap shash;		/* hash of a string -> its index + 1 */
	uint32_t *fn;			/* per frame id: its function id (0: none yet) */
	uint32_t *fnfr;			/* per function id - 1: its frame id */
	size_t nfn, fncap;
	struct pp_loc *loc;
	size_t nloc, loccap;
	uint32_t *lfr;			/* the frames of the locations */
	size_t nlfr, lfrcap;
	struct intmap lhead;		/* first frame id -> location index + 1 */
	struct pp_map *map;
	size_t nmap, mapcap;
	struct intmap mkey;		/* hash of a native file, build id, start -> id */
	uint32_t lua_map, kernel_map;	/* their mapping ids (0: not yet) */
	uint32_t main_map;		/* the mapping written first (see pp__main) */
	uint32_t *sloc;			/* location ids of one stack, leaf first (pp__stack_locs) */
	size_t nsloc, sloccap;
	struct agg_stack sb;		/* the stack being written */
	uint64_t period;
	struct pb b;
	z_stream z;
	int zinit;
	FILE *out;
	unsigned char zbuf[16384];
};

/* -- Protobuf ------------------------------------------------------------------ */

/* Room for more bytes. */
static int pb__need(struct pb *b, size_t more)
{
	if (!b->err && VEC_GROW(b->v, &b->cap, b->n + more))
		b->err = -ENOMEM;
	return b->err;
}

/* v as a varint at p: its length (at most 10). */
static size_t varint__put(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static void pb__varint(struct pb *b, uint64_t v)
{
	if (!pb__need(b, 10))
		b->n += varint__put(b->v + b->n, v);
}

/* An integer field (int64, uint64 or bool); 0, proto3's default, is left out. */
static void pb__int(struct pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb__varint(b, (uint64_t)field << 3 | WIRE_VARINT);
	pb__varint(b, v);
}

/* A string field (written even when empty: string_table[0] is ""). */
static void pb__bytes(struct pb *b, unsigned field, const void *p, size_t len)
{
	pb__varint(b, (uint64_t)field << 3 | WIRE_LEN);
	pb__varint(b, len);
	if (!pb__need(b, len) && len) {
		memcpy(b->v + b->n, p, len);
		b->n += len;
	}
}

/* Open a length-delimited field (a message, a packed list): where its body starts. */
static size_t pb__open(const struct pb *b)
{
	return b->n;
}

/* Close the field opened at start: its tag and length go in front of its body. */
static void pb__close(struct pb *b, unsigned field, size_t start)
{
	uint8_t hdr[20];
	size_t len, h;

	if (b->err)
		return;
	len = b->n - start;
	h = varint__put(hdr, (uint64_t)field << 3 | WIRE_LEN);
	h += varint__put(hdr + h, len);
	if (pb__need(b, h))
		return;
	memmove(b->v + start + h, b->v + start, len);
	memcpy(b->v + start, hdr, h);
	b->n += h;
}

/* -- gzip ---------------------------------------------------------------------- */

/* Compress the bytes built so far (once PB_FLUSH are there, or all of them
 * and the end of the stream with finish) and write them out. */
static void pp__flush(struct pp *p, int finish)
{
	size_t have;
	int zr;

	if (p->b.err || (!finish && p->b.n < PB_FLUSH))
		return;
	p->z.next_in = p->b.v;
	p->z.avail_in = (uInt)p->b.n;
	do {
		p->z.next_out = p->zbuf;
		p->z.avail_out = sizeof(p->zbuf);
		zr = deflate(&p->z, finish ? Z_FINISH : Z_NO_FLUSH);
		have = sizeof(p->zbuf) - p->z.avail_out;
		if (zr == Z_STREAM_ERROR || (zr == Z_BUF_ERROR && finish && !have)) {
			p->b.err = -EIO;
			return;
		}
		if (have && fwrite(p->zbuf, 1, have, p->out) != have) {
			p->b.err = -EIO;
			return;
		}
	} while (p->z.avail_out == 0 || (finish && zr != Z_STREAM_END));
	p->b.n = 0;
}

/* -- The tables ---------------------------------------------------------------- */

/* FNV-1a. */
static uint64_t str__hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

/* The index of a string in the string table, added when new; 0 for "" and
 * NULL, and on failure (p->b.err set). */
static uint32_t pp__str(struct pp *p, const char *s, size_t len)
{
	struct pp_str *e;
	uint64_t *head;
	uint32_t k;
	int r;

	if (!s || !len || p->b.err)
		return 0;
	r = intmap__slot(&p->shash, str__hash(s, len), &head);
	if (r < 0) {
		p->b.err = r;
		return 0;
	}
	for (k = r ? (uint32_t)*head : 0; k; k = p->s[k - 1].next)
		if (p->s[k - 1].len == len && !memcmp(p->pool + p->s[k - 1].off, s, len))
			return k - 1;
	if (p->ns >= UINT32_MAX - 1 || len > UINT32_MAX || VEC_GROW(p->s, &p->scap, p->ns + 1) ||
	    VEC_GROW(p->pool, &p->poolcap, p->npool + len)) {
		p->b.err = -ENOMEM;
		return 0;
	}
	e = &p->s[p->ns];
	e->off = p->npool;
	e->len = (uint32_t)len;
	e->next = (uint32_t)*head;
	memcpy(p->pool + p->npool, s, len);
	p->npool += len;
	*head = ++p->ns;
	return (uint32_t)(p->ns - 1);
}

static uint32_t pp__cstr(struct pp *p, const char *s)
{
	return pp__str(p, s, s ? strlen(s) : 0);
}

/* The function id of frame id (made when first used; 0 on failure). */
static uint32_t pp__func(struct pp *p, uint32_t id)
{
	if (p->fn[id])
		return p->fn[id];
	if (VEC_GROW(p->fnfr, &p->fncap, p->nfn + 1)) {
		p->b.err = -ENOMEM;
		return 0;
	}
	p->fnfr[p->nfn++] = id;
	return p->fn[id] = (uint32_t)p->nfn;
}

/* A new mapping: its id (0 on failure). */
static uint32_t pp__map_new(struct pp *p, const char *file, const struct ljs_frame_src *src)
{
	struct pp_map *m;

	if (VEC_GROW(p->map, &p->mapcap, p->nmap + 1)) {
		p->b.err = -ENOMEM;
		return 0;
	}
	m = &p->map[p->nmap];
	memset(m, 0, sizeof(*m));
	m->file = pp__cstr(p, file);
	if (src) {
		m->build = pp__cstr(p, src->build_id);
		m->start = src->map_start;
		m->limit = src->map_limit;
		m->offset = src->map_offset;
	}
	return (uint32_t)++p->nmap;
}

/* The mapping id of a location whose first frame is id: "[lua]" for the
 * Lua side, "[kernel.kallsyms]", else one per file, build id and start
 * address (processes that were not forked from one another load a file at
 * other addresses; a Location's address stays inside its Mapping). */
static uint32_t pp__mapping(struct pp *p, uint32_t id)
{
	enum ljs_fkind k = agg__frame_kind(p->a, id);
	struct ljs_frame_src src;
	int has = agg__frame_src(p->a, id, &src);
	uint32_t file, build, m;
	uint64_t *head, start;
	int r;

	if (k == LJS_FK_KERNEL) {
		if (!p->kernel_map)
			p->kernel_map = pp__map_new(p, "[kernel.kallsyms]", NULL);
		return p->kernel_map;
	}
	if (k != LJS_FK_NATIVE && k != LJS_FK_NATIVE_INLINED) {
		if (!p->lua_map && (p->lua_map = pp__map_new(p, "[lua]", NULL)) != 0)
			p->map[p->lua_map - 1].lines = 1;
		return p->lua_map;
	}
	/* Native: JIT code and frames outside any mapping have no file. */
	file = pp__cstr(p, has && src.module ? src.module : "[anon]");
	build = pp__cstr(p, has ? src.build_id : NULL);
	start = has ? src.map_start : 0;
	r = intmap__slot(&p->mkey, ((uint64_t)file << 32 | build) * 0x9e3779b97f4a7c15ull ^ start,
			 &head);
	if (r < 0 || p->b.err) {
		p->b.err = r < 0 ? r : p->b.err;
		return 0;
	}
	for (m = r ? (uint32_t)*head : 0; m; m = p->map[m - 1].next)
		if (p->map[m - 1].file == file && p->map[m - 1].build == build &&
		    p->map[m - 1].start == start)
			return m;
	m = pp__map_new(p, has && src.module ? src.module : "[anon]", has ? &src : NULL);
	if (m) {
		p->map[m - 1].next = (uint32_t)*head;
		*head = m;
	}
	return m;
}

/* The location id of the frames ids[0 .. n) (a frame and what was inlined
 * into it, root first), made when new with its functions; 0 on failure. */
static uint32_t pp__location(struct pp *p, const uint32_t *ids, uint32_t n)
{
	struct ljs_frame_src src;
	struct pp_loc *l;
	uint64_t *head;
	uint32_t k, m;
	int r = intmap__slot(&p->lhead, ids[0], &head);

	if (r < 0) {
		p->b.err = r;
		return 0;
	}
	for (k = r ? (uint32_t)*head : 0; k; k = p->loc[k - 1].next)
		if (p->loc[k - 1].n == n && !memcmp(p->lfr + p->loc[k - 1].off, ids, n * sizeof(*ids)))
			return k;
	if (p->nloc >= UINT32_MAX - 1 || VEC_GROW(p->loc, &p->loccap, p->nloc + 1) ||
	    VEC_GROW(p->lfr, &p->lfrcap, p->nlfr + n)) {
		p->b.err = -ENOMEM;
		return 0;
	}
	m = pp__mapping(p, ids[0]);
	for (k = 0; k < n; k++) {
		pp__func(p, ids[k]);
		if (m && m != p->lua_map && agg__frame_src(p->a, ids[k], &src) && src.line > 0)
			p->map[m - 1].lines = 1;
	}
	if (m && n > 1)
		p->map[m - 1].inlines = 1;
	l = &p->loc[p->nloc];
	l->off = p->nlfr;
	l->n = n;
	l->mapping = m;
	l->next = (uint32_t)*head;
	memcpy(p->lfr + p->nlfr, ids, n * sizeof(*ids));
	p->nlfr += n;
	*head = ++p->nloc;
	return p->b.err ? 0 : (uint32_t)p->nloc;
}

/* The locations of stack i into p->sloc, leaf first: each frame but the
 * root (the process, a label), a native frame with the frames inlined into
 * it (they follow it, root first) as one.  Made when new: pp__stacks makes
 * them all, stack by stack, so a sample finds them again with the same ids
 * (recomputed, not kept: on a large capture, every stack's list would hold
 * about as many ids as the stacks have frames). */
static void pp__stack_locs(struct pp *p, size_t i)
{
	size_t j, e, n;
	const uint32_t *ids;
	uint64_t count;
	uint32_t id;

	p->nsloc = 0;
	if (agg__stack(p->a, i, &p->sb, &count)) {
		p->b.err = -ENOMEM;
		return;
	}
	ids = p->sb.ids;
	n = p->sb.n;
	j = n && agg__frame_kind(p->a, ids[0]) == LJS_FK_ROOT;
	/* A stack of the root alone (never from the pipeline, which puts
	 * "[native]" there) keeps its samples: pprof drops the samples
	 * without locations. */
	if (j == 1 && n == 1)
		j = 0;
	for (; j < n && !p->b.err; j = e) {
		e = j + 1;
		if (agg__frame_kind(p->a, ids[j]) == LJS_FK_NATIVE)
			while (e < n && agg__frame_kind(p->a, ids[e]) == LJS_FK_NATIVE_INLINED)
				e++;
		id = pp__location(p, ids + j, (uint32_t)(e - j));
		if (VEC_GROW(p->sloc, &p->sloccap, p->nsloc + 1))
			p->b.err = -ENOMEM;
		else
			p->sloc[p->nsloc++] = id;
	}
	for (j = 0, e = p->nsloc; j + 1 < e && !p->b.err; j++, e--) {
		id = p->sloc[j];
		p->sloc[j] = p->sloc[e - 1];
		p->sloc[e - 1] = id;
	}
}

/* Every stack's locations, in stack order (their ids follow that order). */
static void pp__stacks(struct pp *p)
{
	size_t ns = agg__nstacks(p->a), i;

	for (i = 0; i < ns && !p->b.err; i++)
		pp__stack_locs(p, i);
}

/* -- The messages -------------------------------------------------------------- */

/* A ValueType field. */
static void pp__value_type(struct pp *p, unsigned field, const char *type, const char *unit)
{
	size_t at = pb__open(&p->b);

	pb__int(&p->b, F_VALUETYPE_TYPE, pp__cstr(p, type));
	pb__int(&p->b, F_VALUETYPE_UNIT, pp__cstr(p, unit));
	pb__close(&p->b, field, at);
}

/* What the values mean, when and how often the samples were taken, the notes. */
static void pp__header(struct pp *p)
{
	const struct agg_time *t = agg__time(p->a);
	const char *const *notes;
	size_t nn, i, at;

	p->period = 1000000000ull / (t->freq_hz ? t->freq_hz : PP_DEFAULT_HZ);
	pp__value_type(p, F_PROFILE_SAMPLE_TYPE, "samples", "count");
	pp__value_type(p, F_PROFILE_SAMPLE_TYPE, "cpu", "nanoseconds");
	pb__int(&p->b, F_PROFILE_TIME_NANOS, t->start_ns);
	pb__int(&p->b, F_PROFILE_DURATION_NANOS, t->duration_ns);
	pp__value_type(p, F_PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
	pb__int(&p->b, F_PROFILE_PERIOD, p->period);
	notes = agg__notes(p->a, &nn);
	if (nn) {
		at = pb__open(&p->b);
		for (i = 0; i < nn; i++)
			pb__varint(&p->b, pp__cstr(p, notes[i]));
		pb__close(&p->b, F_PROFILE_COMMENT, at);
	}
}

/* A Label field: a string (s != NULL) or a number. */
static void pp__label(struct pp *p, const char *key, const char *s, uint64_t num)
{
	size_t at = pb__open(&p->b);

	pb__int(&p->b, F_LABEL_KEY, pp__cstr(p, key));
	if (s)
		pb__int(&p->b, F_LABEL_STR, pp__cstr(p, s));
	else
		pb__int(&p->b, F_LABEL_NUM, num);
	pb__close(&p->b, F_SAMPLE_LABEL, at);
}

/* The samples of stack i (with labels g, when there are). */
static void pp__sample(struct pp *p, size_t i, const struct agg_labels *g, uint64_t count)
{
	size_t at = pb__open(&p->b), list, k, n;
	const uint32_t *ids;

	pp__stack_locs(p, i);
	if (p->b.err)
		return;
	ids = p->sb.ids;
	n = p->sb.n;
	if (p->nsloc) {
		list = pb__open(&p->b);
		for (k = 0; k < p->nsloc; k++)
			pb__varint(&p->b, p->sloc[k]);
		pb__close(&p->b, F_SAMPLE_LOCATION_ID, list);
	}
	list = pb__open(&p->b);
	pb__varint(&p->b, count);
	pb__varint(&p->b, count * p->period);
	pb__close(&p->b, F_SAMPLE_VALUE, list);
	if (g) {
		pp__label(p, "pid", NULL, g->pid);
		pp__label(p, "tid", NULL, g->tid);
	}
	if (n && agg__frame_kind(p->a, ids[0]) == LJS_FK_ROOT)
		pp__label(p, "comm", agg__frame_name(p->a, ids[0], NULL), 0);
	if (g)
		pp__label(p, "vm", g->vm >= 0 ? ljs_vm__name((enum ljs_vm)g->vm) : "none", 0);
	pb__close(&p->b, F_PROFILE_SAMPLE, at);
	pp__flush(p, 0);
}

/* One Sample per labelled group; a profile built without labels has none,
 * then one per stack. */
static void pp__samples(struct pp *p)
{
	const struct agg_group *g;
	const struct agg_labels *l;
	size_t ng, nl, i;

	g = agg__groups(p->a, &ng);
	l = agg__labels(p->a, &nl);
	for (i = 0; i < ng; i++)
		pp__sample(p, g[i].stack, &l[g[i].label], g[i].count);
	for (i = 0; !ng && i < agg__nstacks(p->a); i++)
		pp__sample(p, i, NULL, agg__stack_count(p->a, i));
}

/*
 * pprof names the profile after mapping[0] ("File:") and calls it the main
 * binary: the first native file used that is no "[...]" and no shared
 * object (pprof's own guess for the profiles it converts), swaps ids with
 * mapping 1.
 */
static void pp__main(struct pp *p)
{
	const char *f, *base;
	size_t i;

	p->main_map = 1;
	for (i = 0; i < p->nmap; i++) {
		f = p->pool + p->s[p->map[i].file].off;
		base = memrchr(f, '/', p->s[p->map[i].file].len);
		base = base ? base + 1 : f;
		if (p->s[p->map[i].file].len && f[0] != '[' &&
		    !memmem(base, p->s[p->map[i].file].len - (size_t)(base - f), ".so", 3)) {
			p->main_map = (uint32_t)i + 1;
			return;
		}
	}
}

/* The id mapping m is written with. */
static uint32_t pp__map_id(const struct pp *p, uint32_t m)
{
	return m == p->main_map ? 1 : m == 1 ? p->main_map : m;
}

static void pp__mappings(struct pp *p)
{
	size_t i, at;

	for (i = 0; i < p->nmap; i++) {
		const struct pp_map *m = &p->map[pp__map_id(p, (uint32_t)i + 1) - 1];

		at = pb__open(&p->b);
		pb__int(&p->b, F_MAPPING_ID, i + 1);
		pb__int(&p->b, F_MAPPING_MEMORY_START, m->start);
		pb__int(&p->b, F_MAPPING_MEMORY_LIMIT, m->limit);
		pb__int(&p->b, F_MAPPING_FILE_OFFSET, m->offset);
		pb__int(&p->b, F_MAPPING_FILENAME, m->file);
		pb__int(&p->b, F_MAPPING_BUILD_ID, m->build);
		pb__int(&p->b, F_MAPPING_HAS_FUNCTIONS, 1);
		pb__int(&p->b, F_MAPPING_HAS_FILENAMES, (uint64_t)m->lines);
		pb__int(&p->b, F_MAPPING_HAS_LINE_NUMBERS, (uint64_t)m->lines);
		pb__int(&p->b, F_MAPPING_HAS_INLINE_FRAMES, (uint64_t)m->inlines);
		pb__close(&p->b, F_PROFILE_MAPPING, at);
		pp__flush(p, 0);
	}
}

/* Locations: Lua-side ones at address 0; Lines innermost first. */
static void pp__locations(struct pp *p)
{
	struct ljs_frame_src src;
	size_t i, at, ln;
	uint32_t k;

	for (i = 0; i < p->nloc; i++) {
		const struct pp_loc *l = &p->loc[i];
		const uint32_t *ids = p->lfr + l->off;
		enum ljs_fkind kind = agg__frame_kind(p->a, ids[0]);

		at = pb__open(&p->b);
		pb__int(&p->b, F_LOCATION_ID, i + 1);
		pb__int(&p->b, F_LOCATION_MAPPING_ID, l->mapping ? pp__map_id(p, l->mapping) : 0);
		if ((kind == LJS_FK_NATIVE || kind == LJS_FK_NATIVE_INLINED ||
		     kind == LJS_FK_KERNEL) && agg__frame_src(p->a, ids[0], &src))
			pb__int(&p->b, F_LOCATION_ADDRESS, src.addr);
		for (k = l->n; k-- > 0;) {
			ln = pb__open(&p->b);
			pb__int(&p->b, F_LINE_FUNCTION_ID, p->fn[ids[k]]);
			if (agg__frame_src(p->a, ids[k], &src) && src.line > 0)
				pb__int(&p->b, F_LINE_LINE, (uint64_t)src.line);
			pb__close(&p->b, F_LOCATION_LINE, ln);
		}
		pb__close(&p->b, F_PROFILE_LOCATION, at);
		pp__flush(p, 0);
	}
}

/*
 * Functions: named as the folded output names the frame.  system_name is
 * the function alone (the symbol, the Lua function's name) and is left out
 * where that is the name itself: pprof rewrites a name equal to its
 * system_name as if it were C++ (drops "<...>" and "(...)", so
 * "function <x.lua:3>" would become "function "), never one that differs.
 */
static void pp__functions(struct pp *p)
{
	struct ljs_frame_src src;
	const char *name;
	size_t i, at, len;
	uint32_t s;
	int has;

	for (i = 0; i < p->nfn; i++) {
		name = agg__frame_name(p->a, p->fnfr[i], &len);
		s = pp__str(p, name, len);
		has = agg__frame_src(p->a, p->fnfr[i], &src);
		at = pb__open(&p->b);
		pb__int(&p->b, F_FUNCTION_ID, i + 1);
		pb__int(&p->b, F_FUNCTION_NAME, s);
		if (has && src.func && (strlen(src.func) != len || memcmp(src.func, name, len)))
			pb__int(&p->b, F_FUNCTION_SYSTEM_NAME, pp__cstr(p, src.func));
		if (has) {
			pb__int(&p->b, F_FUNCTION_FILENAME, pp__cstr(p, src.file));
			if (src.start_line > 0)
				pb__int(&p->b, F_FUNCTION_START_LINE, (uint64_t)src.start_line);
		}
		pb__close(&p->b, F_PROFILE_FUNCTION, at);
		pp__flush(p, 0);
	}
}

static void pp__strings(struct pp *p)
{
	size_t i;

	for (i = 0; i < p->ns && !p->b.err; i++) {
		pb__bytes(&p->b, F_PROFILE_STRING_TABLE, p->pool + p->s[i].off, p->s[i].len);
		pp__flush(p, 0);
	}
}

/* -- The writer ---------------------------------------------------------------- */

static void pp__exit(struct pp *p)
{
	if (p->zinit)
		deflateEnd(&p->z);
	free(p->b.v);
	free(p->s);
	free(p->pool);
	intmap__exit(&p->shash);
	free(p->fn);
	free(p->fnfr);
	free(p->loc);
	free(p->lfr);
	intmap__exit(&p->lhead);
	free(p->map);
	intmap__exit(&p->mkey);
	free(p->sloc);
	agg_stack__exit(&p->sb);
	free(p);
}

/* Write a as a gzip-compressed profile.proto. */
int pprof__write(const struct agg *a, const struct output_opts *o, FILE *out)
{
	struct pp *p = calloc(1, sizeof(*p));
	size_t nfr = agg__nframes(a);
	int err;

	(void)o;
	if (!p)
		return -ENOMEM;
	p->a = a;
	p->out = out;
	p->fn = calloc(nfr ? nfr : 1, sizeof(*p->fn));
	if (!p->fn || VEC_GROW(p->s, &p->scap, 1)) {
		err = -ENOMEM;
		goto out;
	}
	p->s[p->ns++] = (struct pp_str){ 0, 0, 0 };	/* string_table[0] = "" */
	/* windowBits 15 + 16: a gzip header and trailer around the deflate stream */
	err = deflateInit2(&p->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	if (err != Z_OK) {
		err = err == Z_MEM_ERROR ? -ENOMEM : -EIO;
		goto out;
	}
	p->zinit = 1;
	pp__stacks(p);
	pp__header(p);
	pp__samples(p);
	pp__main(p);
	pp__mappings(p);
	pp__locations(p);
	pp__functions(p);
	pp__strings(p);
	pp__flush(p, 1);
	err = p->b.err;
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
out:
	pp__exit(p);
	return err;
}
