/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * funcs.c -- function ranges from .eh_frame FDEs, named by symbols, by
 * LuaJIT's IR call table and interpreter, the signatures of their code
 * (funcs_sig.c), the call graph and the library tables, or (a copy of a
 * file) by the names saved with it.  See funcs.h.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/ehframe.h"
#include "symtab/elf.h"
#include "symtab/elfrel.h"
#include "symtab/funcs.h"
#include "symtab/funcs_int.h"
#include "symtab/ljcallgraph.h"
#include "symtab/ljlibcf.h"
#include "symtab/ljnames.h"
#include "symtab/vec.h"
#include "symtab/x86insn.h"

#define FUNCS_VM_MAX_CALLS	256	/* distinct interpreter call targets followed */
#define FUNCS_SAVED_ENTRY	12	/* a saved name's lo (u64) and size (u32) */

static const char *const func_how_names[FUNC__MAX] = {
	"unnamed", "symtab", "dynsym", "luajit",
};

/* Name of a naming source. */
const char *func_how__name(enum func_how how)
{
	return (unsigned)how < FUNC__MAX ? func_how_names[how] : "?";
}

/* Collect one FDE's range. */
static int funcs__fde_cb(const struct ehf_fde *fde, const struct ehf_cie *cie, void *arg)
{
	struct funcs *f = arg;
	int err;

	(void)cie;
	if (fde->pc_hi <= fde->pc_lo || !fde->pc_lo)
		return 0;
	if ((err = VEC_GROW(f->v, &f->cap, f->n + 1)) != 0)
		return err;
	f->v[f->n].lo = fde->pc_lo;
	f->v[f->n].hi = fde->pc_hi;
	f->v[f->n].name = NULL;
	f->v[f->n].how = FUNC_UNNAMED;
	f->n++;
	return 0;
}

/* Order ranges by start, the longer first. */
static int func_range__cmp(const void *a, const void *b)
{
	const struct func_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi > y->hi ? -1 : x->hi < y->hi;
}

/* Sort, drop duplicates, cut overlaps. */
static void funcs__sort(struct funcs *f)
{
	size_t i, w = 0;

	if (!f->n)
		return;
	qsort(f->v, f->n, sizeof(*f->v), func_range__cmp);
	for (i = 1; i < f->n; i++) {
		if (f->v[i].lo == f->v[w].lo)
			continue;
		if (f->v[w].hi > f->v[i].lo)
			f->v[w].hi = f->v[i].lo;
		f->v[++w] = f->v[i];
	}
	f->n = w + 1;
}

/* The range that starts exactly at addr, or NULL. */
static struct func_range *funcs__starting(struct funcs *f, uint64_t addr)
{
	struct func_range *r = (struct func_range *)funcs__at(f, addr);

	return r && r->lo == addr ? r : NULL;
}

/* A name from the IR call table, for a range no symbol names. */
static int funcs__lj_cb(uint64_t addr, const char *name, void *arg)
{
	struct func_range *r = funcs__starting(arg, addr);

	if (r && r->how == FUNC_UNNAMED) {
		r->name = name;
		r->how = FUNC_LUAJIT;
	}
	return 0;
}

/* The next direct branch of code c (len bytes at link-time address lo,
 * decoded from its first byte: x86insn.h), from the instruction at byte
 * *pos on, that lands on the first address of a range: call rel32, jmp
 * rel32 and, with more, jcc rel32 and a lea of the range's address (a
 * function's address taken).  The range (*kind: LJCG_EDGE_CALL, _JUMP or
 * _ADDR), or NULL at the end of the code, or at bytes that are not an
 * instruction x86insn.h knows (what follows them is not read). */
