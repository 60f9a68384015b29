/*
 * aggregate.c -- interned frame names and stacks, walker frame naming, and
 * walk statistics (see aggregate.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/aggregate.h"
#include "symtab/vec.h"

#define AGG_IDS_MAX	(UINT32_MAX - 1)	/* frames, stacks, pooled ids */

struct agg_fr {
	uint64_t hash;
	uint64_t off;			/* name bytes at str + off */
	uint32_t len;
	uint32_t base;			/* id of the name without its suffix */
	uint8_t cls;
};

struct agg_st {
	uint64_t hash;
	uint64_t off;			/* ids at ids + off */
	uint32_t n;
	uint64_t count;
};

struct agg {
	unsigned flags;
	char *str;			/* frame names, back to back */
	size_t nstr, strcap;
	struct agg_fr *fr;
	size_t nfr, frcap;
	uint32_t *fhash;		/* open addressing: frame id + 1, 0 = empty */
	size_t fhcap;
	uint32_t *ids;			/* stacks' ids, back to back */
	size_t nids, idcap;
	struct agg_st *st;
	size_t nst, stcap;
	uint32_t *shash;		/* open addressing: stack index + 1 */
	size_t shcap;
	uint64_t total;
	struct agg_stats stats;
};

/* -- Small helpers ------------------------------------------------------------ */

/* Hash bytes, eight at a time (seeded; mixed again by hash__mix). */
static uint64_t hash__bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h ^ n;
}

#define ONES	0x0101010101010101ull
#define HIGHS	0x8080808080808080ull

/* Does any byte of w need replacing (below 0x20, ';' or 0x7f)?  SWAR:
 * (x - 1s) & ~x & 0x80s is non-zero iff some byte of x is zero. */
static int word__unsafe(uint64_t w)
{
	uint64_t semi = w ^ (ONES * ';'), del = w ^ (ONES * 0x7f);

	return (((w - ONES * 0x20) & ~w & HIGHS) | ((semi - ONES) & ~semi & HIGHS) |
		((del - ONES) & ~del & HIGHS)) != 0;
}

/* Final mix so that low bits depend on every input bit. */
static uint64_t hash__mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

/* Make a name folded-safe into out (size AGG_NAME_MAX): ';' -> ',',
 * control bytes -> '?', trailing blanks dropped, "" -> "[?]".  Returns the
 * length. */
static size_t name__sanitize(const char *in, size_t len, char *out)
{
	size_t i, n = len < AGG_NAME_MAX - 1 ? len : AGG_NAME_MAX - 1;
	unsigned bad = 0;

	/* Scan eight bytes at a time first: nearly every name is clean. */
	for (i = 0; i + 8 <= n && !bad; i += 8) {
		uint64_t w;

		memcpy(&w, in + i, 8);
		bad = (unsigned)word__unsafe(w);
	}
	for (; i < n; i++) {
		unsigned char c = (unsigned char)in[i];

		bad |= (c < 0x20) | (c == ';') | (c == 0x7f);
	}
	if (!bad) {
		if (out != in)
			memmove(out, in, n);
	} else {
		for (i = 0; i < n; i++) {
			unsigned char c = (unsigned char)in[i];

			out[i] = c == ';' ? ',' : (c < 0x20 || c == 0x7f) ? '?' : (char)c;
		}
	}
	while (n > 0 && out[n - 1] == ' ')
		n--;
	if (n == 0) {
		memcpy(out, "[?]", 3);
		n = 3;
	}
	out[n] = '\0';
	return n;
}

/* -- Lifecycle ------------------------------------------------------------------ */

/* Allocate an aggregate. */
struct agg *agg__new(unsigned flags)
{
	struct agg *a = calloc(1, sizeof(*a));

	if (a)
		a->flags = flags;
	return a;
}

/* Free an aggregate. */
void agg__delete(struct agg *a)
{
	if (!a)
		return;
	free(a->str);
	free(a->fr);
	free(a->fhash);
	free(a->ids);
	free(a->st);
	free(a->shash);
	free(a);
}

/* -- Frames ---------------------------------------------------------------------- */

