/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mpread.c -- a bounded, allocation-free msgpack pull reader (see mpread.h). */
#include <errno.h>
#include <string.h>
#include "formats/capture/mpread.h"

/* -- Raw bytes ------------------------------------------------------------- */

/* Bytes left in the cursor. */
static size_t mp_cur__left(const struct mp_cur *c)
{
	return (size_t)(c->end - c->p);
}

/* Mark the cursor failed with a reason (keeps the first one). */
int mp_cur__fail(struct mp_cur *c, const char *why)
{
	if (!c->err) {
		c->err = -EBADMSG;
		c->why = why;
	}
	return c->err;
}

/* Start reading len bytes at p. */
void mp_cur__init(struct mp_cur *c, const void *p, size_t len)
{
	c->p = p;
	c->end = c->p + len;
	c->err = 0;
	c->why = NULL;
}

/* Read a big-endian unsigned integer of n (1, 2, 4, 8) bytes. */
static int mp_cur__be(struct mp_cur *c, unsigned n, uint64_t *v)
{
	uint64_t x = 0;
	unsigned i;

	*v = 0;
	if (c->err)
		return c->err;
	if (mp_cur__left(c) < n)
		return mp_cur__fail(c, "value runs past the end of the record");
	for (i = 0; i < n; i++)
		x = (x << 8) | c->p[i];
	c->p += n;
	*v = x;
	return 0;
}

/* Consume one byte (the type tag). */
static int mp_cur__tag(struct mp_cur *c, uint8_t *b)
{
	*b = 0;
	if (c->err)
		return c->err;
	if (c->p >= c->end)
		return mp_cur__fail(c, "record ends where a value was expected");
	*b = *c->p++;
	return 0;
}

/* -- Typed reads ----------------------------------------------------------- */

/* Type of the next value without consuming it (MP_NONE at end or error). */
enum mp_type mp_cur__peek(const struct mp_cur *c)
{
	uint8_t b;

	if (c->err || c->p >= c->end)
		return MP_NONE;
	b = *c->p;
	if (b <= 0x7f || (b >= 0xcc && b <= 0xcf))
		return MP_UINT;
	if (b >= 0xe0)
		return MP_INT;
	if (b >= 0xd0 && b <= 0xd3) {
		/* Signed encodings may hold non-negative values: look at the sign bit. */
		if (mp_cur__left(c) >= 1u + (1u << (b - 0xd0)) && !(c->p[1] & 0x80))
			return MP_UINT;
		return MP_INT;
	}
	if (b <= 0x8f || b == 0xde || b == 0xdf)
		return MP_MAP;
	if (b <= 0x9f || b == 0xdc || b == 0xdd)
		return MP_ARRAY;
	if (b <= 0xbf || (b >= 0xd9 && b <= 0xdb))
		return MP_STR;
	switch (b) {
	case 0xc0: return MP_NIL;
	case 0xc2: case 0xc3: return MP_BOOL;
	case 0xc4: case 0xc5: case 0xc6: return MP_BIN;
	case 0xca: case 0xcb: return MP_FLOAT;
	case 0xc7: case 0xc8: case 0xc9:
	case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8: return MP_EXT;
	default: return MP_NONE;	/* 0xc1: never used */
	}
}

/* Read an integer of either sign: *u is the value (two's complement when *neg). */
static int mp_cur__number(struct mp_cur *c, uint64_t *u, int *neg)
{
	uint64_t x = 0;
	uint8_t b;

	*u = 0;
	*neg = 0;
	if (mp_cur__tag(c, &b))
		return c->err;
	if (b <= 0x7f) {
		*u = b;
		return 0;
	}
	if (b >= 0xe0) {
		*u = (uint64_t)(int64_t)(int8_t)b;
		*neg = 1;
		return 0;
	}
	switch (b) {
	case 0xcc: return mp_cur__be(c, 1, u);
	case 0xcd: return mp_cur__be(c, 2, u);
	case 0xce: return mp_cur__be(c, 4, u);
	case 0xcf: return mp_cur__be(c, 8, u);
	case 0xd0:
		if (!mp_cur__be(c, 1, &x))
			*u = (uint64_t)(int64_t)(int8_t)x;
		break;
	case 0xd1:
		if (!mp_cur__be(c, 2, &x))
			*u = (uint64_t)(int64_t)(int16_t)x;
		break;
	case 0xd2:
		if (!mp_cur__be(c, 4, &x))
			*u = (uint64_t)(int64_t)(int32_t)x;
		break;
	case 0xd3:
		if (!mp_cur__be(c, 8, &x))
			*u = x;
		break;
	default:
		return mp_cur__fail(c, "integer expected");
	}
	if (c->err)
		return c->err;
	*neg = (int64_t)*u < 0;
	return 0;
}

