/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljdetect.h -- find LuaJIT in ELF files and live processes, and calibrate
 * its layout: the library libljdetect.a (unwind/detect/).
 *
 * Contract:
 *   in   an ELF file (by path: its contents decide, never its name), or a
 *        live pid; a memory source for the checks against live memory.
 *   out  struct lj_detect (one file) / struct lj_proc_detect (a process):
 *        whether LuaJIT is there, which family and build (GC64, dual-number),
 *        the runtime VM range, a struct lj_layout (unwind/ljlayout.h) with
 *        every offset either calibrated from the build's own code or taken
 *        from the built-in table, and a note saying how each was obtained.
 *   reads  files (libelf, symtab/elf.h), /proc/PID/maps, map_files and root,
 *        and process memory with process_vm_readv (livemem.h): the only
 *        part of unwind/ that touches live processes.  Never ptrace, never
 *        stops or writes to the target.
 *   uses symtab/ (ELF, .eh_frame) and unwind/ljlayout.h, memsrc.h; nothing
 *        above.  No global state: a struct lj_detect_cache, when the caller
 *        wants one, is shared explicitly; not thread-safe per cache.
 *   errors  negative errno (-ENOENT, -EACCES, -ENOEXEC, -EINVAL, -ENOMEM);
 *        garbage memory makes a check fail, never crashes.  x86_64 only.
 *
 * lj_detect__elf looks at one file's contents: exported symbols, the
 * interpreter's .eh_frame FDE, and byte patterns inside the interpreter
 * that encode DISPATCH-relative offsets.  It picks the closest built-in
 * layout (unwind/ljlayout.c), overrides it with every calibrated value, and
 * records how each value was obtained and where the code and the table
 * disagree.  lj_detect__process applies it to every file mapped by a
 * process (with a cache shared across processes) and returns the runtime
 * VM range, the layout and the mapping list.  lj_detect__validate_g checks
 * a candidate global_State against a memory source.
 */
#ifndef LJSNAP_LJDETECT_H
#define LJSNAP_LJDETECT_H

#include <stddef.h>
#include <stdint.h>
#include "unwind/ljlayout.h"
#include "unwind/memsrc.h"

#define LJ_DETECT_NOTE_MAX	32	/* notes and warnings kept (each) */
#define LJ_DETECT_NOTE_LEN	160
#define LJ_DETECT_BUILD_ID_MAX	64

/* Content markers found in the file (struct lj_detect.markers). */
#define LJ_DETECT_M_LUA_API	0x0001	/* lua_newstate / luaL_newstate / lua_gettop defined */
#define LJ_DETECT_M_LUAJIT_API	0x0002	/* luaJIT_setmode / luaJIT_profile_start defined */
#define LJ_DETECT_M_VM_FDE	0x0004	/* the interpreter's .eh_frame FDE */
#define LJ_DETECT_M_VM_SYMS	0x0008	/* lj_vm_asm_begin symbol */
#define LJ_DETECT_M_TARANTOOL	0x0010	/* tarantool_L or luaM_* symbols */
#define LJ_DETECT_M_OPENRESTY	0x0020	/* lua_getexdata / lua_setexdata */
#define LJ_DETECT_M_SYSPROF	0x0040	/* luaM_sysprof_* (Tarantool >= 2.10) */

/* What the interpreter code showed (struct lj_detect_code.have). */
#define LJ_DETECT_C_FUNCC	0x0001	/* BC_FUNCC vmstate store: vmstate_disp, funcc_state */
#define LJ_DETECT_C_CUR_L	0x0002	/* cur_L store after the C call */
#define LJ_DETECT_C_JLOOP	0x0004	/* BC_JLOOP: jtrace/jit_base/tmpbuf_L disps, t_mcode */
#define LJ_DETECT_C_FN_F	0x0008	/* BC_FUNCC prologue: offsetof(GCfuncC, f) */
#define LJ_DETECT_C_CF_L	0x0010	/* ... SAVE_L slot in the C frame */
#define LJ_DETECT_C_L_BASE	0x0020	/* ... L->base */
#define LJ_DETECT_C_L_TOP	0x0040	/* ... L->top */
#define LJ_DETECT_C_L_MAXSTACK	0x0080	/* ... L->maxstack */
#define LJ_DETECT_C_KSHORT	0x0100	/* BC_KSHORT: number mode (kshort_dual) */