static struct func_range *funcs__next_branch(struct funcs *f, const uint8_t *c, size_t len,
					     uint64_t lo, int more, size_t *pos, uint8_t *kind)
{
	size_t j = *pos;

	while (j < len) {
		struct x86_insn x;
		struct func_range *r;
		size_t at = 0;
		uint8_t how = LJCG_EDGE_JUMP;
		int32_t rel;

		if (x86_insn__decode(c + j, len - j, &x) != 0)
			break;
		if (!x.vex && !x.map && (x.op == 0xe8 || x.op == 0xe9) && x.rel_size == 4) {
			at = x.rel_off;
			how = x.op == 0xe8 ? LJCG_EDGE_CALL : LJCG_EDGE_JUMP;
		} else if (more && !x.vex && x.map == 1 && (x.op & 0xf0) == 0x80) {
			at = x.rel_off;		/* jcc rel32 */
		} else if (more && !x.vex && !x.map && x.op == 0x8d && x.rip_off) {
			at = x.rip_off;		/* lea reg, [rip + disp32] */
			how = LJCG_EDGE_ADDR;
		}
		j += x.len;
		if (!at)
			continue;
		memcpy(&rel, c + j - x.len + at, 4);	/* little-endian host (x86_64) */
		if (!(r = funcs__starting(f, lo + j + (uint64_t)(int64_t)rel)))
			continue;
		*pos = j;
		*kind = how;
		return r;
	}
	*pos = len;
	return NULL;
}

/* The distinct targets (ranges outside the VM that start there) of the
 * call/jmp rel32 instructions of the VM's code, in the order of their first
 * appearance (the code decoded from its start: a list cut short by bytes
 * x86insn.h does not know fits no list of ljvmcall_names.h).  The count,
 * or -E2BIG. */
static int funcs__vm_targets(struct funcs *f, const uint8_t *c, size_t len, uint64_t lo,
			     size_t *seq)
{
	struct func_range *r;
	size_t pos = 0, k, n = 0;
	uint8_t kind;

	while ((r = funcs__next_branch(f, c, len, lo, 0, &pos, &kind)) != NULL) {
		if (r->lo >= lo && r->lo < lo + len)
			continue;	/* the VM's own code */
		for (k = 0; k < n && seq[k] != (size_t)(r - f->v); k++)
			;
		if (k < n)
			continue;
		if (n == FUNCS_VM_MAX_CALLS)
			return -E2BIG;
		seq[n++] = (size_t)(r - f->v);
	}
	return (int)n;
}

/* Names for the C functions the VM calls (ljnames__vmcalls), once the IR
 * call table said which LuaJIT source this is. */
static int funcs__name_vm(struct funcs *f, struct elf_file *ef, const struct ehframe *eh)
{
	size_t seq[FUNCS_VM_MAX_CALLS];
	const char *names[FUNCS_VM_MAX_CALLS];
	struct ehf_lj_vm vm;
	uint8_t *code = NULL;
	int n, i, err = 0;

	if (!f->lj_version || ehframe__find_lj_vm(eh, &vm) != 0 || vm.hi <= vm.lo ||
	    vm.hi - vm.lo > (64u << 20))
		goto out;
	if (!(code = malloc(vm.hi - vm.lo))) {
		err = -ENOMEM;
		goto out;
	}
	if (elf_file__read(ef, vm.lo, code, vm.hi - vm.lo) != 0)
		goto out;
	n = funcs__vm_targets(f, code, vm.hi - vm.lo, vm.lo, seq);
	if (n <= 0)
		goto out;
	for (i = 0; i < n; i++)
		names[i] = f->v[seq[i]].name;
	if (ljnames__vmcalls(f->lj_version, names, (size_t)n) != 0)
		goto out;
	f->lj_vmcalls = (size_t)n;
	for (i = 0; i < n; i++) {
		if (f->v[seq[i]].how != FUNC_UNNAMED || !names[i])
			continue;
		f->v[seq[i]].name = names[i];
		f->v[seq[i]].how = FUNC_LUAJIT;
	}
out:
	free(code);
	return err;
}

/* The direct calls, jumps and address references between the ranges of
 * a file, for the call graph (ljnames__callgraph's edges). */
