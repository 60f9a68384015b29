/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * output.c -- the table of output formats (see output.h).
 */
#include <string.h>

#include "formats/output/folded.h"
#include "formats/output/output.h"
#include "formats/output/textreport.h"

static const struct output_format formats[] = {
	{ "text", "top functions, VM states and how completely the stacks were unwound", 1,
	  textreport__write },
	{ "folded", "one line per distinct stack (flamegraph.pl, inferno, speedscope)", 0,
	  folded__write },
};

const struct output_format *output__find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

const struct output_format *output__formats(size_t *n)
{
	*n = sizeof(formats) / sizeof(formats[0]);
	return formats;
}
