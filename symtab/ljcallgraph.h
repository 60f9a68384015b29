/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljcallgraph.h -- names of LuaJIT's static C functions in a stripped ELF
 * file, from the calls between functions.
 *
 * A stripped LuaJIT keeps some names: the exported lua_* and luaL_* API, and
 * those ljnames.h recovers (the IR call table, the interpreter's calls).
 * The other functions, static or hidden (gc_onestep, index2adr, auxsort,
 * lj_strfmt_wfnum, ...), are known only by their .eh_frame range and by the
 * direct calls, jumps and address references (a lea of a function's first
 * address) between ranges in the machine code.
 *
 * ljcg_*.h holds, per LuaJIT source, the call graph of the C source: which
 * function calls which, from unoptimised builds (symtab/ljcallgraph-gen.py).
 * An optimised build calls S's out-of-line copy from P only if P, or a
 * function inlined into P, calls S in the source: S is reachable from P,
 * looking through functions that may have been inlined (every function but
 * those declared LJ_NOINLINE).  The graph also holds where the source takes
 * a function's address: directly (a callback: lua_atpanic(L, panic)) or
 * through a data object of function pointers (recff_func[], whose constant
 * index an optimised build may fold).  An edge made only by lea
 * instructions is checked against these references as well as the calls
 * (a function is not inlined where only its address is taken, so its own
 * calls are not looked through); call and jump edges against the calls
 * alone.  A range that calls its own first address is recursive.  A range may also be a piece of a function
 * split off by the compiler (gcc's .part and .cold copies): it then holds
 * code of P itself, so P stays a candidate of its callees; and a callee C
 * stays a candidate of a range that jumps to it, or that calls it when C
 * is recursive (a piece of C calls C only then).  Each unnamed
 * range starts with every source function as a candidate, and the
 * constraints are applied until nothing changes:
 *   - a caller that is named P: the range is P, or reachable from P;
 *   - a callee that is named C: the range reaches C (or is a piece of C,
 *     as above);
 *   - an unnamed caller or callee: the same, for any of its candidates.
 * A range left with exactly one candidate, named by no other range, gets
 * that name.  A call between two named ranges that the graph cannot make,
 * or a range left with no candidate, means the graph does not describe
 * this build (another release with the same IR call table list, or a call
 * the data lacks): then nothing is named.  (Each graph given the other
 * source's binaries names nothing, by either test.)
 * Nothing is guessed: a name is given only where the calls leave no other
 * source function possible.
 *
 * Pure: the ranges' names and calls in, names out.
 */
#ifndef LJSNAP_SYMTAB_LJCALLGRAPH_H
#define LJSNAP_SYMTAB_LJCALLGRAPH_H

#include <stddef.h>
#include <stdint.h>

#define LJCG_NO_RANGE	((size_t)-1)

/* What makes an edge (bits of kind[i]). */
#define LJCG_EDGE_JUMP	1	/* a jmp or jcc */
#define LJCG_EDGE_CALL	2	/* a call */
#define LJCG_EDGE_ADDR	4	/* a reference to the address (lea), a callback's */

/* names[0 .. n): the name of each range, or NULL; edges: nedges pairs
 * (from, to) of range indices, a direct call, jump or address reference
 * from range from to the first address of range to (from == to: a range
 * calling itself); kind[i]
 * (kind may be NULL: all LJCG_EDGE_JUMP) says which instructions make edge
 * i, ORed (0 counts as a call; an edge that is LJCG_EDGE_ADDR alone is
 * checked against the references of the source, not its calls); vm: the
 * interpreter's range (its
 * calls are ljnames__vmcalls's business: left out), or LJCG_NO_RANGE;
 * version: the IR call table list that fitted (ljnames__ircall).  Sets the
 * NULL names[i] that the call graph pins down (static strings) and *named
 * to their count.  Returns 0; -ENOENT when no graph is known for version,
 * or when the calls contradict it (names unchanged); -EINVAL for an edge
 * out of range; -ENOMEM. */
int ljnames__callgraph(const char *version, const char **names, size_t n, size_t vm,
		       const uint32_t *edges, const uint8_t *kind, size_t nedges, size_t *named);

/* Whether there is a call graph for version. */
int ljnames__callgraph_known(const char *version);

#endif /* LJSNAP_SYMTAB_LJCALLGRAPH_H */
