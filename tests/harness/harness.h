/*
 * harness.h -- pieces of the in-process walker harness shared between its
 * files (harness.c: scenarios and synchronous captures; vmrange.c: the
 * interpreter's code range; async.c: SIGPROF samples of running Lua;
 * trace.c: the trace decoder on our own live traces).
 */
#ifndef LJSNAP_TEST_HARNESS_H
#define LJSNAP_TEST_HARNESS_H

#include <stdint.h>

#include <lua.h>

#include "tests/harness/capture.h"

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
