/* snapfile_decode.c -- decode capture file payloads into the public structs. */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "formats/capture/mpread.h"
#include "formats/capture/snapfile_int.h"

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

/* -- HEADER --------------------------------------------------------------------- */

/* Only the frozen "major" key of a header map (and "minor"). */
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

/* HEADER: [1, {major, minor, ljsnap, host, kernel, arch, mono_ns, real_ns, freq,
 * stack, lstack, target, features, regs}]. */
int snapfile__decode_header(struct mp_cur *c, uint32_t nfields, struct snapfile_header *h,
			    struct snapfile_regmap *rm, struct snapfile_arena *a)
{
	uint32_t n, i;

	memset(h, 0, sizeof(*h));
	h->ljsnap_version = h->host = h->kernel = h->arch = h->target = "";
	/* Without a "regs" key: this build's order. */
	rm->n = (uint32_t)snapfile__nregs;
	for (i = 0; i < rm->n; i++)
		rm->off[i] = snapfile__regs[i].offset;
	if (snapfile__map_rec(c, nfields, &n))
		return c->err;
	for (i = 0; i < n && !c->err; i++) {
		const char *k;
		uint32_t kl;

		if (snapfile__key(c, &k, &kl))
			break;
		if (mp_key_is(k, kl, "major"))
			mp_cur__u32(c, &h->major);
		else if (mp_key_is(k, kl, "minor"))
			mp_cur__u32(c, &h->minor);
		else if (mp_key_is(k, kl, "ljsnap"))
			h->ljsnap_version = snapfile__str(c, a);
		else if (mp_key_is(k, kl, "host"))
			h->host = snapfile__str(c, a);
		else if (mp_key_is(k, kl, "kernel"))
			h->kernel = snapfile__str(c, a);
		else if (mp_key_is(k, kl, "arch"))
			h->arch = snapfile__str(c, a);
		else if (mp_key_is(k, kl, "mono_ns"))
			mp_cur__uint(c, &h->mono_ns);
		else if (mp_key_is(k, kl, "real_ns"))
			mp_cur__uint(c, &h->real_ns);
		else if (mp_key_is(k, kl, "freq"))
			mp_cur__u32(c, &h->freq_hz);
		else if (mp_key_is(k, kl, "stack"))
			mp_cur__u32(c, &h->stack_bytes);
		else if (mp_key_is(k, kl, "lstack"))
			mp_cur__u32(c, &h->lstack_bytes);
		else if (mp_key_is(k, kl, "target"))
			h->target = snapfile__str(c, a);
		else if (mp_key_is(k, kl, "features"))
			mp_cur__uint(c, &h->features);
		else if (mp_key_is(k, kl, "regs"))
			snapfile__regmap(c, rm);
		else
			mp_cur__skip(c);
	}
	mp_cur__skip_n(c, nfields - 1);
	return c->err;
}

/* -- PROCESS ---------------------------------------------------------------------- */

/* "maps": [[start, end, offset, prot, path, build_id], ...]. */
static void snapfile__maps(struct mp_cur *c, struct snapfile_process *p, struct snapfile_arena *a)
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
		struct procmap_desc *m = &maps[i];
		uint32_t nf;

		if (mp_cur__array(c, &nf) || snapfile__need(c, nf, 6))
			break;
		mp_cur__uint(c, &m->start);
		mp_cur__uint(c, &m->end);
		mp_cur__uint(c, &m->offset);
		mp_cur__u32(c, &m->prot);
		m->path = snapfile__str(c, a);
		mp_cur__bin(c, &m->build_id, &m->build_id_len);
		if (!m->build_id_len)
			m->build_id = NULL;
		mp_cur__skip_n(c, nf - 6);
	}
	p->maps = maps;
	p->nmaps = n;
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

/* "prov": [str, ...]. */
static void snapfile__prov(struct mp_cur *c, struct snapfile_process *p, struct snapfile_arena *a)
{
	const char **prov;
	uint32_t n, i;

	if (mp_cur__array(c, &n) || !n)
		return;
	prov = snapfile_arena__alloc(a, (size_t)n * sizeof(*prov));
	if (!prov) {
		snapfile__nomem(c);
		return;
	}
	for (i = 0; i < n; i++)
		prov[i] = c->err ? "" : snapfile__str(c, a);
	p->prov = prov;
	p->nprov = n;
}