struct funcs_calls {
	uint32_t *e;		/* n pairs (from, to) of range indices */
	uint8_t *kind;		/* per pair: LJCG_EDGE_*, ORed */
	size_t n, cap, kcap;
	size_t vm;		/* the interpreter's range, or LJCG_NO_RANGE */
};

static void funcs_calls__exit(struct funcs_calls *c)
{
	free(c->e);
	free(c->kind);
}

/* Add to c the direct calls, jumps and address references of range i
 * (code cd) to the first address of another range (not the VM's), and its
 * calls of its own first address (recursion), each target once, with what
 * makes each (LJCG_EDGE_*, ORed; funcs__next_branch). */
static int funcs__calls_of(struct funcs *f, size_t i, const uint8_t *cd, size_t len,
			   struct funcs_calls *c)
{
	struct func_range *r;
	size_t pos = 0, k, first = c->n;
	uint8_t how;

	while ((r = funcs__next_branch(f, cd, len, f->v[i].lo, 1, &pos, &how)) != NULL) {
		uint32_t to = (uint32_t)(r - f->v);

		if (to == c->vm || (to == i && how != LJCG_EDGE_CALL))
			continue;	/* a jump to itself may be a loop's */
		for (k = first; k < c->n && c->e[2 * k + 1] != to; k++)
			;
		if (k < c->n) {
			c->kind[k] |= how;
			continue;
		}
		if (VEC_GROW(c->e, &c->cap, 2 * (c->n + 1)) != 0 ||
		    VEC_GROW(c->kind, &c->kcap, c->n + 1) != 0)
			return -ENOMEM;
		c->e[2 * c->n] = (uint32_t)i;
		c->e[2 * c->n + 1] = to;
		c->kind[c->n] = how;
		c->n++;
	}
	return 0;
}

/* The calls between the ranges of f, read from the code of ef, into c
 * (zeroed first; funcs_calls__exit frees it).  0 or -ENOMEM. */
static int funcs__calls(struct funcs *f, struct elf_file *ef, const struct ehframe *eh,
			struct funcs_calls *c)
{
	uint8_t *code = NULL;
	size_t i, ccap = 0;
	struct ehf_lj_vm lv;
	struct func_range *r;
	int err = 0;

	memset(c, 0, sizeof(*c));
	c->vm = LJCG_NO_RANGE;
	if (ehframe__find_lj_vm(eh, &lv) == 0 && (r = funcs__starting(f, lv.lo)) != NULL)
		c->vm = (size_t)(r - f->v);
	for (i = 0; i < f->n && !err; i++) {
		size_t len = f->v[i].hi - f->v[i].lo;

		if (i == c->vm || len > (16u << 20))
			continue;
		if ((err = VEC_GROW(code, &ccap, len)) != 0)
			break;
		if (elf_file__read(ef, f->v[i].lo, code, len) == 0)
			err = funcs__calls_of(f, i, code, len, c);
	}
	free(code);
	return err;
}

/* Names from the calls c between the ranges of f (ljnames__callgraph),
 * once the IR call table said which LuaJIT source this is.  *fits set to 0
 * when there is a graph for it and the named ranges' calls contradict it. */
static int funcs__name_calls(struct funcs *f, const struct funcs_calls *c, int *fits)
{
	const char **names = NULL;
	size_t i, named = 0;
	int err = 0;

	*fits = 1;
	if (!f->lj_version || f->n > UINT32_MAX)
		goto out;
	if (!(names = malloc(f->n * sizeof(*names)))) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < f->n; i++)
		names[i] = f->v[i].name;
	err = ljnames__callgraph(f->lj_version, names, f->n, c->vm, c->e, c->kind, c->n, &named);
	*fits = err != -ENOENT || !ljnames__callgraph_known(f->lj_version);
	if (err == -ENOENT || err == -EINVAL)
		err = 0;	/* no graph for it, or it does not fit: nothing named */
	for (i = 0; !err && named && i < f->n; i++) {
		if (f->v[i].how != FUNC_UNNAMED || !names[i])
			continue;
		f->v[i].name = names[i];
		f->v[i].how = FUNC_LUAJIT;
		f->lj_cgnames++;
	}
