/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numarg.c -- checked numeric command-line values (see numarg.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "daemon/numarg.h"

/* Digits of s as a u64; *end after them.  0, -EINVAL, -ERANGE (overflow). */
static int numarg__digits(const char *s, uint64_t *v, const char **end)
{
	char *e;
	unsigned long long x;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;		/* strtoull would take blanks and a '-' */
	errno = 0;
	x = strtoull(s, &e, 0);
	if (e == s)
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	*v = x;
	*end = e;
	return 0;
}

int numarg__u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *end;
	uint64_t v;
	int err = numarg__digits(s, &v, &end);

	if (err)
		return err;
	if (*end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int numarg__size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *end;
	uint64_t v, mul = 1;
	int err = numarg__digits(s, &v, &end);

	if (err)
		return err;
	if (*end == 'k' || *end == 'K')
		mul = 1024;
	else if (*end == 'm' || *end == 'M')
		mul = 1024 * 1024;
	if (mul > 1)
		end++;
	if (*end)
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	v *= mul;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int numarg__seconds(const char *s, double max, double *out)
{
	char *end;
	double v;

	if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
		return -EINVAL;
	v = strtod(s, &end);
	if (end == s || *end)
		return -EINVAL;
	if (!isfinite(v) || v <= 0 || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}