struct lj_detect_code {
	uint32_t have;			/* LJ_DETECT_C_* */
	int gc64;			/* code shape: 1 GC64, 0 non-GC64, -1 unknown */
	uint64_t funcc_at;		/* link-time address of the vmstate store */
	unsigned funcc_hits;		/* stores matched (1 expected) */
	unsigned funcc_conflicts;	/* matches with another displacement or constant */
	int32_t vmstate_disp;		/* DISPATCH-relative g->vmstate */
	int32_t funcc_state;		/* stored vmstate: -2 (C) classic, -4 (CFUNC) tt >= 2.7 */
	int32_t cur_L_disp;		/* DISPATCH-relative g->cur_L */
	uint64_t jloop_at;
	unsigned jloop_hits, jloop_conflicts;
	int32_t jtrace_disp;		/* DISPATCH-relative J->trace */
	int32_t jit_base_disp;		/* DISPATCH-relative g->jit_base */
	int32_t tmpbuf_L_disp;		/* DISPATCH-relative g->tmpbuf.L */
	uint32_t t_mcode;		/* offsetof(GCtrace, mcode) */
	uint32_t fn_f, cf_l, l_base, l_top, l_maxstack;
	uint64_t kshort_at;		/* link-time address of BC_KSHORT's store */
	unsigned kshort_hits;		/* BC_KSHORT shapes matched (1 expected) */
	int kshort_dual;		/* 1: stores an int32 with the LJ_TISNUM tag */
};

/* Where the VM range came from. */
enum lj_detect_vm_src {
	LJ_DETECT_VM_NONE = 0,
	LJ_DETECT_VM_SYMS,		/* lj_vm_asm_begin + the sizes of the VM symbols */
	LJ_DETECT_VM_FDE,		/* the .eh_frame FDE */
};

struct lj_detect {
	int is_luajit;			/* 1: the file contains a LuaJIT */
	int gc64;			/* 1, 0, or -1 unknown */
	int dualnum;			/* LUAJIT_NUMMODE=2 (lua_pushinteger's code): 1, 0, -1 */
	enum lj_family family;
	uint32_t markers;		/* LJ_DETECT_M_* */
	uint16_t elf_type, machine;
	uint8_t build_id[LJ_DETECT_BUILD_ID_MAX];
	int build_id_len;		/* 0 when the file has none */

	/* Interpreter code, link-time addresses; *_off are file offsets. */
	enum lj_detect_vm_src vm_src;
	uint64_t vm_lo, vm_hi;		/* [lo, hi), lj_vm_ffi_call included when known */
	uint64_t vm_ffi;		/* lj_vm_ffi_call (0 if unknown) */
	uint64_t vm_lo_off;		/* file offset of vm_lo */
	uint64_t vm_exit_ret;		/* the exit handler's return address from its call
					 * of lj_trace_exit (native_lj__exit_ret), 0 if none */
	uint32_t fde_cfa;		/* C-frame size from the FDE (0 if no FDE) */
	unsigned nvm_fde;		/* VM-like FDEs (more than 1: several copies) */

	uint64_t sym_tarantool_L;	/* link-time address of tarantool_L (0 if none) */

	struct lj_detect_code code;
	int layout_ok;			/* layout filled in (family known) */
	unsigned mismatches;		/* calibrated values that differ from the table: the
					 * build is not one the table describes; prefer
					 * lj_detect__calibrate_live once a g is known */
	int live_calibrated;		/* lj_detect__calibrate_live succeeded */
	struct lj_layout layout;

	unsigned nnotes, nwarnings;	/* how each value was obtained / disagreements */
	char notes[LJ_DETECT_NOTE_MAX][LJ_DETECT_NOTE_LEN];
	char warnings[LJ_DETECT_NOTE_MAX][LJ_DETECT_NOTE_LEN];
};

/* Detect LuaJIT in one ELF file.  Returns 0 (out->is_luajit tells the
 * answer), or negative errno when the file cannot be read as ELF
 * (-ENOENT, -EACCES, -ENOEXEC for a truncated or non-ELF file). */
int lj_detect__elf(const char *path, struct lj_detect *out);

/* Scan interpreter code [code, code+len) at link-time address vaddr.
 * gc64: 1/0 if known, -1 to let the code shape decide.  Pure. */
void lj_detect__scan_code(const uint8_t *code, size_t len, uint64_t vaddr, int gc64,
			  struct lj_detect_code *out);