/* "lj": {layout, build, prov, vm_lo, vm_hi, g}. */
static void snapfile__luajit(struct mp_cur *c, struct snapfile_process *p, struct snapfile_arena *a)
{
	uint32_t n, i;

	if (mp_cur__map(c, &n))
		return;
	p->has_luajit = 1;
	for (i = 0; i < n && !c->err; i++) {
		const char *k;
		uint32_t kl;

		if (snapfile__key(c, &k, &kl))
			break;
		if (mp_key_is(k, kl, "layout"))
			snapfile__layout(c, &p->layout);
		else if (mp_key_is(k, kl, "build"))
			p->lj_build = snapfile__str(c, a);
		else if (mp_key_is(k, kl, "prov"))
			snapfile__prov(c, p, a);
		else if (mp_key_is(k, kl, "vm_lo"))
			mp_cur__uint(c, &p->vm_lo);
		else if (mp_key_is(k, kl, "vm_hi"))
			mp_cur__uint(c, &p->vm_hi);
		else if (mp_key_is(k, kl, "g"))
			mp_cur__uint(c, &p->g);
		else
			mp_cur__skip(c);
	}
}

/* PROCESS: [2, {pid, ppid, comm, exe, cmdline, start, exited, image, maps, lj?}]. */
int snapfile__decode_process(struct mp_cur *c, uint32_t nfields, struct snapfile_process *p,
			     struct snapfile_arena *a)
{
	uint32_t n, i;

	memset(p, 0, sizeof(*p));
	p->exe = p->cmdline = p->lj_build = "";
	if (snapfile__map_rec(c, nfields, &n))
		return c->err;
	for (i = 0; i < n && !c->err; i++) {
		const char *k;
		uint32_t kl;

		if (snapfile__key(c, &k, &kl))
			break;
		if (mp_key_is(k, kl, "pid"))
			mp_cur__u32(c, &p->pid);
		else if (mp_key_is(k, kl, "ppid"))
			mp_cur__u32(c, &p->ppid);
		else if (mp_key_is(k, kl, "comm"))
			snapfile__comm(c, p->comm);
		else if (mp_key_is(k, kl, "exe"))
			p->exe = snapfile__str(c, a);
		else if (mp_key_is(k, kl, "cmdline"))
			p->cmdline = snapfile__str(c, a);
		else if (mp_key_is(k, kl, "start"))
			mp_cur__uint(c, &p->start_ns);
		else if (mp_key_is(k, kl, "exited"))
			mp_cur__uint(c, &p->exited_ns);
		else if (mp_key_is(k, kl, "image"))
			mp_cur__u32(c, &p->image);
		else if (mp_key_is(k, kl, "maps"))
			snapfile__maps(c, p, a);
		else if (mp_key_is(k, kl, "lj"))
			snapfile__luajit(c, p, a);
		else
			mp_cur__skip(c);
	}
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

/* One section: [kind, status, addr, want, aux, bytes]. */
static void snapfile__section(struct mp_cur *c, struct ljs_section *sec)
{
	uint32_t nf;

	memset(sec, 0, sizeof(*sec));
	if (mp_cur__array(c, &nf) || snapfile__need(c, nf, 6))
		return;
	sec->kind = snapfile__u16(c);
	sec->status = snapfile__u16(c);
	mp_cur__uint(c, &sec->addr);
	mp_cur__u32(c, &sec->want);
	mp_cur__u32(c, &sec->aux);
	mp_cur__bin(c, &sec->data, &sec->len);
	mp_cur__skip_n(c, nf - 6);
}

/* SAMPLE: [3, time, pid, tid, cpu, flags, comm, regs, g, cfg_gen, sections]. */
int snapfile__decode_sample(struct mp_cur *c, uint32_t nfields, struct ljs_sample *s,
			    const struct snapfile_regmap *rm)
{
	uint32_t n, i;

	memset(s, 0, sizeof(*s));
	if (snapfile__need(c, nfields, 10))
		return c->err;
	mp_cur__uint(c, &s->time_ns);
	mp_cur__u32(c, &s->pid);
	mp_cur__u32(c, &s->tid);
	mp_cur__u32(c, &s->cpu);
	mp_cur__u32(c, &s->flags);
	snapfile__comm(c, s->comm);
	snapfile__regs_bin(c, &s->regs, rm);
	mp_cur__uint(c, &s->g);
	mp_cur__u32(c, &s->cfg_gen);
	if (mp_cur__array(c, &n))
		return c->err;
	/* Sections beyond what struct ljs_sample holds are skipped. */
	for (i = 0; i < n && !c->err; i++) {
		if (s->nsec < LJS_SAMPLE_MAX_SECS)
			snapfile__section(c, &s->sec[s->nsec++]);
		else
			mp_cur__skip(c);
	}
	mp_cur__skip_n(c, nfields - 10);
	return c->err;
}

/* -- MEMORY, KSYMS, STATS, END -------------------------------------------------------- */

/* MEMORY: [4, pid, addr, bytes, first_ns, last_ns, gen]. */
int snapfile__decode_memory(struct mp_cur *c, uint32_t nfields, struct snapfile_memory *m)
{
	memset(m, 0, sizeof(*m));
	if (snapfile__need(c, nfields, 6))
		return c->err;
	mp_cur__u32(c, &m->pid);
	mp_cur__uint(c, &m->addr);
	mp_cur__bin(c, &m->data, &m->len);
	mp_cur__uint(c, &m->first_ns);
	mp_cur__uint(c, &m->last_ns);
	mp_cur__uint(c, &m->gen);
	mp_cur__skip_n(c, nfields - 6);
	return c->err;
}

/* OBJECT: [8, path, build_id, bytes]. */
int snapfile__decode_object(struct mp_cur *c, uint32_t nfields, struct snapfile_object *o,
			    struct snapfile_arena *a)
{
	memset(o, 0, sizeof(*o));
	if (snapfile__need(c, nfields, 3))
		return c->err;
	o->path = snapfile__str(c, a);
	mp_cur__bin(c, &o->build_id, &o->build_id_len);
	mp_cur__bin(c, &o->data, &o->len);
	mp_cur__skip_n(c, nfields - 3);
	return c->err;
}

/* KSYMS: [5, [[addr, name, module], ...]]. */
int snapfile__decode_ksyms(struct mp_cur *c, uint32_t nfields, struct snapfile_ksyms *k,
			   struct snapfile_arena *a)
{
	struct ksym *syms = NULL;
	uint32_t n, i;

