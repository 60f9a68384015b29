/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * harness.h -- pieces of the in-process walker harness shared between its
 * files (harness.c: scenarios and synchronous captures; truth.c: the
 * ground truth from lua_getstack; vmrange.c: the interpreter's code range;
 * async.c: SIGPROF samples of running Lua; trace.c: the trace decoder on
 * our own live traces).
 */
#ifndef LJSNAP_TEST_HARNESS_H
#define LJSNAP_TEST_HARNESS_H

#include <stdint.h>

#include <lua.h>

#include "tests/harness/capture.h"

#define MAXLINES	8192	/* traceback lines of one capture */
#define LINE_MAX_LEN	256	/* bytes of one line */

/* Ground truth (truth.c): the traceback lines of L's running thread, then
 * of each thread that resumed it (the scenario's RESUMED_BY table), down to
 * mainL, into lines[0 .. MAXLINES); *ended_in_main when the chain reached
 * mainL.  The number of lines, or -1 when a line differs from
 * luaL_traceback's own (message printed). */
int truth__build(lua_State *L, lua_State *mainL, const struct lj_layout *lay,
		 char (*lines)[LINE_MAX_LEN], int *ended_in_main);

/* The interpreter code range of the loaded libluajit; 0 or -1 (message printed). */
int vm__range(uint64_t *lo, uint64_t *hi);

/* Asynchronous sampling: async_start() / async_stop(expect) for scenarios. */
struct async_stats {
	unsigned samples, checked, regs, jit_base, l_base, pseudo, skipped_c, tolerated;
};
int async__init(const struct cap_cfg *cfg);
void async__register(lua_State *L);
void async__stats(struct async_stats *out);
void async__exit(void);

/* Trace decoder checks for scenarios (trace.c): trace_snapno, trace_header. */
void trace__register(lua_State *L, const struct cap_cfg *cfg);

#endif /* LJSNAP_TEST_HARNESS_H */
