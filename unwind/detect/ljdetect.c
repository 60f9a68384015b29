/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljdetect.c -- is this ELF file a LuaJIT, which build, and with which
 * layout?  Also the live validation of a global_State candidate.
 *
 * Order of evidence: exported symbols (markers), lua_gettop's code (GC64),
 * the VM range (symbols, else the .eh_frame FDE), the interpreter's code
 * patterns (ljdetect_code.c), then a score against each built-in layout.
 * Everything calibrated from code overrides the table; every value says in
 * out->notes how it was obtained, and out->warnings lists disagreements.
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/detect/ljdetect.h"
#include "symtab/ehframe.h"
#include "symtab/elf.h"
#include "unwind/native.h"

#define LJD_VM_MAX	(4u << 20)	/* largest interpreter we read (real ones: ~16 KiB) */
#define LJD_VM_SYM_GAP	64		/* alignment padding allowed between VM symbols */

/* -- Notes --------------------------------------------------------------- */

/* Append a note (or a warning) to d; dropped when the array is full. */
void lj_detect__note(struct lj_detect *d, int warning, const char *fmt, ...)
{
	char (*arr)[LJ_DETECT_NOTE_LEN] = warning ? d->warnings : d->notes;
	unsigned *n = warning ? &d->nwarnings : &d->nnotes;
	va_list ap;

	if (*n >= LJ_DETECT_NOTE_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(arr[*n], LJ_DETECT_NOTE_LEN, fmt, ap);
	va_end(ap);
	(*n)++;
}

#define ljd__note(d, ...) lj_detect__note((d), 0, __VA_ARGS__)
#define ljd__warn(d, ...) lj_detect__note((d), 1, __VA_ARGS__)

/* -- Markers ------------------------------------------------------------- */

struct ljd_prefix_ctx {
	uint32_t markers;
};

/* foreach callback: Tarantool's luaM_* API (and its sysprof part). */
static int ljd__prefix_cb(const struct elf_symbol *s, void *arg)
{
	struct ljd_prefix_ctx *x = arg;

	if (strncmp(s->name, "luaM_", 5) == 0 && (s->type == STT_FUNC || s->type == STT_OBJECT)) {
		x->markers |= LJ_DETECT_M_TARANTOOL;
		if (strncmp(s->name, "luaM_sysprof_", 13) == 0)
			x->markers |= LJ_DETECT_M_SYSPROF;
	}
	return 0;
}

/* Is name a defined symbol? */
static int ljd__has(struct elf_file *ef, const char *name)
{
	struct elf_symbol s;

	return elf_file__sym_lookup(ef, name, &s) == 0;
}

/* Collect the content markers from the symbol tables. */
static void ljd__markers(struct elf_file *ef, struct lj_detect *d)
{
	struct ljd_prefix_ctx x = { 0 };
	struct elf_symbol s;

	if (ljd__has(ef, "lua_newstate") || ljd__has(ef, "luaL_newstate") || ljd__has(ef, "lua_gettop"))
		d->markers |= LJ_DETECT_M_LUA_API;
	if (ljd__has(ef, "luaJIT_setmode") || ljd__has(ef, "luaJIT_profile_start"))
		d->markers |= LJ_DETECT_M_LUAJIT_API;
	if (ljd__has(ef, "lj_vm_asm_begin"))
		d->markers |= LJ_DETECT_M_VM_SYMS;
	if (elf_file__sym_lookup(ef, "tarantool_L", &s) == 0 && s.type == STT_OBJECT) {
		d->markers |= LJ_DETECT_M_TARANTOOL;
		d->sym_tarantool_L = s.value;
	}
	if (ljd__has(ef, "lua_getexdata") || ljd__has(ef, "lua_setexdata"))
		d->markers |= LJ_DETECT_M_OPENRESTY;
	elf_file__sym_foreach(ef, ljd__prefix_cb, &x);
	d->markers |= x.markers;
}

/* -- GC64 from lua_gettop ------------------------------------------------ */

/* mov top(%rdi),%rax; sub base(%rdi),%rax: (0x28, 0x20) GC64, (0x18, 0x10) not. */
static int ljd__gettop_gc64(struct elf_file *ef, struct lj_detect *d)
{
	struct elf_symbol s;
	uint8_t b[16];
	size_t o = 0;

	if (elf_file__sym_lookup(ef, "lua_gettop", &s) != 0 || s.type != STT_FUNC)
		return -1;
	if (elf_file__read(ef, s.value, b, sizeof(b)) != 0)
		return -1;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		o = 4;		/* endbr64 */
	if (b[o] != 0x48 || b[o + 1] != 0x8b || b[o + 2] != 0x47 ||
	    b[o + 4] != 0x48 || b[o + 5] != 0x2b || b[o + 6] != 0x47)
		return -1;
	if (b[o + 3] == 0x28 && b[o + 7] == 0x20) {
		ljd__note(d, "GC64 from lua_gettop at %#lx: L->top 0x28, L->base 0x20",
			  (unsigned long)s.value);
		return 1;
	}
	if (b[o + 3] == 0x18 && b[o + 7] == 0x10) {
		ljd__note(d, "non-GC64 from lua_gettop at %#lx: L->top 0x18, L->base 0x10",
			  (unsigned long)s.value);
		return 0;
	}
	return -1;
}

/* -- Number mode from lua_pushinteger ------------------------------------ */

#define LJD_PUSHINT_MAX	160	/* bytes of lua_pushinteger searched */

/*
 * lua_pushinteger is setint64V(L->top, n).  Single-number builds store a
 * double (cvtsi2sd, no tag); dual-number builds (LUAJIT_NUMMODE=2) store an
 * int32 with the LJ_TISNUM tag written as the slot's high word:
 * movl $0xfff90000, 4(%rax) in GC64 (~13 << 47), $0xfffeffff non-GC64.
 * Returns 1 dual-number, 0 single-number, -1 unknown.
 */
static int ljd__dualnum(struct elf_file *ef, struct lj_detect *d)
{
	static const uint8_t tag64[] = { 0x00, 0x00, 0xf9, 0xff }, tag32[] = { 0xff, 0xff, 0xfe, 0xff };
	static const uint8_t cvt[] = { 0xf2, 0x48, 0x0f, 0x2a };	/* cvtsi2sd %r64, %xmm */
	const uint8_t *tag = d->gc64 ? tag64 : tag32;
	uint8_t b[LJD_PUSHINT_MAX];
	struct elf_symbol s;
	size_t n, i;
	int have_cvt = 0;

	if (d->gc64 < 0 || elf_file__sym_lookup(ef, "lua_pushinteger", &s) != 0 || s.type != STT_FUNC)
		return -1;
	n = s.size && s.size < sizeof(b) ? (size_t)s.size : sizeof(b);
	while (n >= 16 && elf_file__read(ef, s.value, b, n) != 0)
		n /= 2;		/* the function may end the section */
	if (n < 16)
		return -1;
	for (i = 0; i + 4 <= n; i++) {
		if (memcmp(b + i, tag, 4) == 0) {
			ljd__note(d, "dual-number (LUAJIT_NUMMODE=2): lua_pushinteger at %#lx stores the "
				  "LJ_TISNUM tag %#x", (unsigned long)s.value, d->gc64 ? 0xfff90000u : 0xfffeffffu);
			return 1;
		}
		if (memcmp(b + i, cvt, 4) == 0)
			have_cvt = 1;
	}
	if (have_cvt) {
		ljd__note(d, "single-number: lua_pushinteger at %#lx converts to a double and stores "
			  "no integer tag", (unsigned long)s.value);
		return 0;
	}
	return -1;
}

/* -- VM range ------------------------------------------------------------ */

struct ljd_vmsym_ctx {
	uint64_t begin, end, ffi;
};

/* Is this one of the interpreter's own symbols (buildvm's lj_vm.o)?  Not
 * lj_vmevent_* or lj_vmmath's C functions that the linker may put next to it. */
static int ljd__is_vm_sym(const char *n)
{
	static const char *const pre[] = {
		"lj_BC_", "lj_ff_", "lj_fff_", "lj_vm_", "lj_vmeta_", "lj_cont_", "lj_assert_",
	};
	size_t i;

	for (i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (strncmp(n, pre[i], strlen(pre[i])) == 0)
			return 1;
	return 0;
}

/* foreach callback: extend [begin, end) over contiguous VM symbols. */
static int ljd__vmsym_cb(const struct elf_symbol *s, void *arg)
{
	struct ljd_vmsym_ctx *x = arg;

	if (s->value < x->begin)
		return 0;
	if (s->value > x->end + LJD_VM_SYM_GAP)
		return 1;	/* past a gap: the VM object ended */
	if (!ljd__is_vm_sym(s->name)) {
		if (s->value >= x->end && (s->type == STT_FUNC || s->type == STT_OBJECT))
			return 1;
		return 0;
	}
	if (s->value + s->size > x->end)
		x->end = s->value + s->size;
	if (strcmp(s->name, "lj_vm_ffi_call") == 0)
		x->ffi = s->value;
	return 0;
}

/* VM range from symbols and/or the FDE; cross-check when both exist. */
static void ljd__vm_range(struct elf_file *ef, struct lj_detect *d)
{
	struct ljd_vmsym_ctx x = { 0, 0, 0 };
	struct elf_section sec;
	struct ehf_lj_vm vm;
	struct ehframe eh;
	struct elf_symbol s;
	const uint8_t *data;
	size_t size;
	int have_fde = 0;

	if (elf_file__section_data(ef, ".eh_frame", &sec, &data, &size) == 0) {
		ehframe__init(&eh, data, size, sec.addr);
		if (elf_file__class(ef) == ELFCLASS32)
			eh.addr_size = 4;
		if (ehframe__find_lj_vm(&eh, &vm) == 0) {
			have_fde = 1;
			d->markers |= LJ_DETECT_M_VM_FDE;
			d->fde_cfa = vm.cfa_offset;
			d->nvm_fde = vm.ncandidates;
		}
	}
	if (elf_file__sym_lookup(ef, "lj_vm_asm_begin", &s) == 0) {
		x.begin = x.end = s.value;
		elf_file__sym_foreach(ef, ljd__vmsym_cb, &x);
	}
	if (x.end > x.begin) {
		d->vm_src = LJ_DETECT_VM_SYMS;
		d->vm_lo = x.begin;
		d->vm_hi = x.end;
		d->vm_ffi = x.ffi;
		ljd__note(d, "VM range %#lx-%#lx from lj_vm_asm_begin + VM symbol sizes",
			  (unsigned long)d->vm_lo, (unsigned long)d->vm_hi);
		if (have_fde && (vm.lo != d->vm_lo || vm.hi != d->vm_hi))
			ljd__warn(d, "VM symbols give %#lx-%#lx but the .eh_frame FDE gives %#lx-%#lx",
				  (unsigned long)d->vm_lo, (unsigned long)d->vm_hi,
				  (unsigned long)vm.lo, (unsigned long)vm.hi);
	} else if (have_fde) {
		d->vm_src = LJ_DETECT_VM_FDE;
		d->vm_lo = vm.lo;
		d->vm_hi = vm.hi;
		d->vm_ffi = vm.has_ffi ? vm.main_hi : 0;
		ljd__note(d, "VM range %#lx-%#lx from .eh_frame FDE at section offset %#lx%s",
			  (unsigned long)vm.lo, (unsigned long)vm.hi, (unsigned long)vm.fde_offset,
			  vm.has_ffi ? " plus the lj_vm_ffi_call FDE" : " (no lj_vm_ffi_call FDE)");
	}
	if (have_fde) {
		ljd__note(d, "C frame size %u from the VM FDE's def_cfa_offset%s", vm.cfa_offset,
			  vm.no_unwind ? " (r12/r13 saved: NO_UNWIND build)" : "");
		if (vm.ncandidates > 1)
			ljd__warn(d, "%u interpreter FDEs in .eh_frame: several LuaJIT copies, using the largest",
				  vm.ncandidates);
	}
	if (d->vm_src != LJ_DETECT_VM_NONE &&
	    elf_file__vaddr_to_offset(ef, d->vm_lo, &d->vm_lo_off) != 0) {
		ljd__warn(d, "VM start %#lx is not file-backed: ignoring the VM range",
			  (unsigned long)d->vm_lo);
		d->vm_src = LJ_DETECT_VM_NONE;
	}
}

/* -- Family -------------------------------------------------------------- */

/* Score one built-in layout against the calibration and markers. */
static int ljd__score(const struct lj_detect *d, const struct lj_layout *t)
{
	const struct lj_detect_code *c = &d->code;
	int tt = t->family == LJ_FAMILY_TARANTOOL_26 || t->family == LJ_FAMILY_TARANTOOL_HEAD;
	int sc = 0;

	if (c->have & LJ_DETECT_C_FUNCC) {
		int32_t want = t->vmst.cfunc ? t->vmst.cfunc : t->vmst.c;
		int32_t disp2g = c->vmstate_disp - (int32_t)t->g_vmstate;

		sc += c->funcc_state == want ? 8 : -20;
		if (disp2g == t->disp2g)
			sc += 3;
		if ((c->have & LJ_DETECT_C_CUR_L) &&
		    c->cur_L_disp - c->vmstate_disp == (int32_t)t->g_cur_L - (int32_t)t->g_vmstate)
			sc += 8;
		if (c->have & LJ_DETECT_C_JLOOP) {
			if (c->jit_base_disp - c->vmstate_disp ==
			    (int32_t)t->g_jit_base - (int32_t)t->g_vmstate)
				sc += 2;
			if (c->tmpbuf_L_disp - c->vmstate_disp ==
			    (int32_t)t->g_tmpbuf_L - (int32_t)t->g_vmstate)
				sc += 4;
			if (c->jtrace_disp - disp2g - (int32_t)t->j_trace == t->g2j)
				sc += 2;
		}
	}
	if (d->fde_cfa)
		sc += d->fde_cfa == t->cf_size ? 4 : -8;
	if (d->markers & LJ_DETECT_M_TARANTOOL)
		sc += tt ? 20 : -20;
	else if (tt)
		sc -= 5;
	if (d->markers & LJ_DETECT_M_SYSPROF)
		sc += t->family == LJ_FAMILY_TARANTOOL_HEAD ? 5 : -5;
	if (d->markers & LJ_DETECT_M_OPENRESTY)
		sc += t->family == LJ_FAMILY_OPENRESTY ? 20 : -20;
	else if (t->family == LJ_FAMILY_OPENRESTY)
		sc -= 2;
	return sc;
}

/* Pick the family whose built-in layout best explains the evidence. */
static void ljd__family(struct lj_detect *d)
{
	int best = -1000, second = -1000, f;
	enum lj_family bf = LJ_FAMILY_UNKNOWN, sf = LJ_FAMILY_UNKNOWN;

	for (f = LJ_FAMILY_UPSTREAM; f < LJ_FAMILY__MAX; f++) {
		const struct lj_layout *t = lj_layout__builtin((enum lj_family)f, d->gc64);
		int sc;

		if (!t)
			continue;
		sc = ljd__score(d, t);
		if (sc > best) {
			second = best;
			sf = bf;
			best = sc;
			bf = (enum lj_family)f;
		} else if (sc > second) {
			second = sc;
			sf = (enum lj_family)f;
		}
	}
	d->family = bf;
	ljd__note(d, "family %s (score %d; next %s %d) from %s%s%s%s",
		  lj_layout__family_name(bf), best, lj_layout__family_name(sf), second,
		  (d->code.have & LJ_DETECT_C_FUNCC) ? "interpreter code offsets" : "markers only",
		  (d->markers & LJ_DETECT_M_TARANTOOL) ? ", Tarantool symbols" : "",
		  (d->markers & LJ_DETECT_M_OPENRESTY) ? ", lua_getexdata" : "",
		  d->fde_cfa ? ", FDE C-frame size" : "");
	if (best == second)
		ljd__warn(d, "family is ambiguous between %s and %s: offsets may be wrong",
			  lj_layout__family_name(bf), lj_layout__family_name(sf));
}

/* -- Layout -------------------------------------------------------------- */

/* Override one field with a calibrated value, warning when the table differs. */
static void ljd__set(struct lj_detect *d, uint32_t *field, uint32_t val, const char *name,
		     const char *how)
{
	if (*field != val) {
		ljd__warn(d, "%s: code says %u, %s table says %u (using the code)", name, val,
			  lj_layout__family_name(d->family), *field);
		d->mismatches++;
	}
	*field = val;
	ljd__note(d, "%s %u from %s", name, val, how);
}

/* Table for the family, overridden by every calibrated value. */
static void ljd__layout(struct lj_detect *d)
{
	const struct lj_detect_code *c = &d->code;
	const struct lj_layout *t = lj_layout__builtin(d->family, d->gc64);
	struct lj_layout *l = &d->layout;

	if (!t)
		return;
	*l = *t;
	d->layout_ok = 1;
	ljd__note(d, "struct offsets from the built-in %s %s table", lj_layout__family_name(d->family),
		  d->gc64 ? "GC64" : "non-GC64");
	if (c->have & LJ_DETECT_C_FUNCC) {
		l->disp2g = c->vmstate_disp - (int32_t)l->g_vmstate;
		ljd__note(d, "g_vmstate disp %d from BC_FUNCC store at %#lx (file %#lx): disp2g %d",
			  c->vmstate_disp, (unsigned long)c->funcc_at,
			  (unsigned long)(c->funcc_at - d->vm_lo + d->vm_lo_off), l->disp2g);
		if (l->disp2g != t->disp2g) {
			ljd__warn(d, "disp2g %d differs from the %s table's GG_DISP2G %d (build options?)",
				  l->disp2g, lj_layout__family_name(d->family), t->disp2g);
			d->mismatches++;
		}
		if (c->have & LJ_DETECT_C_CUR_L)
			ljd__set(d, &l->g_cur_L, (uint32_t)(c->cur_L_disp - l->disp2g), "g_cur_L",
				 "the cur_L store after BC_FUNCC's call");
	} else {
		ljd__warn(d, "BC_FUNCC pattern not found: disp2g %d is the table's guess", l->disp2g);
	}
	if (c->funcc_conflicts)
		ljd__warn(d, "%u BC_FUNCC-like stores disagree with the first one", c->funcc_conflicts);
	if ((c->have & LJ_DETECT_C_JLOOP) && (c->have & LJ_DETECT_C_FUNCC)) {
		l->g2j = c->jtrace_disp - l->disp2g - (int32_t)l->j_trace;
		ljd__note(d, "g2j %d from BC_JLOOP's J->trace disp %d at %#lx", l->g2j, c->jtrace_disp,
			  (unsigned long)c->jloop_at);
		if (l->g2j != t->g2j) {
			ljd__warn(d, "g2j %d differs from the table's %d", l->g2j, t->g2j);
			d->mismatches++;
		}
		ljd__set(d, &l->g_jit_base, (uint32_t)(c->jit_base_disp - l->disp2g), "g_jit_base",
			 "BC_JLOOP's jit_base store");
		ljd__set(d, &l->g_tmpbuf_L, (uint32_t)(c->tmpbuf_L_disp - l->disp2g), "g_tmpbuf_L",
			 "BC_JLOOP's tmpbuf.L store");
		ljd__set(d, &l->t_mcode, c->t_mcode, "t_mcode", "BC_JLOOP's trace->mcode load");
	} else {
		ljd__warn(d, "BC_JLOOP pattern not found (JIT disabled?): g2j %d is the table's guess",
			  l->g2j);
	}
	if (c->jloop_conflicts)
		ljd__warn(d, "%u BC_JLOOP-like sequences disagree with the first one", c->jloop_conflicts);
	if (c->have & LJ_DETECT_C_FN_F)
		ljd__set(d, &l->fn_f, c->fn_f, "fn_f", "BC_FUNCC prologue");
	if (c->have & LJ_DETECT_C_CF_L)
		ljd__set(d, &l->cf_l, c->cf_l, "cf_l", "BC_FUNCC prologue (SAVE_L)");
	if (c->have & LJ_DETECT_C_L_BASE)
		ljd__set(d, &l->l_base, c->l_base, "l_base", "BC_FUNCC prologue");
	if (c->have & LJ_DETECT_C_L_TOP)
		ljd__set(d, &l->l_top, c->l_top, "l_top", "BC_FUNCC prologue");
	if (c->have & LJ_DETECT_C_L_MAXSTACK)
		ljd__set(d, &l->l_maxstack, c->l_maxstack, "l_maxstack", "BC_FUNCC prologue");
	if (d->fde_cfa)
		ljd__set(d, &l->cf_size, d->fde_cfa, "cf_size", "the VM FDE");
}

/* -- Entry point --------------------------------------------------------- */

/* Where the trace exit handler returns from lj_trace_exit, found in the
 * interpreter proper's code buf (the VM bytes from vm_lo; unwind/native.h
 * native_lj__exit_ret).  The recorder saves it with the process: a
 * capture's copy of the file holds no code. */
static void ljd__vm_exit(const uint8_t *buf, struct lj_detect *d)
{
	uint64_t hi = d->vm_ffi > d->vm_lo && d->vm_ffi < d->vm_hi ? d->vm_ffi : d->vm_hi;

	d->vm_exit_ret = native_lj__exit_ret(buf, hi - d->vm_lo, d->vm_lo);
	if (d->vm_exit_ret)
		ljd__note(d, "trace exit handler returns from lj_trace_exit at %#lx",
			  (unsigned long)d->vm_exit_ret);
}

/* Read the VM bytes and run the code scans. */
static void ljd__calibrate(struct elf_file *ef, struct lj_detect *d)
{
	uint64_t len = d->vm_hi - d->vm_lo;
	uint8_t *buf;

	if (d->vm_src == LJ_DETECT_VM_NONE || len == 0 || len > LJD_VM_MAX) {
		lj_detect__scan_code(NULL, 0, 0, -1, &d->code);
		return;
	}
	buf = malloc(len);
	if (!buf || elf_file__read(ef, d->vm_lo, buf, len) != 0) {
		ljd__warn(d, "cannot read the VM bytes %#lx-%#lx", (unsigned long)d->vm_lo,
			  (unsigned long)d->vm_hi);
		lj_detect__scan_code(NULL, 0, 0, -1, &d->code);
	} else {
		lj_detect__scan_code(buf, len, d->vm_lo, d->gc64, &d->code);
		ljd__vm_exit(buf, d);
	}
	free(buf);
}

/* Detect and calibrate LuaJIT in one ELF file. */
int lj_detect__elf(const char *path, struct lj_detect *out)
{
	struct elf_file *ef = NULL;
	int err, bl;

	memset(out, 0, sizeof(*out));
	out->gc64 = -1;
	out->dualnum = -1;
	err = elf_file__open(path, &ef);
	if (err)
		goto out;
	out->elf_type = elf_file__type(ef);
	out->machine = elf_file__machine(ef);
	bl = elf_file__build_id(ef, out->build_id, sizeof(out->build_id));
	out->build_id_len = bl > (int)sizeof(out->build_id) ? (int)sizeof(out->build_id) : bl > 0 ? bl : 0;
	if (out->elf_type != ET_EXEC && out->elf_type != ET_DYN)
		goto out;	/* objects and core files are never mapped code */
	ljd__markers(ef, out);
	ljd__vm_range(ef, out);
	out->is_luajit = (out->markers & (LJ_DETECT_M_VM_FDE | LJ_DETECT_M_VM_SYMS)) ||
			 ((out->markers & LJ_DETECT_M_LUAJIT_API) && (out->markers & LJ_DETECT_M_LUA_API));
	if (!out->is_luajit)
		goto out;
	if (out->machine != EM_X86_64 || elf_file__class(ef) != ELFCLASS64) {
		ljd__warn(out, "LuaJIT for machine %u: only x86_64 is supported", out->machine);
		goto out;
	}
	out->gc64 = ljd__gettop_gc64(ef, out);
	ljd__calibrate(ef, out);
	if (out->gc64 < 0 && out->code.gc64 >= 0) {
		out->gc64 = out->code.gc64;
		ljd__note(out, "%s from the interpreter's code shape", out->gc64 ? "GC64" : "non-GC64");
	} else if (out->gc64 >= 0 && out->code.gc64 >= 0 && out->gc64 != out->code.gc64) {
		ljd__warn(out, "lua_gettop says %s but the interpreter code looks %s",
			  out->gc64 ? "GC64" : "non-GC64", out->code.gc64 ? "GC64" : "non-GC64");
	}
	if (out->gc64 < 0) {
		ljd__warn(out, "cannot tell GC64 from non-GC64: no lua_gettop and no interpreter pattern");
		goto out;
	}
	if (out->vm_src == LJ_DETECT_VM_NONE)
		ljd__warn(out, "LuaJIT API present but no interpreter found (no VM FDE or symbols)");
	out->dualnum = ljd__dualnum(ef, out);
	if (out->code.have & LJ_DETECT_C_KSHORT) {
		int vm = out->code.kshort_dual;

		if (out->dualnum >= 0 && out->dualnum != vm)
			ljd__warn(out, "lua_pushinteger says %s-number but BC_KSHORT says %s-number "
				  "(using the interpreter)", out->dualnum ? "dual" : "single",
				  vm ? "dual" : "single");
		else
			ljd__note(out, "%s-number from BC_KSHORT at %#lx", vm ? "dual" : "single",
				  (unsigned long)out->code.kshort_at);
		out->dualnum = vm;
	} else if (out->dualnum < 0) {
		ljd__warn(out, "number mode unknown: neither lua_pushinteger nor BC_KSHORT recognized");
	}
	ljd__family(out);
	ljd__layout(out);
	if (out->layout_ok && out->dualnum == 1)
		out->layout.flags |= LJ_LAYOUT_F_DUALNUM;
out:
	elf_file__delete(ef);
	return err;
}