/* Append a note (warning = 0) or a warning to d (printf format). */
void lj_detect__note(struct lj_detect *d, int warning, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Check a candidate global_State address against GG_State's
 * self-references (mainthref, glref, gct of the main thread, strempty).
 * Returns 0 if valid, -EINVAL otherwise (unreadable memory included). */
int lj_detect__validate_g(const struct lj_layout *lay, const struct memsrc *ms, uint64_t g);

/* Find a global_State from words a thread saved (its registers, its user
 * stack copy) when the sample itself has none: C code called from the
 * interpreter or from a GC64 trace saves DISPATCH (r14) on its stack, and
 * the interpreter's C frame holds the running lua_State.  Each distinct
 * plausible word is tried as DISPATCH (g = word + disp2g) and as a
 * lua_State (g = its glref); the first g that validates wins.  At most
 * max_reads candidate checks (each a few reads through ms).  0 with *g,
 * -ENOENT (none found), -EINVAL, -ENOMEM. */
int lj_detect__g_from_words(const struct lj_layout *lay, const struct memsrc *ms,
			    const uint64_t *w, size_t n, uint32_t max_reads, uint64_t *g);

/* Which GG_OFS(g) (64, 80, 96 or 112) makes g validate: returns it, or
 * -EINVAL.  112/80 mean OpenResty's larger lua_State. */
int lj_detect__probe_gg_ofs_g(const struct lj_layout *lay, const struct memsrc *ms, uint64_t g);

/* Recalibrate d->layout from a live global_State g whose process maps the
 * VM at [vm_lo, vm_hi) (runtime addresses): GG_OFS(g) from the main thread,
 * disp2g from GG_State's dispatch table (its entries point at the VM's
 * handlers), then every DISPATCH-relative field from d->code, mainthref,
 * strempty and hookmask by their contents.  Needs only the lua_State prefix
 * and the object layouts from the table, so it fixes builds whose
 * global_State no table describes (Tarantool minor versions).  Writes
 * d->layout only when the result validates; notes say what changed.
 * Returns 0 or -EINVAL. */
int lj_detect__calibrate_live(struct lj_detect *d, const struct memsrc *ms, uint64_t g,
			      uint64_t vm_lo, uint64_t vm_hi);

/* The same from a DISPATCH value (r14 of a sample whose IP is inside the
 * interpreter): search the 16 KiB below it for the main lua_State + g pair
 * (L->glref == g, gct 6), closest first, and run lj_detect__calibrate_live
 * on up to 4 candidates.  For builds whose table-derived disp2g is wrong,
 * where no sample carries a g.  Returns 0 (*g_out set) or -EINVAL. */
int lj_detect__calibrate_dispatch(struct lj_detect *d, const struct memsrc *ms, uint64_t dispatch,
				  uint64_t vm_lo, uint64_t vm_hi, uint64_t *g_out);

/* -- Processes ----------------------------------------------------------- */

#define LJ_MAP_F_SHARED		0x1	/* 's' in /proc/PID/maps */
#define LJ_MAP_F_DELETED	0x2	/* path ends in " (deleted)" (stripped from path) */

struct lj_mapping {
	uint64_t start, end, offset;
	uint32_t prot;			/* PROT_READ | PROT_WRITE | PROT_EXEC */
	uint32_t flags;			/* LJ_MAP_F_* */
	uint64_t dev, inode;
	char *path;			/* NULL when anonymous; "[heap]", "[stack]", ... kept */
	uint8_t build_id[LJ_DETECT_BUILD_ID_MAX];
	int build_id_len;
};

struct lj_proc_detect {
	int pid;
	struct lj_mapping *maps;	/* every line of /proc/PID/maps */
	size_t nmaps;
	int found;			/* a LuaJIT interpreter is mapped */
	uint64_t g;			/* global_State, when the process exports one (tarantool_L) */
	unsigned nvm;			/* distinct LuaJIT files with their VM mapped */
	size_t vm_map;			/* index of the mapping that holds the VM */
	uint64_t load_bias;		/* runtime = load_bias + link-time address */
	uint64_t vm_lo, vm_hi;		/* runtime range of the interpreter proper (without
					 * lj_vm_ffi_call, which has CFI of its own) */
	uint64_t vm_exit_ret;		/* runtime det.vm_exit_ret, 0 if none */
	struct lj_layout layout;
	struct lj_detect det;		/* the file's detection (link-time addresses) */
};

/* Results per file, shared by every process the caller inspects. */
struct lj_detect_cache;
struct lj_detect_cache *lj_detect_cache__new(void);
void lj_detect_cache__delete(struct lj_detect_cache *cache);

/* Inspect a live process: parse /proc/PID/maps, detect LuaJIT in each
 * mapped file (through /proc/PID/map_files or /proc/PID/root so deleted
 * and namespaced files work), and fill out (release with
 * lj_proc_detect__exit).  When the file exports tarantool_L, follow it to
 * g (process_vm_readv) and run lj_detect__calibrate_live (out->g, notes in
 * out->det).  cache may be NULL.  Returns 0 (out->found tells
 * whether LuaJIT runs there), or negative errno when the maps cannot be
 * read (-ENOENT: no such process; -EACCES: run as root). */
int lj_detect__process(int pid, struct lj_detect_cache *cache, struct lj_proc_detect *out);
void lj_proc_detect__exit(struct lj_proc_detect *pd);

/* An executable mapping as a line of /proc/PID/maps shows it. */
struct lj_xmap {
	uint64_t start, end, inode;
	int named;			/* the line has a path (a file, [vdso], ...) */
};

/* The executable mappings of pid in address order, from one read of
 * /proc/PID/maps and nothing else (no file is stat'ed or opened): for a
 * caller that only wants to know whether they changed since
 * lj_detect__process.  *v is malloc'ed (NULL when there are none), *n
 * entries.  0, or negative errno as lj_detect__process. */
int lj_detect__xmaps(int pid, struct lj_xmap **v, size_t *n);

#endif /* LJSNAP_LJDETECT_H */
