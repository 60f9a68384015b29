/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljembed.c -- a program that embeds LuaJIT through libluajit-5.1.so (not
 * the luajit executable), for the end-to-end tests.
 * usage: ljembed SCRIPT [ARGS...]   (the script sees its arguments in `arg`)
 */
#include <stdio.h>
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
	lua_close(L);
	return rc;
}