/* Rebuild the frame hash at a new capacity (a power of two). */
static int frames__rehash(struct agg *a, size_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));
	size_t i, s;

	if (!h)
		return -ENOMEM;
	for (i = 0; i < a->nfr; i++) {
		s = a->fr[i].hash & (cap - 1);
		while (h[s])
			s = (s + 1) & (cap - 1);
		h[s] = (uint32_t)(i + 1);
	}
	free(a->fhash);
	a->fhash = h;
	a->fhcap = cap;
	return 0;
}

/* Length of a name without a trailing "_[j]", "_[i]" or "_[k]", or len. */
static size_t name__base_len(const char *s, size_t len)
{
	if (len > 4 && s[len - 4] == '_' && s[len - 3] == '[' && s[len - 1] == ']' &&
	    (s[len - 2] == 'j' || s[len - 2] == 'i' || s[len - 2] == 'k'))
		return len - 4;
	return len;
}

/* Intern an already sanitized name; its id or -ENOMEM. */
static long frame__intern(struct agg *a, const char *s, size_t len, enum agg_cls cls)
{
	uint64_t h = hash__mix(hash__bytes(14695981039346656037ull ^ cls, s, len));
	struct agg_fr *f;
	size_t slot, blen;
	long id, base;

	if (a->fhcap) {
		for (slot = h & (a->fhcap - 1); a->fhash[slot]; slot = (slot + 1) & (a->fhcap - 1)) {
			f = &a->fr[a->fhash[slot] - 1];
			if (f->hash == h && f->len == len && f->cls == cls &&
			    !memcmp(a->str + f->off, s, len))
				return (long)a->fhash[slot] - 1;
		}
	}
	/* The suffix-less name first, so its id is known. */
	blen = name__base_len(s, len);
	base = blen < len ? frame__intern(a, s, blen, cls) : -1;
	if (blen < len && base < 0)
		return base;
	if (a->nfr >= AGG_IDS_MAX || VEC_GROW(a->fr, &a->frcap, a->nfr + 1) ||
	    VEC_GROW(a->str, &a->strcap, a->nstr + len + 1))
		return -ENOMEM;
	if ((a->nfr + 1) * 2 > a->fhcap && frames__rehash(a, a->fhcap ? a->fhcap * 2 : 1024))
		return -ENOMEM;
	id = (long)a->nfr++;
	f = &a->fr[id];
	f->hash = h;
	f->off = a->nstr;
	f->len = (uint32_t)len;
	f->cls = (uint8_t)cls;
	f->base = base >= 0 ? (uint32_t)base : (uint32_t)id;
	memcpy(a->str + a->nstr, s, len);
	a->str[a->nstr + len] = '\0';
	a->nstr += len + 1;
	for (slot = h & (a->fhcap - 1); a->fhash[slot]; slot = (slot + 1) & (a->fhcap - 1))
		;
	a->fhash[slot] = (uint32_t)id + 1;
	return id;
}

/* Intern a frame name; its id or -ENOMEM. */
long agg__frame(struct agg *a, const char *name, size_t len, enum agg_cls cls)
{
	char buf[AGG_NAME_MAX];

	if (!a || !name || (unsigned)cls >= AGG__CLS_MAX)
		return -EINVAL;
	len = name__sanitize(name, len, buf);
	return frame__intern(a, buf, len, cls);
}

/* -- Naming walker frames ------------------------------------------------------------ */

/* A bounded string builder. */
struct sbuf {
	char *p;
	size_t n, size;
};

