/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljsig.c -- function signatures (see ljsig.h).
 */
#include <errno.h>
#include <string.h>

#include "symtab/ljsig.h"
#include "symtab/x86insn.h"

struct ljsig_entry {
	uint64_t hash;
	uint32_t name;		/* byte offset of its name in the names */
};

#include "symtab/ljsig_upstream_2022.h"
#include "symtab/ljsig_luajit2_20230119.h"

static const struct ljsig_data {
	const char *version;	/* ljnames__ircall's list name */
	const char *names;	/* "name\0" per function */
	const struct ljsig_entry *v;	/* sorted by hash */
	size_t n;
} ljsig_data[] = {
	{ "LuaJIT 2.1 (2022-03)", ljsig_upstream_2022_names, ljsig_upstream_2022,
	  sizeof(ljsig_upstream_2022) / sizeof(ljsig_upstream_2022[0]) },
	{ "OpenResty luajit2 2.1-20230119", ljsig_luajit2_20230119_names, ljsig_luajit2_20230119,
	  sizeof(ljsig_luajit2_20230119) / sizeof(ljsig_luajit2_20230119[0]) },
};

#define LJSIG_FNV_OFFSET	0xcbf29ce484222325ull
#define LJSIG_FNV_PRIME		0x100000001b3ull

/* FNV-1a of one byte. */
static uint64_t ljsig__mix(uint64_t h, uint8_t b)
{
	return (h ^ b) * LJSIG_FNV_PRIME;
}

int ljsig__base(const uint8_t *code, size_t len, uint64_t lo, ljsig_target_fn target, void *arg,
		uint64_t *out)
{
	uint64_t h = LJSIG_FNV_OFFSET;
	size_t i = 0, k;
	int err;

	if (!len)
		return -EINVAL;
	for (k = 0; k < 8; k++)
		h = ljsig__mix(h, (uint8_t)(len >> (8 * k)));
	while (i < len) {
		struct x86_insn x;
		size_t at = 0;
		int32_t rel = 0;
		int64_t to;

		if (x86_insn__decode(code + i, len - i, &x) != 0)
			return -EINVAL;
		if (x.rip_off)		/* data or code elsewhere: the layout's */
			at = x.rip_off;
		else if (x.rel_size == 4)
			at = x.rel_off;
		if (at) {
			memcpy(&rel, code + i + at, 4);	/* little-endian (x86) */
			to = (int64_t)(i + x.len) + rel;	/* from the function's start */
			if (!x.rip_off && to >= 0 && (uint64_t)to < len)
				at = 0;	/* a branch inside the function: kept */
		}
		for (k = 0; k < x.len; k++)
			h = ljsig__mix(h, at && k >= at && k < at + 4 ? 0 : code[i + k]);
		if (at && target &&
		    (err = target(lo + (uint64_t)(int64_t)(i + x.len) + (uint64_t)(int64_t)rel, arg)))
			return err;
		i += x.len;
	}
	*out = h;
	return 0;
}

int ljsig__sig(uint64_t base, size_t len, const uint64_t *reached, size_t n, uint64_t *out)
{
	uint64_t h = base;
	size_t i, k;

	if (len < LJSIG_MIN_LEN)
		return -EINVAL;
	for (i = 0; i < n; i++)
		for (k = 0; k < 8; k++)
			h = ljsig__mix(h, (uint8_t)(reached[i] >> (8 * k)));
	*out = h;
	return 0;
}

/* The data of version, or NULL. */
static const struct ljsig_data *ljsig__data(const char *version)
{
	size_t i;

	for (i = 0; version && i < sizeof(ljsig_data) / sizeof(ljsig_data[0]); i++)
		if (!strcmp(version, ljsig_data[i].version))
			return &ljsig_data[i];
	return NULL;
}

int ljsig__known(const char *version)
{
	return ljsig__data(version) != NULL;
}

const char *ljsig__name(const char *version, uint64_t hash)
{
	const struct ljsig_data *d = ljsig__data(version);
	size_t lo = 0, hi = d ? d->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->v[mid].hash == hash)
			return d->names + d->v[mid].name;
		if (d->v[mid].hash < hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
