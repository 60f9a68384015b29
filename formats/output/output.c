/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * output.c -- the table of output formats (see output.h).
 */
#include <string.h>

#include "formats/output/folded.h"
#include "formats/output/html.h"
#include "formats/output/output.h"
#include "formats/output/speedscope.h"
#include "formats/output/pprof.h"
#include "formats/output/textreport.h"

static const struct output_format formats[] = {
	{ "text", "top functions, VM states and how completely the stacks were unwound", 1,
	  textreport__write, ".txt", NULL, 0 },
	{ "folded", "one line per distinct stack (flamegraph.pl, inferno, speedscope)", 0,
	  folded__write, ".folded", "flamegraph.pl %s > flame.svg, or load it in speedscope", 0 },
	{ "speedscope", "speedscope's own JSON: one profile per process (--per-thread: thread)", 0,
	  speedscope__write, ".speedscope.json",
	  "open https://www.speedscope.app and load %s, or `npx speedscope %s`",
	  OUTPUT_NEEDS_SRC | OUTPUT_NEEDS_LABELS },
	{ "html", "an interactive flame graph: one self-contained HTML page", 0,
	  html__write, ".html", "open %s in a browser (it is self-contained: no network)", 0 },
	{ "pprof", "gzipped profile.proto with labels pid, tid, comm, vm (go tool pprof)", 0,
	  pprof__write, ".pb.gz",
	  "go tool pprof -http=127.0.0.1:8080 %s", OUTPUT_NEEDS_SRC | OUTPUT_NEEDS_LABELS },
};

const struct output_format *output__find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

const struct output_format *output__for_file(const char *path)
{
	const struct output_format *best = NULL;
	size_t i, n = path ? strlen(path) : 0, k;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (!formats[i].suffix)
			continue;
		k = strlen(formats[i].suffix);
		if (k <= n && !strcmp(path + n - k, formats[i].suffix) &&
		    (!best || k > strlen(best->suffix)))
			best = &formats[i];
	}
	return best;
}

void output__print_view(const struct output_format *f, const char *path, FILE *out)
{
	const char *p, *q;

	if (!f->view)
		return;
	for (p = f->view; (q = strstr(p, "%s")) != NULL; p = q + 2) {
		fwrite(p, 1, (size_t)(q - p), out);
		fputs(path, out);
	}
	fputs(p, out);
}

const struct output_format *output__formats(size_t *n)
{
	*n = sizeof(formats) / sizeof(formats[0]);
	return formats;
}