/* Unsigned integer; negative values are an error. */
int mp_cur__uint(struct mp_cur *c, uint64_t *v)
{
	int neg;

	if (!c->err && c->p < c->end && *c->p <= 0x7f) {	/* positive fixint: most */
		*v = *c->p++;
		return 0;
	}
	/* uint 8/16/32/64 with all its bytes there: addresses, sizes, times */
	if (!c->err && c->p < c->end && *c->p >= 0xcc && *c->p <= 0xcf &&
	    mp_cur__left(c) >= 1u + (1u << (*c->p - 0xcc))) {
		size_t n = 1u << (*c->p - 0xcc), i;
		uint64_t x = 0;

		for (i = 1; i <= n; i++)
			x = x << 8 | c->p[i];
		c->p += 1 + n;
		*v = x;
		return 0;
	}
	if (mp_cur__number(c, v, &neg))
		return c->err;
	if (neg) {
		*v = 0;
		return mp_cur__fail(c, "negative value where an unsigned one was expected");
	}
	return 0;
}

/* Signed integer; unsigned values above INT64_MAX are an error. */
int mp_cur__int(struct mp_cur *c, int64_t *v)
{
	uint64_t u;
	int neg;

	*v = 0;
	if (mp_cur__number(c, &u, &neg))
		return c->err;
	if (!neg && u > (uint64_t)INT64_MAX)
		return mp_cur__fail(c, "integer out of range");
	*v = (int64_t)u;
	return 0;
}

/* Unsigned integer that must fit in 32 bits. */
int mp_cur__u32(struct mp_cur *c, uint32_t *v)
{
	uint64_t u;

	if (!c->err && c->p < c->end && *c->p <= 0x7f) {	/* positive fixint: most */
		*v = *c->p++;
		return 0;
	}
	*v = 0;
	if (mp_cur__uint(c, &u))
		return c->err;
	if (u > UINT32_MAX)
		return mp_cur__fail(c, "value does not fit in 32 bits");
	*v = (uint32_t)u;
	return 0;
}

/* Read a str or bin header and its body. */
static int mp_cur__raw(struct mp_cur *c, const uint8_t **b, uint32_t *len)
{
	uint64_t n = 0;
	uint8_t t;

	*b = NULL;
	*len = 0;
	if (mp_cur__tag(c, &t))
		return c->err;
	if (t >= 0xa0 && t <= 0xbf)
		n = t & 0x1f;
	else if (t == 0xd9 || t == 0xc4)
		mp_cur__be(c, 1, &n);
	else if (t == 0xda || t == 0xc5)
		mp_cur__be(c, 2, &n);
	else if (t == 0xdb || t == 0xc6)
		mp_cur__be(c, 4, &n);
	else
		return mp_cur__fail(c, "string or bytes expected");
	if (c->err)
		return c->err;
	if (n > mp_cur__left(c))
		return mp_cur__fail(c, "string runs past the end of the record");
	*b = c->p;
	*len = (uint32_t)n;
	c->p += n;
	return 0;
}

/* String (str or bin); not NUL-terminated. */
int mp_cur__str(struct mp_cur *c, const char **s, uint32_t *len)
{
	const uint8_t *b;
	int err = mp_cur__raw(c, &b, len);

	*s = (const char *)b;
	return err;
}

/* Bytes (bin or str). */
int mp_cur__bin(struct mp_cur *c, const uint8_t **b, uint32_t *len)
{
	return mp_cur__raw(c, b, len);
}

