/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mpread.h -- a bounded, allocation-free msgpack pull reader.
 *
 * The capture file reader decodes payloads it does not trust.  This cursor
 * reads one msgpack value at a time straight from the payload bytes: every
 * length is checked against the bytes that remain, a container's element
 * count must fit in the remaining bytes (each element takes at least one),
 * and nothing is allocated, so a corrupt count can neither overrun the
 * buffer nor make the reader allocate.  Errors are sticky: after the first
 * one every call returns it and reads zero values, so a decoder may check
 * once at the end of a block (loops must still test mp_cur.err to stop).
 */
#ifndef LJSNAP_MPREAD_H
#define LJSNAP_MPREAD_H

#include <stddef.h>
#include <stdint.h>

enum mp_type {
	MP_NONE = 0,	/* end of data or error */
	MP_NIL, MP_BOOL,
	MP_UINT,	/* a non-negative integer, whatever its encoding */
	MP_INT,		/* a negative integer */
	MP_FLOAT,
	MP_STR, MP_BIN, MP_ARRAY, MP_MAP, MP_EXT,
};

struct mp_cur {
	const uint8_t *p, *end;
	int err;		/* 0 or negative errno (-EBADMSG) */
	const char *why;	/* what went wrong, for messages */
};

/* Start reading len bytes at p. */
void mp_cur__init(struct mp_cur *c, const void *p, size_t len);

/* Type of the next value without consuming it (MP_NONE at end or error). */
enum mp_type mp_cur__peek(const struct mp_cur *c);

/* Container headers: *n elements (map: *n key/value pairs) follow. */
int mp_cur__array(struct mp_cur *c, uint32_t *n);
int mp_cur__map(struct mp_cur *c, uint32_t *n);

/* Integers: __uint refuses negative values; __int refuses values > INT64_MAX. */
int mp_cur__uint(struct mp_cur *c, uint64_t *v);
int mp_cur__int(struct mp_cur *c, int64_t *v);

/* Unsigned integer that must fit in 32 bits. */
int mp_cur__u32(struct mp_cur *c, uint32_t *v);

/* String or binary (either encoding is accepted by both); *p points into the
 * buffer, not NUL-terminated. */
int mp_cur__str(struct mp_cur *c, const char **s, uint32_t *len);
int mp_cur__bin(struct mp_cur *c, const uint8_t **b, uint32_t *len);

/* Skip one complete value of any type (iterative, bounded by the data). */
int mp_cur__skip(struct mp_cur *c);

/* Skip n values. */
int mp_cur__skip_n(struct mp_cur *c, uint32_t n);

/* Mark the cursor failed with a reason (keeps the first one). */
int mp_cur__fail(struct mp_cur *c, const char *why);

/* Does the string (s, len) equal the C string key? */
int mp_key_is(const char *s, uint32_t len, const char *key);

#endif /* LJSNAP_MPREAD_H */
