/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check.h -- the CHECK macros of the unit tests.  A test program defines
 * `int failures, checks;` once and prints them at the end.
 */
#ifndef LJSNAP_TEST_CHECK_H
#define LJSNAP_TEST_CHECK_H

#include <stdio.h>

extern int failures, checks;

#define CHECK(cond) do {							\
	checks++;								\
	if (!(cond)) {								\
		failures++;							\
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
	}									\
} while (0)

#define CHECKF(cond, ...) do {							\
	checks++;								\
	if (!(cond)) {								\
		failures++;							\
		fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__);					\
		fputc('\n', stderr);						\
	}									\
} while (0)

#endif
