/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json.h -- JSON strings (RFC 8259), for the outputs that write JSON
 * (speedscope, the html page's embedded profile): '"' and '\\' escaped,
 * control bytes and DEL as \uXXXX (or \n, \t...), well-formed UTF-8 as it
 * is, every other byte as \ufffd (what a UTF-8 decoder would read there).
 */
#ifndef LJSNAP_JSON_H
#define LJSNAP_JSON_H

#include <stddef.h>
#include <stdio.h>

#define JSON_ESC_LT	0x1	/* '<' as \u003c: no "</script" closes a page's element */

/* The inside of a JSON string: len bytes of s. */
void json__chars(FILE *out, const char *s, size_t len, unsigned flags);

/* A JSON string, quoted; null when s is NULL. */
void json__str(FILE *out, const char *s, size_t len, unsigned flags);

#endif /* LJSNAP_JSON_H */