	memset(k, 0, sizeof(*k));
	if (snapfile__need(c, nfields, 1) || mp_cur__array(c, &n))
		return c->err;
	/* An entry takes at least 4 bytes: bounds the allocation by the payload. */
	if (n > (uint32_t)((c->end - c->p) / 4))
		return mp_cur__fail(c, "symbol count larger than the record");
	if (n) {
		syms = snapfile_arena__alloc(a, (size_t)n * sizeof(*syms));
		if (!syms) {
			snapfile__nomem(c);
			return c->err;
		}
	}
	for (i = 0; i < n && !c->err; i++) {
		uint32_t nf;

		if (mp_cur__array(c, &nf) || snapfile__need(c, nf, 3))
			break;
		mp_cur__uint(c, &syms[i].addr);
		syms[i].name = snapfile__str(c, a);
		syms[i].module = snapfile__str(c, a);
		mp_cur__skip_n(c, nf - 3);
	}
	mp_cur__skip_n(c, nfields - 1);
	if (!c->err) {
		k->syms = syms;
		k->n = n;
	}
	return c->err;
}

/* STATS: [6, {name: u64, ...}]; values that are not unsigned integers are skipped. */
int snapfile__decode_stats(struct mp_cur *c, uint32_t nfields, struct snapfile_stats *st,
			   struct snapfile_arena *a)
{
	struct snapfile_stat *v = NULL;
	uint32_t n, i, used = 0;

	memset(st, 0, sizeof(*st));
	if (snapfile__map_rec(c, nfields, &n))
		return c->err;
	if (n) {
		v = snapfile_arena__alloc(a, (size_t)n * sizeof(*v));
		if (!v) {
			snapfile__nomem(c);
			return c->err;
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
	mp_cur__skip_n(c, nfields - 1);
	if (!c->err) {
		st->v = v;
		st->n = used;
	}
	return c->err;
}

/* END: [7, {records}]. */
int snapfile__decode_end(struct mp_cur *c, uint32_t nfields, struct snapfile_end *e)
{
	uint32_t n = 0, i;

	memset(e, 0, sizeof(*e));
	if (nfields && mp_cur__map(c, &n))
		return c->err;
	for (i = 0; i < n && !c->err; i++) {
		const char *k;
		uint32_t kl;

		if (snapfile__key(c, &k, &kl))
			break;
		if (mp_key_is(k, kl, "records"))
			mp_cur__uint(c, &e->records);
		else
			mp_cur__skip(c);
	}
	if (nfields)
		mp_cur__skip_n(c, nfields - 1);
	return c->err;
}
