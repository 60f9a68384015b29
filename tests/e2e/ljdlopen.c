/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljdlopen.c -- a program that spins in C first and only then dlopen()s
 * libluajit-5.1.so.2 and runs a script with it, for the end-to-end test of
 * mappings that change while recording (tests/e2e/record_remap.sh).  It is
 * not linked with LuaJIT: the library is not mapped during the C phase.
 * usage: ljdlopen SPIN_MS LIBRARY SCRIPT [ARGS...]   (the script sees ARGS
 * in `arg`, SCRIPT as arg[0]); prints "CPU c SECONDS" for the C phase.
 *        ljdlopen SPIN_MS --exec PROGRAM [ARGS...]   execs PROGRAM instead
 * (same pid, a new image) after the C phase.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <lua.h>

typedef lua_State *(*newstate_fn)(void);
typedef void (*openlibs_fn)(lua_State *);
typedef int (*loadfile_fn)(lua_State *, const char *);
typedef int (*pcall_fn)(lua_State *, int, int, int);
typedef void (*createtable_fn)(lua_State *, int, int);
typedef void (*pushstring_fn)(lua_State *, const char *);
typedef void (*rawseti_fn)(lua_State *, int, int);
typedef void (*setfield_fn)(lua_State *, int, const char *);
typedef const char *(*tolstring_fn)(lua_State *, int, size_t *);
typedef void (*close_fn)(lua_State *);

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* An LCG, always inlined into its caller: report shows it as an inlined
 * frame (its whole loop is on one line, which --lines names). */
static inline __attribute__((always_inline)) void lcg_burn(volatile unsigned long *x)
{
	for (int i = 0; i < 100000; i++) *x = *x * 6364136223846793005ul + 1442695040888963407ul; /* LCG_LINE */
}

/* Burn CPU in C for ms milliseconds of CPU time, part of it in the vDSO
 * (clock_gettime(CLOCK_MONOTONIC) is answered there, without a syscall). */
static __attribute__((noipa)) unsigned long c_spin(long ms)
{
	volatile unsigned long x = 1;
	double t0 = cpu_now();
	struct timespec ts;

	while (cpu_now() - t0 < ms / 1000.0) {
		lcg_burn(&x);
		for (int i = 0; i < 2000; i++)
			clock_gettime(CLOCK_MONOTONIC, &ts);
	}
	return x;
}

/* Print "VDSO name" for each name the vDSO's own symbol table gives the
 * function glibc's clock_gettime calls (the dynamic linker's view). */
static void print_vdso_names(void)
{
	static const char *const names[] = { "__vdso_clock_gettime", "clock_gettime" };
	void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD), *f;
	size_t i;

	f = h ? dlsym(h, "__vdso_clock_gettime") : NULL;
	for (i = 0; f && i < sizeof(names) / sizeof(names[0]); i++)
		if (dlsym(h, names[i]) == f)
			printf("VDSO %s\n", names[i]);
}

#define SYM(var, type, name) \
	type var = (type)dlsym(h, name); \
	if (!var) { fprintf(stderr, "ljdlopen: %s: %s\n", name, dlerror()); return 1; }

int main(int argc, char **argv)
{
	double t0;
	void *h;
	int i, rc = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: ljdlopen SPIN_MS LIBRARY SCRIPT [ARGS...]\n"
			"       ljdlopen SPIN_MS --exec PROGRAM [ARGS...]\n");
		return 2;
	}
	print_vdso_names();
	t0 = cpu_now();
	c_spin(atol(argv[1]));
	printf("CPU c %.3f\n", cpu_now() - t0);
	fflush(stdout);
	if (!strcmp(argv[2], "--exec")) {
		execv(argv[3], argv + 3);
		perror("ljdlopen: exec");
		return 1;
	}
	h = dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "ljdlopen: %s\n", dlerror());
		return 1;
	}
	{
		SYM(newstate, newstate_fn, "luaL_newstate");
		SYM(openlibs, openlibs_fn, "luaL_openlibs");
		SYM(loadfile, loadfile_fn, "luaL_loadfile");
		SYM(pcall, pcall_fn, "lua_pcall");
		SYM(createtable, createtable_fn, "lua_createtable");
		SYM(pushstring, pushstring_fn, "lua_pushstring");
		SYM(rawseti, rawseti_fn, "lua_rawseti");
		SYM(setfield, setfield_fn, "lua_setfield");
		SYM(tolstring, tolstring_fn, "lua_tolstring");
		SYM(lclose, close_fn, "lua_close");
		lua_State *L = newstate();

		if (!L)
			return 1;
		openlibs(L);
		createtable(L, argc, 0);
		for (i = 3; i < argc; i++) {
			pushstring(L, argv[i]);
			rawseti(L, -2, i - 3);
		}
		setfield(L, LUA_GLOBALSINDEX, "arg");
		if (loadfile(L, argv[3]) || pcall(L, 0, 0, 0)) {
			fprintf(stderr, "ljdlopen: %s\n", tolstring(L, -1, NULL));
			rc = 1;
		}
		lclose(L);
	}
	return rc;
}