/* Append n bytes (cut at the end of the buffer). */
static void sb__put(struct sbuf *b, const char *s, size_t n)
{
	if (b->n + 1 >= b->size)
		return;
	if (n > b->size - 1 - b->n)
		n = b->size - 1 - b->n;
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

/* Append a string. */
static void sb__str(struct sbuf *b, const char *s)
{
	sb__put(b, s, strlen(s));
}

/* Append an unsigned number in base 10 or 16, after an optional '-'. */
static void sb__num(struct sbuf *b, unsigned long long u, unsigned base, int neg)
{
	char t[24], *p = t + sizeof(t);

	do {
		*--p = "0123456789abcdef"[u % base];
		u /= base;
	} while (u && p > t + 1);
	if (neg)
		*--p = '-';
	sb__put(b, p, (size_t)(t + sizeof(t) - p));
}

/* Append a signed decimal. */
static void sb__int(struct sbuf *b, long long v)
{
	sb__num(b, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, 10, v < 0);
}

/* Append the chunk of a Lua frame: the file name of "@file" / "=name"
 * chunks, LuaJIT's short_src ([string "..."]) for source-text chunks. */
static void sb__chunk(struct sbuf *b, const struct ljw_frame *f)
{
	char src[80];

	if (!f->chunkname)
		sb__str(b, "?");
	else if (f->chunkname[0] == '@' || f->chunkname[0] == '=')
		sb__str(b, f->chunkname + 1);
	else
		sb__str(b, ljw_frame__short_src(f, src, sizeof(src)));
}

/* Append ":line" of a Lua frame in line mode ("?" when unknown). */
static void sb__line(struct sbuf *b, const struct ljw_frame *f)
{
	sb__put(b, ":", 1);
	if (f->line > 0)
		sb__int(b, f->line);
	else
		sb__put(b, "?", 1);
}

/* Name a Lua function frame. */
static void name__lua(struct sbuf *b, const struct ljw_frame *f, unsigned flags)
{
	if (f->flags & LJW_F_MAIN) {
		sb__str(b, "main ");
		sb__chunk(b, f);
		if (flags & AGG_LINES)
			sb__line(b, f);
		return;
	}
	if (f->name && f->name[0]) {
		sb__str(b, f->name);
		sb__put(b, " ", 1);
		sb__chunk(b, f);
		if (flags & AGG_LINES) {
			sb__line(b, f);
		} else {
			sb__put(b, ":", 1);
			sb__int(b, f->linedefined);
		}
		return;
	}
	sb__str(b, "function <");
	sb__chunk(b, f);
	sb__put(b, ":", 1);
	sb__int(b, f->linedefined);
	sb__put(b, ">", 1);
	if (flags & AGG_LINES) {
		sb__put(b, " ", 1);
		sb__chunk(b, f);
		sb__line(b, f);
	}
}

/* Name a walker frame into buf. */
size_t agg__ljw_name(const struct ljw_frame *f, unsigned flags, char *buf, size_t size)
{
	char tmp[AGG_NAME_MAX];
	struct sbuf b = { tmp, 0, sizeof(tmp) };
	size_t n;

	tmp[0] = '\0';
	switch (f->kind) {
	case LJW_FRAME_LUA:
		name__lua(&b, f, flags);
		break;
	case LJW_FRAME_C:
		if (f->cfunc) {
			sb__str(&b, "C:0x");
			sb__num(&b, f->cfunc, 16, 0);
		} else {
			sb__str(&b, "C:?");
		}
		break;
	case LJW_FRAME_FF:
		if (f->ffname) {
			sb__str(&b, f->ffname);
		} else {
			sb__str(&b, "builtin#");
			sb__int(&b, f->ffid);
		}
		break;
	case LJW_FRAME_PSEUDO:
		sb__str(&b, f->pseudo ? f->pseudo : "[?]");
		break;
	default:
		sb__str(&b, "[unknown: ");
		sb__str(&b, ljw_reason__name(f->reason));
		sb__str(&b, "]");
		break;
	}
	/* Inlined into a trace (known from its snapshot, not on the Lua stack)
	 * is the more specific fact when a frame is also the trace's position. */
	if (f->kind != LJW_FRAME_PSEUDO && f->kind != LJW_FRAME_UNKNOWN) {
		if (f->flags & LJW_F_INLINED)
			sb__str(&b, "_[i]");
		else if (f->flags & LJW_F_TRACE)
			sb__str(&b, "_[j]");
	}
	if (!buf || size == 0)
		return 0;
	/* Sanitize (the suffix survives: it has no unsafe byte). */
	if (size >= AGG_NAME_MAX) {
		n = name__sanitize(tmp, b.n, buf);
	} else {
		char s[AGG_NAME_MAX];

		n = name__sanitize(tmp, b.n, s);
		if (n > size - 1)
			n = size - 1;
		memcpy(buf, s, n);
		buf[n] = '\0';
	}
	return n;
}

/* Class of a walker frame. */
enum agg_cls agg__ljw_cls(const struct ljw_frame *f)
{
	switch (f->kind) {
	case LJW_FRAME_LUA: return AGG_LUA;
	case LJW_FRAME_C: return AGG_C;
	case LJW_FRAME_FF: return AGG_BUILTIN;
	case LJW_FRAME_PSEUDO: return AGG_PSEUDO;
	default: return AGG_UNKNOWN;
	}
}

/* -- Stacks ------------------------------------------------------------------------ */

/* Forget the frames of a stack being built. */
void agg_stack__reset(struct agg_stack *sb)
{
	sb->n = 0;
}

/* Free a stack being built. */
void agg_stack__exit(struct agg_stack *sb)
{
	free(sb->ids);
	sb->ids = NULL;
	sb->n = sb->cap = 0;
}

/* Push one frame (interned) onto a stack being built. */
int agg__push(struct agg *a, struct agg_stack *sb, const char *name, size_t len,
	      enum agg_cls cls)
{
	long id = agg__frame(a, name, len, cls);

	if (id < 0)
		return (int)id;
	if (VEC_GROW(sb->ids, &sb->cap, sb->n + 1))
		return -ENOMEM;
	sb->ids[sb->n++] = (uint32_t)id;
	return 0;
}

/* Push a walk's frames, outermost first. */
/* Append an interned frame id to a stack being built. */
int agg_stack__push_id(struct agg_stack *sb, uint32_t id)
{
	if (VEC_GROW(sb->ids, &sb->cap, sb->n + 1))
		return -ENOMEM;
	sb->ids[sb->n++] = id;
	return 0;
}

int agg__push_ljw(struct agg *a, struct agg_stack *sb, const struct ljw_stack *st)
{
	char name[AGG_NAME_MAX];
	size_t i, n;
	long id;

	if (VEC_GROW(sb->ids, &sb->cap, sb->n + st->nframes))
		return -ENOMEM;
	for (i = st->nframes; i > 0; i--) {
		const struct ljw_frame *f = &st->frames[i - 1];

		/* Already folded-safe: intern without a second pass. */
		n = agg__ljw_name(f, a->flags, name, sizeof(name));
		id = frame__intern(a, name, n, agg__ljw_cls(f));
		if (id < 0)
			return (int)id;
		sb->ids[sb->n++] = (uint32_t)id;
	}
	return 0;
}

/* Rebuild the stack hash at a new capacity. */
static int stacks__rehash(struct agg *a, size_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));
	size_t i, s;

	if (!h)
		return -ENOMEM;
	for (i = 0; i < a->nst; i++) {
		s = a->st[i].hash & (cap - 1);
		while (h[s])
			s = (s + 1) & (cap - 1);
		h[s] = (uint32_t)(i + 1);
	}
	free(a->shash);
	a->shash = h;
	a->shcap = cap;
	return 0;
}

