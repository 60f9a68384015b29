/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c -- the ljsnap command: dispatch to record, report, info, doctor,
 * archive.
 */
#include <stdio.h>
#include <string.h>
#include "config.h"
#include "daemon/cmds.h"

/* Print the top-level usage. */
static void usage(FILE *out)
{
	fprintf(out,
		"usage: ljsnap <command> [options]\n"
		"\n"
		"A sampling profiler for processes that run LuaJIT (luajit, OpenResty/nginx,\n"
		"Tarantool, any embedder): complete stacks mixing kernel, C and Lua frames.\n"
		"\n"
		"commands:\n"
		"  record   sample processes with BPF and write a capture file\n"
		"  report   turn a capture file into folded stacks or a text summary\n"
		"  info     print a capture file's header, processes and statistics\n"
		"  doctor   show what ljsnap sees in a live process (LuaJIT builds, offsets)\n"
		"  archive  add the mapped files' debug information to a capture (on the\n"
		"           recording host)\n"
		"\n"
		"examples:\n"
		"  ljsnap record -o app.ljsnap -- luajit app.lua\n"
		"  ljsnap record -p $(pgrep -o nginx) -F 499 -d 30 -o nginx.ljsnap\n"
		"  ljsnap report -f folded nginx.ljsnap > nginx.folded\n"
		"  ljsnap doctor 1234\n"
		"\n"
		"Run 'ljsnap <command> --help' for the options of a command; see ljsnap(1).\n");
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(cmd, "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(cmd, "info"))
		return cmd_info(argc - 1, argv + 1);
	if (!strcmp(cmd, "doctor"))
		return cmd_doctor(argc - 1, argv + 1);
	if (!strcmp(cmd, "dump"))
		return cmd_dump(argc - 1, argv + 1);
	if (!strcmp(cmd, "top"))
		return cmd_top(argc - 1, argv + 1);
	if (!strcmp(cmd, "archive"))
		return cmd_archive(argc - 1, argv + 1);
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
		printf("ljsnap %s\n", PACKAGE_VERSION);
		return 0;
	}
	fprintf(stderr, "ljsnap: unknown command '%s'\n\n", cmd);
	usage(stderr);
	return 2;
}
