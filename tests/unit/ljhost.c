/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljhost.c -- a tiny embedder of the system libluajit for live detection
 * tests: creates a state with luaL_newstate, prints "L 0x..." (the main
 * lua_State), runs a hot loop so the JIT compiles trace 1, then blocks in
 * io.read until stdin is closed.  G(L) is deliberately not printed: the
 * test reads it from the process with its own layout.
 */
#include <stdio.h>
#include <lauxlib.h>
#include <lualib.h>

static const char chunk[] =
	"local s = 0\n"
	"for i = 1, 100000 do s = s + i end\n"	/* hot loop: trace 1 */
	"io.write('ready\\n') io.flush()\n"
	"return io.read('*a')\n";		/* blocks in a C function: vmstate C */

/* Print L, run the chunk, exit when stdin closes. */
int main(void)
{
	lua_State *L = luaL_newstate();

	if (!L) {
		fprintf(stderr, "ljhost: luaL_newstate failed\n");
		return 1;
	}
	luaL_openlibs(L);
	printf("L %p\n", (void *)L);
	fflush(stdout);
	if (luaL_loadbuffer(L, chunk, sizeof(chunk) - 1, "=ljsnaptest") || lua_pcall(L, 0, 1, 0)) {
		fprintf(stderr, "ljhost: %s\n", lua_tostring(L, -1));
		lua_close(L);
		return 1;
	}
	lua_close(L);
	return 0;
}