/* Add count samples of a stack. */
int agg__add(struct agg *a, const struct agg_stack *sb, uint64_t count)
{
	uint64_t h;
	struct agg_st *s;
	size_t slot, i;

	if (!a || !sb || sb->n == 0 || sb->n > AGG_IDS_MAX)
		return -EINVAL;
	for (i = 0; i < sb->n; i++)
		if (sb->ids[i] >= a->nfr)
			return -EINVAL;
	h = hash__mix(hash__bytes(14695981039346656037ull, sb->ids, sb->n * sizeof(*sb->ids)));
	if (a->shcap) {
		for (slot = h & (a->shcap - 1); a->shash[slot]; slot = (slot + 1) & (a->shcap - 1)) {
			s = &a->st[a->shash[slot] - 1];
			if (s->hash == h && s->n == sb->n &&
			    !memcmp(a->ids + s->off, sb->ids, sb->n * sizeof(*sb->ids))) {
				s->count += count;
				a->total += count;
				return 0;
			}
		}
	}
	if (a->nst >= AGG_IDS_MAX || VEC_GROW(a->st, &a->stcap, a->nst + 1) ||
	    VEC_GROW(a->ids, &a->idcap, a->nids + sb->n))
		return -ENOMEM;
	if ((a->nst + 1) * 2 > a->shcap && stacks__rehash(a, a->shcap ? a->shcap * 2 : 1024))
		return -ENOMEM;
	s = &a->st[a->nst];
	s->hash = h;
	s->off = a->nids;
	s->n = (uint32_t)sb->n;
	s->count = count;
	memcpy(a->ids + a->nids, sb->ids, sb->n * sizeof(*sb->ids));
	a->nids += sb->n;
	for (slot = h & (a->shcap - 1); a->shash[slot]; slot = (slot + 1) & (a->shcap - 1))
		;
	a->shash[slot] = (uint32_t)(++a->nst);
	a->total += count;
	return 0;
}

