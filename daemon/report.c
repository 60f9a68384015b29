/*
 * report.c -- `ljsnap report` (the offline walker and the output formats).
 */
#include <stdio.h>
#include "daemon/cmds.h"

/* `ljsnap report`: not available until the walker lands (issue 3). */
int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ljsnap report: not built yet in this revision\n");
	return 1;
}
