/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numarg.h -- the one parser of every numeric command-line value: checked
 * in 64 bits against its range before it is stored anywhere narrower, so
 * that no value wraps (-F 4294967395 is not 99 Hz).
 */
#ifndef LJSNAP_NUMARG_H
#define LJSNAP_NUMARG_H

#include <stdint.h>

/* A decimal (or 0x hexadecimal) integer in [min, max]: no sign, no blank,
 * nothing after it.  0, -EINVAL (not such a number) or -ERANGE. */
int numarg__u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* The same with an optional k/K (x 1024) or m/M (x 1024 * 1024) suffix. */
int numarg__size(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* A finite number of seconds in (0, max].  0, -EINVAL or -ERANGE. */
int numarg__seconds(const char *s, double max, double *out);

#endif /* LJSNAP_NUMARG_H */