out:
	free(names);
	return err;
}

/* What the library tables' callbacks work on: the ranges, and the names
 * they had before (sorted). */
struct funcs_cf {
	struct funcs *f;
	const char **sorted;
	size_t nsorted;
};

/* ljcf_ranges.at: the range starting at addr and its name. */
static int funcs__cf_at(void *arg, uint64_t addr, const char **name)
{
	struct func_range *r = funcs__starting(((struct funcs_cf *)arg)->f, addr);

	if (!r)
		return -ENOENT;
	*name = r->name;
	return 0;
}

/* Order names. */
static int funcs__name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ljcf_ranges.has: some range had name. */
static int funcs__cf_has(void *arg, const char *name)
{
	struct funcs_cf *c = arg;

	return bsearch(&name, c->sorted, c->nsorted, sizeof(*c->sorted), funcs__name_cmp) != NULL;
}

/* ljcf_ranges.set: a name for the range at addr. */
static int funcs__cf_set(void *arg, uint64_t addr, const char *name)
{
	struct funcs_cf *c = arg;
	struct func_range *r = funcs__starting(c->f, addr);

	if (r && r->how == FUNC_UNNAMED) {
		r->name = name;
		r->how = FUNC_LUAJIT;
		c->f->lj_cfnames++;
	}
	return 0;
}

/* Names from LuaJIT's library tables (ljnames__libcf), once the IR call
 * table said which LuaJIT source this is. */
static int funcs__name_libs(struct funcs *f, const struct elf_rels *rels)
{
	struct funcs_cf c = { f, NULL, 0 };
	const struct ljcf_ranges ops = { funcs__cf_at, funcs__cf_has, funcs__cf_set, &c };
	size_t i, named;
	int err;

	if (!f->lj_version)
		return 0;
	if (!(c.sorted = malloc((f->n + 1) * sizeof(*c.sorted))))
		return -ENOMEM;
	for (i = 0; i < f->n; i++)
		if (f->v[i].name)
			c.sorted[c.nsorted++] = f->v[i].name;
	qsort(c.sorted, c.nsorted, sizeof(*c.sorted), funcs__name_cmp);
	err = ljnames__libcf(rels, f->lj_version, &ops, &named);
	free(c.sorted);
	return err;
}

/* The ranges of an ELF file, named by its symbols. */
static int funcs__ranges(struct elf_file *ef, struct funcs **out, struct ehframe *eh)
{
	struct funcs *f = calloc(1, sizeof(*f));
	struct elf_section sec;
	struct elf_symbol s;
	const uint8_t *data;
	size_t size, i;
	int err = -ENOMEM;

	memset(eh, 0, sizeof(*eh));
	if (!f)
		goto out;
	err = 0;
	if (elf_file__section_data(ef, ".eh_frame", &sec, &data, &size) == 0) {
		ehframe__init(eh, data, size, sec.addr);
		if (elf_file__class(ef) == ELFCLASS32)
			eh->addr_size = 4;
		err = ehframe__foreach_fde(eh, funcs__fde_cb, f);
		if (err == -EINVAL)
			err = 0;	/* keep what came before the bad record */
	}
	if (err)
		goto out;
	funcs__sort(f);
	for (i = 0; i < f->n; i++) {
		if (elf_file__sym_at(ef, f->v[i].lo, &s) != 0 || s.value != f->v[i].lo)
			continue;
		f->v[i].name = s.name;
		f->v[i].how = s.dynamic && !elf_file__has_symtab(ef) ? FUNC_DYNSYM : FUNC_SYMTAB;
	}
out:
	if (err) {
		funcs__delete(f);
		f = NULL;
	}
	*out = f;
	return err;
}

