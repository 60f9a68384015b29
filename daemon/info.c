/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * info.c -- `ljsnap info FILE`.
 */
#include <stdio.h>
#include <string.h>
#include "daemon/cmds.h"
#include "formats/capture/info.h"

/* `ljsnap info`. */
int cmd_info(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-') {
		FILE *out = argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) ? stdout : stderr;

		fprintf(out, "usage: ljsnap info FILE\n\n"
			"Print a capture file's header, processes (with their LuaJIT builds), record\n"
			"counts, recording statistics, and whether the file was cut short.\n\n"
			"example:\n  ljsnap info app.ljsnap\n");
		return out == stdout ? 0 : 2;
	}
	return snapfile__print_info(argv[1], stdout) ? 1 : 0;
}
