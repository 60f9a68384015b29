/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * truth.c -- the harness's ground truth: the traceback of the running thread
 * and of each thread that resumed it, from lua_getstack/lua_getinfo, each
 * level formatted exactly as luaL_traceback (lj_debug.c) formats it, and
 * checked against luaL_traceback's own text when it is not elided.
 */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "tests/harness/harness.h"

/* Format level `level` of L1 exactly like luaL_traceback; 0 if no level. */
static int truth__line(lua_State *L, lua_State *L1, const struct lj_layout *lay, int level,
		       char *out, size_t size)
{
	lua_Debug ar;
	const void *fnp;
	lua_CFunction cf;
	int ffid = 0, base = lua_gettop(L);

	if (!lua_getstack(L1, level, &ar))
		return 0;
	lua_getinfo(L1, "Snlf", &ar);
	fnp = lua_topointer(L1, -1);
	cf = lua_tocfunction(L1, -1);
	lua_pop(L1, 1);
	if (fnp) {
		/* luaL_traceback prints fn->c.f; lua_tocfunction hides it for
		 * assembler builtins, so read the GCfuncC directly. */
		ffid = *((const uint8_t *)fnp + lay->fn_ffid);
		if (ffid >= 1)
			memcpy(&cf, (const uint8_t *)fnp + lay->fn_f, sizeof(cf));
	}
	if (ffid > 1 && !*ar.namewhat)
		lua_pushfstring(L, "[builtin#%d]:", ffid);
	else
		lua_pushfstring(L, "%s:", ar.short_src);
	if (ar.currentline > 0)
		lua_pushfstring(L, "%d:", ar.currentline);
	if (*ar.namewhat)
		lua_pushfstring(L, " in function '%s'", ar.name);
	else if (*ar.what == 'm')
		lua_pushliteral(L, " in main chunk");
	else if (*ar.what == 'C')
		lua_pushfstring(L, " at %p", (void *)cf);
	else
		lua_pushfstring(L, " in function <%s:%d>", ar.short_src, ar.linedefined);
	lua_concat(L, lua_gettop(L) - base);
	snprintf(out, size, "%s", lua_tostring(L, -1));
	lua_pop(L, 1);
	return 1;
}

/* The thread that resumed t, per the scenario's RESUMED_BY table (true:
 * mainL), or NULL. */
static lua_State *truth__resumer(lua_State *L, lua_State *t, lua_State *mainL)
{
	lua_State *r = NULL;

	lua_getfield(L, LUA_GLOBALSINDEX, "RESUMED_BY");
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		return NULL;
	}
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		if (lua_tothread(L, -2) == t) {
			r = lua_isthread(L, -1) ? lua_tothread(L, -1) : mainL;
			lua_pop(L, 2);
			break;
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return r;
}

/* Check our line formatting against luaL_traceback for one thread. */
static int truth__crosscheck(lua_State *L, lua_State *L1, char (*lines)[LINE_MAX_LEN], int n)
{
	const char *tb;
	size_t len, pos = 0;
	int i, ok = 1;

	luaL_traceback(L, L1, NULL, 0);
	tb = lua_tolstring(L, -1, &len);
	if (!tb || strstr(tb, "\n\t...")) {
		lua_pop(L, 1);
		return 1;	/* elided: the per-level truth stands alone */
	}
	if (strncmp(tb, "stack traceback:", 16))
		ok = 0;
	pos = 16;
	for (i = 0; ok && i < n; i++) {
		size_t l = strlen(lines[i]);

		if (pos + 2 + l > len || tb[pos] != '\n' || tb[pos + 1] != '\t' ||
		    memcmp(tb + pos + 2, lines[i], l))
			ok = 0;
		pos += 2 + l;
	}
	if (ok && pos != len)
		ok = 0;
	if (!ok) {
		fprintf(stderr, "harness: truth formatting differs from luaL_traceback:\n%s\n", tb);
		for (i = 0; i < n; i++)
			fprintf(stderr, "  truth[%d] %s\n", i, lines[i]);
	}
	lua_pop(L, 1);
	return ok;
}

/* Truth for the running thread and its resumers (see harness.h). */
int truth__build(lua_State *L, lua_State *mainL, const struct lj_layout *lay,
		 char (*lines)[LINE_MAX_LEN], int *ended_in_main)
{
	lua_State *t = L;
	int n = 0, nthreads = 0, start, level;

	*ended_in_main = 0;
	while (t && nthreads++ < 64) {
		start = n;
		for (level = 0; n < MAXLINES; level++, n++)
			if (!truth__line(L, t, lay, level, lines[n], LINE_MAX_LEN))
				break;
		if (!truth__crosscheck(L, t, lines + start, n - start))
			return -1;
		if (t == mainL) {
			*ended_in_main = 1;
			break;
		}
		t = truth__resumer(L, t, mainL);
	}
	return n;
}
