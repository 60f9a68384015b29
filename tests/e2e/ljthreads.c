/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljthreads.c -- a host of libluajit-5.1.so with two threads, for
 * tests/e2e/stitch_threads.sh: "ljs-lua" runs a Lua script in its own
 * lua_State, "ljs-spin" spins in ljthreads_spin() and never touches Lua.
 * usage: ljthreads SCRIPT [ARGS...]   (the script sees its arguments in `arg`)
 * The spinner stops when the script returns.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

static volatile int stop;
static int nargs;
static char **args;
static int lua_rc;

/* The C-only thread's work: a plain loop, no Lua, no calls. */
__attribute__((noinline)) void ljthreads_spin(void)
{
	volatile unsigned long x = 0;

	while (!stop)
		x++;
}

static void *spinner(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "ljs-spin");
	ljthreads_spin();
	return NULL;
}

static void *lua_main(void *arg)
{
	lua_State *L;
	int i;

	(void)arg;
	pthread_setname_np(pthread_self(), "ljs-lua");
	L = luaL_newstate();
	if (!L) {
		lua_rc = 1;
		return NULL;
	}
	luaL_openlibs(L);
	lua_createtable(L, nargs, 0);
	for (i = 1; i < nargs; i++) {
		lua_pushstring(L, args[i]);
		lua_rawseti(L, -2, i - 1);
	}
	lua_setglobal(L, "arg");
	if (luaL_dofile(L, args[1])) {
		fprintf(stderr, "ljthreads: %s\n", lua_tostring(L, -1));
		lua_rc = 1;
	}
	lua_close(L);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tl, ts;

	if (argc < 2) {
		fprintf(stderr, "usage: ljthreads SCRIPT [ARGS...]\n");
		return 2;
	}
	nargs = argc;
	args = argv;
	if (pthread_create(&ts, NULL, spinner, NULL) || pthread_create(&tl, NULL, lua_main, NULL))
		return 1;
	pthread_join(tl, NULL);
	stop = 1;
	pthread_join(ts, NULL);
	return lua_rc;
}