/* Build the ranges of an ELF file. */
int funcs__new(struct elf_file *ef, struct funcs **out)
{
	struct elf_rels rels = { NULL, 0, 0 };
	struct ehframe eh;
	const char **bysig = NULL;	/* the names signatures gave */
	struct funcs_calls calls = { NULL, NULL, 0, 0, 0, LJCG_NO_RANGE };
	int fits = 1, err = funcs__ranges(ef, out, &eh);

	if (err)
		return err;
	/* The relocations, read once: the IR call table and the library
	 * tables are found in them. */
	err = elf_rels__read(ef, &rels);
	if (!err)
		err = ljnames__ircall(ef, &rels, funcs__lj_cb, *out, &(*out)->lj_version);
	if (err == -ENOENT)
		err = 0;
	if (!err && (*out)->n)
		err = funcs__name_vm(*out, ef, &eh);
	if (!err && (*out)->n && !(bysig = calloc((*out)->n, sizeof(*bysig))))
		err = -ENOMEM;
	if (!err && (*out)->n)
		err = funcs__name_sigs(*out, ef, bysig);
	if (!err && (*out)->n && (*out)->lj_version && (*out)->n <= UINT32_MAX)
		err = funcs__calls(*out, ef, &eh, &calls);
	if (!err && (*out)->n)
		err = funcs__name_calls(*out, &calls, &fits);
	if (!err && !fits && (*out)->lj_signames) {
		/* the named calls contradict LuaJIT's call graph: a signature's
		 * name may be wrong, so try without them; if the graph does not
		 * fit without them either, they were not the cause: keep them */
		funcs__set_names(*out, bysig, 0);
		err = funcs__name_calls(*out, &calls, &fits);
		if (!err && !fits)
			funcs__set_names(*out, bysig, 1);
	}
	if (!err && (*out)->n)	/* after the call graph: its names are the anchors */
		err = funcs__name_libs(*out, &rels);
	elf_rels__exit(&rels);
	funcs_calls__exit(&calls);
	free(bysig);
	if (err) {
		funcs__delete(*out);
		*out = NULL;
	}
	return err;
}

/* An n-byte little-endian integer. */
static uint64_t funcs__le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* Walk saved names (funcs.h): cb(lo, size, name) for each; 0 or -EINVAL. */
static int funcs__saved_walk(const uint8_t *s, size_t len, const char **version,
			     uint32_t *vmcalls,
			     void (*cb)(struct funcs *f, uint64_t lo, uint32_t size, const char *name),
			     struct funcs *f)
{
	const uint8_t *end, *z;
	uint64_t lo;
	uint32_t size;

	if (!s || !(z = memchr(s, 0, len)) || (size_t)(s + len - z - 1) < 4)
		return -EINVAL;
	end = s + len;
	*version = (const char *)s;
	*vmcalls = (uint32_t)funcs__le(z + 1, 4);
	for (s = z + 5; s < end; s = z + 1) {
		if ((size_t)(end - s) < FUNCS_SAVED_ENTRY + 2 ||
		    !(z = memchr(s + FUNCS_SAVED_ENTRY, 0, (size_t)(end - s) - FUNCS_SAVED_ENTRY)) ||
		    z == s + FUNCS_SAVED_ENTRY)
			return -EINVAL;
		lo = funcs__le(s, 8);
		size = (uint32_t)funcs__le(s + 8, 4);
		if (!size || lo + size < lo)
			return -EINVAL;
		if (cb)
			cb(f, lo, size, (const char *)s + FUNCS_SAVED_ENTRY);
	}
	return 0;
}

/* Check saved names; see funcs.h. */
int funcs__saved_check(const uint8_t *saved, size_t len)
{
	const char *version;
	uint32_t vmcalls;

	return funcs__saved_walk(saved, len, &version, &vmcalls, NULL, NULL);
}

/* A saved name for the range that is exactly [lo, lo + size). */
static void funcs__saved_cb(struct funcs *f, uint64_t lo, uint32_t size, const char *name)
{
	struct func_range *r = funcs__starting(f, lo);

	if (r && r->hi - r->lo == size && r->how == FUNC_UNNAMED) {
		r->name = name;
		r->how = FUNC_LUAJIT;
	}
}

