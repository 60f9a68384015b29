/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljoffsets.c -- ground truth for a LuaJIT source tree: the offsets ljsnap
 * detects, computed by the compiler from the tree's own headers.  Built by
 * the tests against a variant's source (tests/variants/prepare.sh keeps it)
 * with the variant's XCFLAGS:
 *   cc -I SRC/src XCFLAGS -o ljoffsets ljoffsets.c
 * Prints one line in the format of `ljsnap doctor`'s "offsets:" line, then
 * "key value" lines for the fields a test may check one by one.
 */
#include <stddef.h>
#include <stdio.h>

#include "lj_obj.h"
#include "lj_jit.h"
#include "lj_dispatch.h"

/* Print the offsets. */
int main(void)
{
	int disp2g = (int)GG_DISP2G;
	int g2j = (int)(GG_OFS(J) - GG_OFS(g));

	printf("  offsets:     DISPATCH->g %d, g->J %d, vmstate +%u, cur_L +%u, jit_base +%u, "
	       "L->base +%u, L->stack +%u, L->cframe +%u, sizeof(lua_State) %u\n",
	       disp2g, g2j, (unsigned)offsetof(global_State, vmstate),
	       (unsigned)offsetof(global_State, cur_L), (unsigned)offsetof(global_State, jit_base),
	       (unsigned)offsetof(lua_State, base), (unsigned)offsetof(lua_State, stack),
	       (unsigned)offsetof(lua_State, cframe), (unsigned)sizeof(lua_State));
	printf("gc64 %d\n", LJ_GC64);
	printf("dualnum %d\n", LJ_DUALNUM);
	printf("disp2g %d\n", disp2g);
	printf("g2j %d\n", g2j);
	printf("g_size %u\n", (unsigned)sizeof(global_State));
	printf("g_vmstate %u\n", (unsigned)offsetof(global_State, vmstate));
	printf("g_cur_L %u\n", (unsigned)offsetof(global_State, cur_L));
	printf("g_jit_base %u\n", (unsigned)offsetof(global_State, jit_base));
	printf("g_mainthref %u\n", (unsigned)offsetof(global_State, mainthref));
	printf("g_tmpbuf_L %u\n", (unsigned)offsetof(global_State, tmpbuf.L));
	printf("g_strempty %u\n", (unsigned)offsetof(global_State, strempty));
	printf("g_hookmask %u\n", (unsigned)offsetof(global_State, hookmask));
	printf("gg_ofs_g %u\n", (unsigned)GG_OFS(g));
	return 0;
}
