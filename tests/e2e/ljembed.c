/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljembed.c -- a program that embeds LuaJIT through libluajit-5.1.so (not
 * the luajit executable), for the end-to-end tests.
 * usage: ljembed SCRIPT [ARGS...]   (the script sees its arguments in `arg`)
 * LJEMBED_IDLE=SECONDS: after the script, print "idle" and wait that long
 * outside Lua before lua_close (tests/e2e/dump_blocked.sh: a VM not inside
 * Lua, its lua_State kept on this stack as a host keeps it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

int main(int argc, char **argv)
{
	lua_State *L;
	int i, rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: ljembed SCRIPT [ARGS...]\n");
		return 2;
	}
	L = luaL_newstate();
	if (!L)
		return 1;
	luaL_openlibs(L);
	lua_createtable(L, argc, 0);
	for (i = 1; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - 1);
	}
	lua_setglobal(L, "arg");
	if (luaL_dofile(L, argv[1])) {
		fprintf(stderr, "ljembed: %s\n", lua_tostring(L, -1));
		rc = 1;
	}
	if (getenv("LJEMBED_IDLE")) {
		lua_State *volatile keep = L;

		printf("idle\n");
		fflush(stdout);
		sleep((unsigned)atoi(getenv("LJEMBED_IDLE")));
		L = keep;
	}
	lua_close(L);
	return rc;
}
