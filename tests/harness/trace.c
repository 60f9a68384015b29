/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace.c -- Lua functions for trace scenarios (tests/lua/trace_walk_*.lua):
 * the walker's trace decoder (unwind/ljtrace.c) run on this process's own
 * live traces, so a scenario can hold it against what LuaJIT itself says
 * through jit.util (exit stubs the machine code jumps to, snapshot entries,
 * constants) and jit.attach (the bytecode each trace recorded).
 *
 *   trace_snapno(tr, ofs)  -> the snapshot ljt__snap_find picks for machine-
 *                             code offset ofs of trace tr, or nil, error
 *   trace_header(tr)       -> {mcode, szmcode, nsnap, spadjust, root, startline?}
 *                             as ljt_hdr__read decodes it, or nil
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "tests/harness/harness.h"
#include "unwind/ljtrace.h"

static const struct cap_cfg *TC;	/* the harness configuration (layout) */

/* Read a reference-sized value of our own memory. */
static int peek_ref(uint64_t addr, uint64_t *v)
{
	*v = 0;
	return cap__peek(addr, v, TC->lay->ref_size) == TC->lay->ref_size ? 0 : -EFAULT;
}

/* The live header of trace tr of the state L belongs to; 0 or -errno. */
static int trace__hdr(lua_State *L, uint32_t tr, struct ljt_hdr *h, struct memsrc *live)
{
	const struct lj_layout *lay = TC->lay;
	uint64_t g, arr, T;
	uint32_t size;

	if (peek_ref((uintptr_t)L + lay->l_glref, &g) || !lay->g2j)
		return -EFAULT;
	g += (uint64_t)(int64_t)lay->g2j;	/* J */
	if (cap__peek(g + lay->j_trace, &arr, 8) != 8 || !arr ||
	    cap__peek(g + lay->j_sizetrace, &size, 4) != 4 || tr == 0 || tr >= size ||
	    peek_ref(arr + (uint64_t)lay->ref_size * tr, &T) || !T)
		return -ENOENT;
	return ljt_hdr__read(lay, live, T, h);
}

/* trace_snapno(tr, ofs) */
static int trace_snapno(lua_State *L)
{
	uint32_t tr = (uint32_t)luaL_checkinteger(L, 1), snapno = 0;
	uint64_t ofs = (uint64_t)luaL_checknumber(L, 2);
	struct cap_live st;
	struct memsrc live;
	struct ljt_hdr h;
	struct ljt t;
	int err;

	cap__live_init(&live, &st);
	ljt__init(&t);
	err = trace__hdr(L, tr, &h, &live);
	if (!err)
		err = ljt__bind(&t, TC->lay, &live, &h);
	if (!err)
		err = ljt__snap_find(&t, ofs, &snapno);
	ljt__exit(&t);
	if (err) {
		lua_pushnil(L);
		lua_pushstring(L, strerror(-err));
		return 2;
	}
	lua_pushinteger(L, (lua_Integer)snapno);
	return 1;
}

/* trace_header(tr) */
static int trace_header(lua_State *L)
{
	uint32_t tr = (uint32_t)luaL_checkinteger(L, 1);
	struct cap_live st;
	struct memsrc live;
	struct ljt_hdr h;

	cap__live_init(&live, &st);
	if (trace__hdr(L, tr, &h, &live)) {
		lua_pushnil(L);
		return 1;
	}
	lua_createtable(L, 0, 6);
	lua_pushnumber(L, (double)h.mcode);
	lua_setfield(L, -2, "mcode");
	lua_pushnumber(L, h.szmcode);
	lua_setfield(L, -2, "szmcode");
	lua_pushnumber(L, h.nsnap);
	lua_setfield(L, -2, "nsnap");
	lua_pushnumber(L, h.spadjust);
	lua_setfield(L, -2, "spadjust");
	lua_pushnumber(L, h.root);
	lua_setfield(L, -2, "root");
	lua_pushnumber(L, (double)h.T);
	lua_setfield(L, -2, "T");
	return 1;
}

/* Register the functions (cfg must outlive L). */
void trace__register(lua_State *L, const struct cap_cfg *cfg)
{
	TC = cfg;
	lua_register(L, "trace_snapno", trace_snapno);
	lua_register(L, "trace_header", trace_header);
}
