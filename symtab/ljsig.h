/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljsig.h -- names of LuaJIT's C functions from the bytes of their code:
 * function signatures, in the manner of IDA's FLIRT and Ghidra's Function
 * ID.
 *
 * One compiler with one set of flags turns one LuaJIT source into the same
 * machine code for a function wherever the linker puts it: only the
 * displacements that reach outside the function differ (call and jmp
 * rel32 to other functions, RIP-relative data).  A function's base
 * signature is a 64-bit hash of its length and its bytes with those fields
 * zeroed (x86insn.h finds them).  Functions that differ only there (the
 * luaopen_table_* stubs, each registering another function) have one base
 * signature, so a function's signature also mixes in, for each such field
 * in the order of the code, the base signature of the function it reaches
 * (0 for data, or an address no function starts at): the callees and the
 * functions whose address it takes must be the same code too.
 *
 * ljsig_*.h holds, per LuaJIT source, the signatures of the functions of
 * the builds Debian 12 ships (the luajit binary and libluajit-5.1.so of
 * its luajit and luajit2 packages, rebuilt as the packages build them by
 * symtab/ljsig-gen.py): a signature that two functions share there is
 * left out, as is code shorter than LJSIG_MIN_LEN bytes, so that one
 * signature stands for one function.
 *
 * Another compiler, other flags or another configuration (GC64 or not,
 * amalgamated or not) give other bytes: its functions then mostly have no
 * signature in the data, and stay for the call graph (ljcallgraph.h).
 * funcs.c uses a signature's name only where the signatures agree with
 * every name the file already gives (its symbols, the IR call table), and
 * takes them all back when the calls between the named functions
 * contradict LuaJIT's call graph (ljcallgraph.h) and the graph fits the
 * file without them (a program that links LuaJIT in has functions of its
 * own, which no LuaJIT source graph describes).
 *
 * Pure: code in, names out.
 */
#ifndef LJSNAP_SYMTAB_LJSIG_H
#define LJSNAP_SYMTAB_LJSIG_H

#include <stddef.h>
#include <stdint.h>

#define LJSIG_MIN_LEN	24	/* shorter code is too common to tell functions apart */

/* Told each link-time address to that a field of the code reaches outside
 * the function, in the order of the code; non-zero stops the scan and is
 * returned. */
typedef int (*ljsig_target_fn)(uint64_t to, void *arg);

/* The base signature of a function's code (len bytes at link-time address
 * lo, the whole function as its FDE bounds it), and through target (may be
 * NULL) the addresses it reaches.  0; -EINVAL when the bytes are not whole
 * instructions x86insn.h knows (or len is 0); target's error. */
int ljsig__base(const uint8_t *code, size_t len, uint64_t lo, ljsig_target_fn target, void *arg,
		uint64_t *out);

/* The signature of a function of len bytes from its base signature and,
 * for each address ljsig__base reported, in order, the base signature of
 * the function starting there or 0 (reached[0 .. n)).  0, or -EINVAL when
 * len < LJSIG_MIN_LEN. */
int ljsig__sig(uint64_t base, size_t len, const uint64_t *reached, size_t n, uint64_t *out);

/* The function that has signature hash in the data of version
 * (ljnames__ircall's list name; its clone suffix, such as .isra.0, left
 * out), or NULL. */
const char *ljsig__name(const char *version, uint64_t hash);

/* Whether there is signature data for version. */
int ljsig__known(const char *version);

#endif /* LJSNAP_SYMTAB_LJSIG_H */