/* The ranges of a copy, named by the saved names; see funcs.h. */
int funcs__new_saved(struct elf_file *ef, const uint8_t *saved, size_t len, struct funcs **out)
{
	const char *version;
	struct ehframe eh;
	uint32_t vmcalls;
	int err = funcs__ranges(ef, out, &eh);

	if (err || !len)
		return err;
	err = -ENOMEM;
	if (!((*out)->saved = malloc(len)))
		goto out;
	memcpy((*out)->saved, saved, len);
	err = funcs__saved_walk((const uint8_t *)(*out)->saved, len, &version, &vmcalls,
				funcs__saved_cb, *out);
	if (err)
		goto out;
	(*out)->lj_version = version[0] ? version : NULL;
	(*out)->lj_vmcalls = vmcalls;
out:
	if (err) {
		funcs__delete(*out);
		*out = NULL;
	}
	return err;
}

/* Append n bytes to a growing buffer: p's, or (p NULL) v little-endian. */
static int funcs__put(uint8_t **b, size_t *len, size_t *cap, const void *p, uint64_t v,
		      size_t n)
{
	size_t i;

	if (VEC_GROW(*b, cap, *len + n) != 0)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		(*b)[*len + i] = p ? ((const uint8_t *)p)[i] : (uint8_t)(v >> (8 * i));
	*len += n;
	return 0;
}

/* Save what the recovery found; see funcs.h. */
int funcs__save(const struct funcs *f, uint8_t **out, size_t *len)
{
	const char *version = f->lj_version ? f->lj_version : "";
	uint8_t *b = NULL;
	size_t cap = 0, i;
	int err = 0;

	*out = NULL;
	*len = 0;
	if (!f->lj_version)
		return 0;	/* no list fitted: nothing was recovered */
	err = funcs__put(&b, len, &cap, version, 0, strlen(version) + 1);
	if (!err)
		err = funcs__put(&b, len, &cap, NULL, f->lj_vmcalls, 4);
	for (i = 0; i < f->n && !err; i++) {
		if (f->v[i].how != FUNC_LUAJIT || f->v[i].hi - f->v[i].lo > UINT32_MAX)
			continue;
		err = funcs__put(&b, len, &cap, NULL, f->v[i].lo, 8);
		if (!err)
			err = funcs__put(&b, len, &cap, NULL, f->v[i].hi - f->v[i].lo, 4);
		if (!err)
			err = funcs__put(&b, len, &cap, f->v[i].name, 0, strlen(f->v[i].name) + 1);
	}
	if (err) {
		free(b);
		*len = 0;
		return err;
	}
	*out = b;
	return 0;
}

/* Free the ranges. */
void funcs__delete(struct funcs *f)
{
	if (!f)
		return;
	free(f->v);
	free(f->saved);
	free(f);
}

/* The range containing vaddr. */
const struct func_range *funcs__at(const struct funcs *f, uint64_t vaddr)
{
	size_t lo = 0, hi = f->n;

	/* Upper bound: the first range that starts after vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->v[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || vaddr >= f->v[lo - 1].hi)
		return NULL;
	return &f->v[lo - 1];
}

/* All ranges. */
const struct func_range *funcs__all(const struct funcs *f, size_t *n)
{
	*n = f->n;
	return f->v;
}

/* The IR call table's version. */
const char *funcs__lj_version(const struct funcs *f)
{
	return f->lj_version;
}

/* Ranges named by signatures (0 for a copy's saved names). */
size_t funcs__lj_signames(const struct funcs *f)
{
	return f->lj_signames;
}

/* Ranges named from the library tables (0 for a copy's saved names). */
size_t funcs__lj_cfnames(const struct funcs *f)
{
	return f->lj_cfnames;
}

/* Ranges named from the call graph (0 for a copy's saved names). */
size_t funcs__lj_cgnames(const struct funcs *f)
{
	return f->lj_cgnames;
}

/* Interpreter call targets named from ljvmcall_names.h's list. */
size_t funcs__lj_vmcalls(const struct funcs *f)
{
	return f->lj_vmcalls;
}