/* -- Statistics ------------------------------------------------------------------------ */

/* VM state group of a walk (from the walker's vmstate class name). */
enum agg_vm agg__vm(const struct ljw_stack *st)
{
	static const struct { const char *name; enum agg_vm vm; } map[] = {
		{ "interp", AGG_VM_INTERP }, { "c", AGG_VM_C }, { "gc", AGG_VM_GC },
		{ "trace", AGG_VM_TRACE }, { "compiler", AGG_VM_COMPILER },
		{ "exit", AGG_VM_EXIT },
	};
	size_t i;

	if (!st || !st->vmstate_name)
		return AGG_VM_OTHER;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(st->vmstate_name, map[i].name))
			return map[i].vm;
	return AGG_VM_OTHER;
}

/* Name of a VM state group. */
const char *agg_vm__name(enum agg_vm v)
{
	static const char *const names[AGG_VM__MAX] = {
		"interpreter", "C code", "garbage collector", "JIT-compiled (trace)",
		"JIT compiler", "trace exit", "other",
	};

	return (unsigned)v < AGG_VM__MAX ? names[v] : "?";
}

/* Count one sample's walk. */
void agg__count(struct agg *a, const struct ljw_stack *st)
{
	struct agg_stats *s = &a->stats;
	size_t r;

	s->samples++;
	if (!st) {
		s->no_luajit++;
		return;
	}
	if ((unsigned)st->end < LJW__END_MAX)
		s->ends[st->end]++;
	for (r = 0; r < LJW_R__MAX; r++)
		s->unknown[r] += st->unknown[r];
	if (st->nunknown)
		s->with_unknown++;
	if (st->end == LJW_END_NO_LUA) {
		s->no_state++;
		return;
	}
	s->lua_state++;
	s->vm[agg__vm(st)]++;
	s->truncated += st->truncated != 0;
	s->frames += st->nframes;
	if (st->nframes > s->max_depth)
		s->max_depth = (uint32_t)st->nframes;
	if (st->end == LJW_END_COMPLETE && st->nunknown == 0) {
		size_t i;

		s->clean++;
		/* The main chunk may sit above C frames (luajit's pmain, an embedder). */
		for (i = st->nframes; i > 0; i--)
			if (st->frames[i - 1].kind == LJW_FRAME_LUA &&
			    (st->frames[i - 1].flags & LJW_F_MAIN))
				break;
		s->to_main += i > 0;
	}
}

/* -- Reading ------------------------------------------------------------------------- */

/* Flags given to agg__new. */
unsigned agg__flags(const struct agg *a)
{
	return a->flags;
}

/* Samples added. */
uint64_t agg__total(const struct agg *a)
{
	return a->total;
}

/* Walk statistics. */
const struct agg_stats *agg__stats(const struct agg *a)
{
	return &a->stats;
}

/* Number of distinct frame names. */
size_t agg__nframes(const struct agg *a)
{
	return a->nfr;
}

/* Name of frame id (NUL-terminated), or NULL. */
const char *agg__frame_name(const struct agg *a, uint32_t id, size_t *len)
{
	if (id >= a->nfr)
		return NULL;
	if (len)
		*len = a->fr[id].len;
	return a->str + a->fr[id].off;
}

/* Class of frame id. */
enum agg_cls agg__frame_cls(const struct agg *a, uint32_t id)
{
	return id < a->nfr ? (enum agg_cls)a->fr[id].cls : AGG_UNKNOWN;
}

/* Id of frame id's name without its suffix. */
uint32_t agg__frame_base(const struct agg *a, uint32_t id)
{
	return id < a->nfr ? a->fr[id].base : id;
}

/* Number of distinct stacks. */
size_t agg__nstacks(const struct agg *a)
{
	return a->nst;
}

/* Stack i. */
int agg__stack(const struct agg *a, size_t i, const uint32_t **ids, size_t *n, uint64_t *count)
{
	if (i >= a->nst)
		return -EINVAL;
	*ids = a->ids + a->st[i].off;
	*n = a->st[i].n;
	*count = a->st[i].count;
	return 0;
}
