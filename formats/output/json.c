/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json.c -- JSON strings for the outputs that write JSON (see json.h).
 */
#include <stdio.h>
#include <string.h>

#include "formats/output/json.h"

/* Length of the well-formed UTF-8 sequence at p (n bytes left), or 0 for an
 * invalid byte: no overlong forms, no surrogates, nothing past U+10FFFF. */
static size_t utf8__seq(const unsigned char *p, size_t n)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

/* Write len bytes of s as the inside of a JSON string; see json.h. */
void json__chars(FILE *out, const char *s, size_t len, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0, k;

	while (i < len) {
		unsigned char c = p[i];
		const char *esc = NULL;
		char ubuf[8];

		k = c >= 0x20 && c != '"' && c != '\\' && c != 0x7f &&
		    !(c == '<' && (flags & JSON_ESC_LT)) ? utf8__seq(p + i, len - i) : 0;
		if (k) {
			i += k;
			run += k;
			continue;
		}
		fwrite(p + i - run, 1, run, out);
		run = 0;
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default:
			if (c < 0x20 || c == 0x7f || c == '<') {
				snprintf(ubuf, sizeof(ubuf), "\\u%04x", c);
				esc = ubuf;
			} else {
				esc = "\\ufffd";
			}
		}
		fputs(esc, out);
		i++;
	}
	fwrite(p + i - run, 1, run, out);
}

/* Write s as a JSON string; see json.h. */
void json__str(FILE *out, const char *s, size_t len, unsigned flags)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	json__chars(out, s, len, flags);
	fputc('"', out);
}
