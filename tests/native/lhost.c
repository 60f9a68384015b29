/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lhost.c -- a C host of Debian's libluajit-5.1 with a known native + Lua
 * call structure, for the stitched-stack tests (tests/e2e/stitch_host.sh).
 *
 * usage: lhost SCRIPT SECONDS [joff]
 *
 * main -> host_run -> lua_pcall(chunk) defines the script's functions, then
 * main -> host_run -> lua_pcall -> Lua entry(SECONDS, MODE), which calls Lua
 * work() in a loop; work() runs four branches (tests/lua/stitch_host.lua):
 *   a  c_spin (a lua_CFunction of this host) -> spin_inner (C loop)
 *   b  ffi.C.lhost_ffi_spin (exported from this executable, FFI call)
 *   c  c_call_back (lua_CFunction) -> lua_call -> Lua callback_lua (Lua loop)
 *   d  table.sort with a Lua comparator (a C builtin calling back into Lua)
 * Every spin is a fixed number of iterations per work unit.  Before running
 * the script, prints "ADDR name 0x..." for the host's functions, so that a
 * test can tell the Lua side's C-function frames ("C:0x...") apart.
 * Built twice (Makefile.am): with and without frame pointers.
 *
 * Every function the stack must show is noipa (neither inlined, cloned nor
 * merged), and none calls the next one in tail position, at any -O level.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#define LHOST_ITERS_PER_UNIT	100000	/* loop iterations per work unit */
#define LHOST_MAX_UNITS		100000000

#define LHOST_FN	__attribute__((noipa))

/* Keeps the spin loops from being folded away. */
static volatile uint64_t lhost_sink;

/* The C spin of branch a: units of a fixed loop. */
LHOST_FN void spin_inner(long units)
{
	uint64_t x = lhost_sink;
	long i;

	for (i = 0; i < units * LHOST_ITERS_PER_UNIT; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	lhost_sink = x;
}

/* The FFI spin of branch b (called by the script through ffi.C). */
__attribute__((visibility("default"))) LHOST_FN void lhost_ffi_spin(long units)
{
	uint64_t x = lhost_sink;
	long i;

	if (units < 0 || units > LHOST_MAX_UNITS)
		return;
	for (i = 0; i < units * LHOST_ITERS_PER_UNIT; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	lhost_sink = x;
}

/* lua_CFunction c_spin(units): branch a. */
LHOST_FN int c_spin(lua_State *L)
{
	lua_Integer units = luaL_checkinteger(L, 1);

	if (units < 0 || units > LHOST_MAX_UNITS)
		return luaL_error(L, "c_spin: units out of range");
	spin_inner((long)units);
	return 0;
}

/* lua_CFunction c_call_back(units): branch c, calls Lua callback_lua(units). */
LHOST_FN int c_call_back(lua_State *L)
{
	lua_Integer units = luaL_checkinteger(L, 1);

	lua_getglobal(L, "callback_lua");
	if (!lua_isfunction(L, -1))
		return luaL_error(L, "c_call_back: no global function callback_lua");
	lua_pushinteger(L, units);
	lua_call(L, 1, 0);
	return 0;
}

/* Load the script, define its functions, then run entry(seconds, mode). */
LHOST_FN int host_run(lua_State *L, const char *script, lua_Integer seconds, const char *mode)
{
	if (luaL_loadfile(L, script) || lua_pcall(L, 0, 0, 0)) {
		fprintf(stderr, "lhost: %s\n", lua_tostring(L, -1));
		return 1;
	}
	lua_getglobal(L, "entry");
	if (!lua_isfunction(L, -1)) {
		fprintf(stderr, "lhost: %s defines no global function entry\n", script);
		return 1;
	}
	lua_pushinteger(L, seconds);
	lua_pushstring(L, mode);
	if (lua_pcall(L, 2, 0, 0)) {
		fprintf(stderr, "lhost: %s\n", lua_tostring(L, -1));
		return 1;
	}
	return 0;
}

/* Print the host's function addresses, register its functions, run. */
int main(int argc, char **argv)
{
	const char *mode = argc > 3 ? argv[3] : "jon";
	lua_State *L;
	char *end;
	long seconds;
	int rc;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: lhost SCRIPT SECONDS [joff]\n");
		return 2;
	}
	seconds = strtol(argv[2], &end, 10);
	if (*end || seconds < 0 || seconds > 3600) {
		fprintf(stderr, "lhost: SECONDS must be 0..3600, got '%s'\n", argv[2]);
		return 2;
	}
	printf("ADDR c_spin %p\nADDR c_call_back %p\nADDR spin_inner %p\nADDR lhost_ffi_spin %p\n",
	       (void *)(uintptr_t)c_spin, (void *)(uintptr_t)c_call_back,
	       (void *)(uintptr_t)spin_inner, (void *)(uintptr_t)lhost_ffi_spin);
	fflush(stdout);
	L = luaL_newstate();
	if (!L) {
		fprintf(stderr, "lhost: luaL_newstate failed (out of memory)\n");
		return 1;
	}
	luaL_openlibs(L);
	lua_register(L, "c_spin", c_spin);
	lua_register(L, "c_call_back", c_call_back);
	rc = host_run(L, argv[1], seconds, mode);
	lua_close(L);
	return rc;
}