/* Read a container header of the given family; pairs = 2 for maps. */
static int mp_cur__container(struct mp_cur *c, int map, uint32_t *n)
{
	uint64_t x = 0;
	uint8_t t;

	*n = 0;
	if (mp_cur__tag(c, &t))
		return c->err;
	if (!map && t >= 0x90 && t <= 0x9f)
		x = t & 0x0f;
	else if (map && t >= 0x80 && t <= 0x8f)
		x = t & 0x0f;
	else if (t == (map ? 0xde : 0xdc))
		mp_cur__be(c, 2, &x);
	else if (t == (map ? 0xdf : 0xdd))
		mp_cur__be(c, 4, &x);
	else
		return mp_cur__fail(c, map ? "map expected" : "array expected");
	if (c->err)
		return c->err;
	/* Every element takes at least one byte. */
	if (x * (map ? 2 : 1) > mp_cur__left(c))
		return mp_cur__fail(c, "element count larger than the record");
	*n = (uint32_t)x;
	return 0;
}

/* Array header. */
int mp_cur__array(struct mp_cur *c, uint32_t *n)
{
	return mp_cur__container(c, 0, n);
}

/* Map header (*n pairs). */
int mp_cur__map(struct mp_cur *c, uint32_t *n)
{
	return mp_cur__container(c, 1, n);
}

/* -- Skipping -------------------------------------------------------------- */

/* Consume one value's tag and body; a container reports its *children instead. */
static int mp_cur__skip_one(struct mp_cur *c, uint64_t *children)
{
	uint64_t n = 0;
	uint8_t t;

	*children = 0;
	if (mp_cur__tag(c, &t))
		return c->err;
	if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3)
		return 0;
	if (t <= 0x8f) {
		*children = 2u * (t & 0x0f);
		return 0;
	}
	if (t <= 0x9f) {
		*children = t & 0x0f;
		return 0;
	}
	if (t <= 0xbf) {
		n = t & 0x1f;
		goto body;
	}
	switch (t) {
	case 0xcc: case 0xd0: n = 1; break;
	case 0xcd: case 0xd1: n = 2; break;
	case 0xca: case 0xce: case 0xd2: n = 4; break;
	case 0xcb: case 0xcf: case 0xd3: n = 8; break;
	case 0xd4: n = 2; break;	/* fixext: type byte + data */
	case 0xd5: n = 3; break;
	case 0xd6: n = 5; break;
	case 0xd7: n = 9; break;
	case 0xd8: n = 17; break;
	case 0xc4: case 0xd9: mp_cur__be(c, 1, &n); break;
	case 0xc5: case 0xda: mp_cur__be(c, 2, &n); break;
	case 0xc6: case 0xdb: mp_cur__be(c, 4, &n); break;
	case 0xc7: mp_cur__be(c, 1, &n); n += 1; break;	/* ext: + type byte */
	case 0xc8: mp_cur__be(c, 2, &n); n += 1; break;
	case 0xc9: mp_cur__be(c, 4, &n); n += 1; break;
	case 0xdc: mp_cur__be(c, 2, children); return c->err;
	case 0xdd: mp_cur__be(c, 4, children); return c->err;
	case 0xde: mp_cur__be(c, 2, children); *children *= 2; return c->err;
	case 0xdf: mp_cur__be(c, 4, children); *children *= 2; return c->err;
	default: return mp_cur__fail(c, "invalid msgpack type byte");
	}
body:
	if (c->err)
		return c->err;
	if (n > mp_cur__left(c))
		return mp_cur__fail(c, "value runs past the end of the record");
	c->p += n;
	return 0;
}

/* Skip n values: a pending-count loop, each step consumes at least one byte. */
int mp_cur__skip_n(struct mp_cur *c, uint32_t n)
{
	uint64_t pending = n, children;

	while (pending && !c->err) {
		if (mp_cur__skip_one(c, &children))
			break;
		pending--;
		/* Every value still owed takes at least one byte. */
		if (children > mp_cur__left(c) || pending + children > mp_cur__left(c))
			return mp_cur__fail(c, "element count larger than the record");
		pending += children;
	}
	return c->err;
}

/* Skip one value. */
int mp_cur__skip(struct mp_cur *c)
{
	return mp_cur__skip_n(c, 1);
}

/* Does the string (s, len) equal the C string key? */
int mp_key_is(const char *s, uint32_t len, const char *key)
{
	return strlen(key) == len && memcmp(s, key, len) == 0;
}
