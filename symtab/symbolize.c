/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * symbolize.c -- symbols (libelf, symtab/elf.h), lines and inlines (libbfd),
 * demangling (bfd_demangle), cached per (object, address).  See symbolize.h.
 */
#define PACKAGE "ljsnap"		/* bfd.h refuses to be included without it */
#define PACKAGE_VERSION "0"
#include <bfd.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/elf.h"
#include "symtab/funcs.h"
#include "symtab/intmap.h"
#include "symtab/symbolize.h"

#ifndef DMGL_PARAMS
#define DMGL_PARAMS	(1 << 0)	/* include function arguments (libiberty demangle.h) */
#define DMGL_ANSI	(1 << 1)	/* include const, volatile, etc. */
#endif

#define SYM_MAX_INLINES	64		/* inline levels followed per address */
#define SYM_ARENA_CHUNK	(64 * 1024)

/* Per-object state: the debug file's symbols and the bfd for lines. */
struct sym_obj {
	struct objfile *obj;
	struct elf_file *dbg;	/* separate debug file (its .symtab), or NULL */
	int dbg_state;		/* 0 not tried, 1 open, -1 none */
	bfd *abfd;		/* for lines, or NULL */
	int bfd_state;		/* 0 not tried, 1 open, -1 none */
	struct funcs *funcs;	/* FDE ranges of the binary, or NULL */
	int funcs_state;	/* 0 not tried, 1 built, -1 none */
	asection **secs;	/* allocated sections of abfd */
	size_t nsecs;
	struct intmap cache;	/* vaddr -> struct sym_info * */
};

struct sym_chunk {
	struct sym_chunk *next;
	size_t used, size;
	char data[];
};

struct symbolizer {
	struct symbolizer_opts opts;
	struct intmap objs;		/* struct objfile * -> struct sym_obj * */
	struct sym_obj *last;		/* the entry of objs found last (never removed) */
	struct sym_chunk *arena;
	struct sym_info scratch;
	struct symbolizer_stats st;
};

static const char *const sym_status_names[SYM__MAX] = {
	"ok", "no symbol", "object not found", "anonymous", "no mapping",
};

/* Name of a status. */
const char *sym_status__name(enum sym_status st)
{
	return (unsigned)st < SYM__MAX ? sym_status_names[st] : "?";
}

/* -- Arena and table ------------------------------------------------------- */

/* Allocate n bytes (8-aligned) that live as long as the symbolizer. */
static void *sym__alloc(struct symbolizer *s, size_t n)
{
	struct sym_chunk *c = s->arena;
	void *p;

	n = (n + 7) & ~(size_t)7;
	if (!c || c->size - c->used < n) {
		size_t size = n > SYM_ARENA_CHUNK ? n : SYM_ARENA_CHUNK;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		c->next = s->arena;
		s->arena = c;
	}
	p = c->data + c->used;
	c->used += n;
	return p;
}

/* Copy a string into the arena (NULL stays NULL). */
static const char *sym__strdup(struct symbolizer *s, const char *str)
{
	size_t n;
	char *p;

	if (!str)
		return NULL;
	n = strlen(str) + 1;
	p = sym__alloc(s, n);
	if (p)
		memcpy(p, str, n);
	return p;
}

/* -- libbfd ---------------------------------------------------------------- */

/* libbfd's complaints (DWARF it cannot parse) are not ours to print. */
static void sym__bfd_quiet(const char *fmt, va_list ap)
{
	(void)fmt;
	(void)ap;
}

/* Demangle a C++/Rust name. */
char *symbolizer__demangle(const char *name)
{
	if (!name || !name[0])
		return NULL;
	return bfd_demangle(NULL, name, DMGL_PARAMS | DMGL_ANSI);
}

/* Does a bfd carry line tables? */
static int sym__bfd_has_lines(bfd *abfd)
{
	asection *sec = bfd_get_section_by_name(abfd, ".debug_line");

	return sec && bfd_section_size(sec) > 0;
}

/* Open a bfd on path for lines.  NULL when it has none. */
static bfd *sym__bfd_open(const char *path)
{
	bfd *abfd = bfd_openr(path, NULL);

	if (!abfd)
		return NULL;
	abfd->flags |= BFD_DECOMPRESS;
	if (!bfd_check_format(abfd, bfd_object) || !sym__bfd_has_lines(abfd)) {
		bfd_close(abfd);
		return NULL;
	}
	return abfd;
}

/* Collect the allocated sections of the bfd (for address -> section). */
static int sym_obj__sections(struct sym_obj *so)
{
	asection *sec;
	size_t n = 0;

	for (sec = so->abfd->sections; sec; sec = sec->next)
		n++;
	so->secs = calloc(n ? n : 1, sizeof(*so->secs));
	if (!so->secs)
		return -ENOMEM;
	for (sec = so->abfd->sections; sec && so->nsecs < n; sec = sec->next)
		if ((bfd_section_flags(sec) & SEC_ALLOC) && bfd_section_size(sec))
			so->secs[so->nsecs++] = sec;
	return 0;
}

/* The bfd for lines of an object (debug file first), opened on first use. */
static bfd *sym_obj__bfd(struct symbolizer *s, struct sym_obj *so)
{
	if (so->bfd_state)
		return so->bfd_state > 0 ? so->abfd : NULL;
	so->bfd_state = -1;
	if (so->obj->debug)
		so->abfd = sym__bfd_open(so->obj->debug);
	if (!so->abfd && so->obj->found)
		so->abfd = sym__bfd_open(so->obj->found);
	if (!so->abfd) {
		s->st.objects_bfd_failed += so->obj->debug || so->obj->found ? 1 : 0;
		return NULL;
	}
	if (sym_obj__sections(so) != 0) {
		bfd_close(so->abfd);
		so->abfd = NULL;
		return NULL;
	}
	so->bfd_state = 1;
	s->st.objects_with_lines++;
	return so->abfd;
}

/* The separate debug file's ELF (for its .symtab), opened on first use. */
static struct elf_file *sym_obj__dbg(struct sym_obj *so)
{
	if (!so->dbg_state)
		so->dbg_state = objfile__open_debug(so->obj, &so->dbg) == 0 ? 1 : -1;
	return so->dbg_state > 0 ? so->dbg : NULL;
}

/* Per-object state, created on first use. */
static struct sym_obj *sym__obj(struct symbolizer *s, struct objfile *obj)
{
	uint64_t *v;
	struct sym_obj *so;
	int found;

	/* Consecutive frames are mostly in one file. */
	if (s->last && s->last->obj == obj)
		return s->last;
	found = intmap__slot(&s->objs, (uintptr_t)obj, &v);
	if (found < 0)
		return NULL;
	if (found)
		return s->last = (struct sym_obj *)(uintptr_t)*v;
	so = calloc(1, sizeof(*so));
	if (!so) {
		intmap__del(&s->objs, (uintptr_t)obj);
		return NULL;
	}
	so->obj = obj;
	*v = (uintptr_t)so;
	s->last = so;
	s->st.objects++;
	return so;
}

/* Free per-object state. */
static void sym_obj__delete(struct sym_obj *so)
{
	if (so->abfd)
		bfd_close(so->abfd);
	elf_file__delete(so->dbg);
	funcs__delete(so->funcs);
	free(so->secs);
	intmap__exit(&so->cache);
	free(so);
}

/* -- Lookups --------------------------------------------------------------- */

/* Demangle (unless disabled) into the arena. */
static const char *sym__name(struct symbolizer *s, const char *raw)
{
	char *d;
	const char *r;

	if (!raw)
		return NULL;
	if (s->opts.no_demangle || !(d = symbolizer__demangle(raw)))
		return sym__strdup(s, raw);
	r = sym__strdup(s, d);
	free(d);
	return r;
}

/* The symbol containing vaddr: .symtab, the debug file's, then .dynsym. */
static void sym__symbol(struct symbolizer *s, struct sym_obj *so, uint64_t vaddr,
			struct sym_info *si)
{
	struct elf_file *ef = so->obj->ef, *dbg;
	struct elf_symbol sym;
	int found = 0;

	if (ef && elf_file__has_symtab(ef))
		found = elf_file__sym_at(ef, vaddr, &sym) == 0;
	if (!found && (dbg = sym_obj__dbg(so)) != NULL) {
		found = elf_file__sym_at(dbg, vaddr, &sym) == 0;
		si->from_debug = (uint8_t)found;
	}
	if (!found && ef)
		found = elf_file__sym_at(ef, vaddr, &sym) == 0;
	if (!found)
		return;
	si->raw_name = sym__strdup(s, sym.name);
	si->name = sym__name(s, sym.name);
	si->sym_addr = sym.value;
	si->offset = vaddr - sym.value;
	si->status = SYM_OK;
}

/* No symbol at vaddr: the FDE range around it, named or not (funcs.h). */
static void sym__func(struct symbolizer *s, struct sym_obj *so, uint64_t vaddr,
		      struct sym_info *si)
{
	const struct func_range *r;

	/* A copy has neither the code nor the data the recovery reads: its
	 * names are the ones saved with it (funcs.h). */
	if (!so->funcs_state && so->obj->ef && so->obj->from_copy)
		so->funcs_state = funcs__new_saved(so->obj->ef, so->obj->copy_names,
						   so->obj->copy_names_len, &so->funcs) == 0 ? 1 : -1;
	else if (!so->funcs_state)
		so->funcs_state = so->obj->ef && funcs__new(so->obj->ef, &so->funcs) == 0 ? 1 : -1;
	if (so->funcs_state < 0 || !(r = funcs__at(so->funcs, vaddr)))
		return;
	si->in_func = 1;
	si->func_lo = r->lo;
	/* A symbol's name never reaches past its st_size: a range named by the
	 * symbol at its start, but not covered by it here, stays unnamed. */
	if (!r->name || r->how != FUNC_LUAJIT)
		return;
	si->raw_name = r->name;
	si->name = sym__strdup(s, r->name);
	si->sym_addr = r->lo;
	si->offset = vaddr - r->lo;
	si->recovered = 1;
	si->status = SYM_OK;
}

/* File:line and inline chain at vaddr through libbfd. */
static int sym__lines(struct symbolizer *s, struct sym_obj *so, uint64_t vaddr,
		      struct sym_info *si)
{
	struct sym_line tmp[SYM_MAX_INLINES];
	const char *file = NULL, *func = NULL;
	unsigned int line = 0;
	asection *sec = NULL;
	bfd *abfd = sym_obj__bfd(s, so);
	size_t i, n = 0;

	if (!abfd)
		return 0;
	for (i = 0; i < so->nsecs; i++) {
		bfd_vma lo = bfd_section_vma(so->secs[i]);

		if (vaddr >= lo && vaddr - lo < bfd_section_size(so->secs[i])) {
			sec = so->secs[i];
			break;
		}
	}
	if (!sec || !bfd_find_nearest_line(abfd, sec, NULL, vaddr - bfd_section_vma(sec), &file,
					   &func, &line))
		return 0;
	do {
		tmp[n].func = sym__name(s, func);
		tmp[n].file = sym__strdup(s, file);
		tmp[n].line = (int)line;
		n++;
		file = func = NULL;
		line = 0;
	} while (!s->opts.no_inlines && n < SYM_MAX_INLINES &&
		 bfd_find_inliner_info(abfd, &file, &func, &line));
	si->lines = sym__alloc(s, n * sizeof(*si->lines));
	if (!si->lines)
		return -ENOMEM;
	memcpy((void *)si->lines, tmp, n * sizeof(*tmp));
	si->nlines = (uint32_t)n;
	return 0;
}

/* Look up an object address, filling a new sym_info (not cached yet). */
static int sym__resolve(struct symbolizer *s, struct objfile *obj, uint64_t vaddr,
			struct sym_info *si)
{
	struct sym_obj *so = sym__obj(s, obj);
	const char *base = strrchr(obj->path, '/');

	if (!so)
		return -ENOMEM;
	si->obj = obj;
	si->path = obj->path;
	si->module = base ? base + 1 : obj->path;
	si->vaddr = vaddr;
	si->status = obj->status == OBJFILE_OK ? SYM_NO_SYMBOL : SYM_NO_OBJECT;
	if (obj->status != OBJFILE_OK && !obj->debug)
		return 0;
	sym__symbol(s, so, vaddr, si);
	if (si->status != SYM_OK && obj->status == OBJFILE_OK)
		sym__func(s, so, vaddr, si);
	if (si->status != SYM_OK && obj->status != OBJFILE_OK)
		si->status = SYM_NO_OBJECT;
	if (!s->opts.no_lines)
		return sym__lines(s, so, vaddr, si);
	return 0;
}

/* Symbolize an object address (cached). */
int symbolizer__obj(struct symbolizer *s, struct objfile *obj, uint64_t vaddr,
		    const struct sym_info **out)
{
	struct sym_obj *so;
	struct sym_info *si;
	uint64_t v;
	int err;

	if (!s || !obj || !out)
		return -EINVAL;
	s->st.lookups++;
	obj->hits++;
	if (!(so = sym__obj(s, obj)))
		return -ENOMEM;
	if (intmap__get(&so->cache, vaddr, &v)) {
		si = (struct sym_info *)(uintptr_t)v;
		s->st.cache_hits++;
		s->st.status[si->status]++;
		*out = si;
		return 0;
	}
	si = sym__alloc(s, sizeof(*si));
	if (!si)
		return -ENOMEM;
	memset(si, 0, sizeof(*si));
	err = sym__resolve(s, obj, vaddr, si);
	if (err)
		return err;
	err = intmap__put(&so->cache, vaddr, (uintptr_t)si);
	if (err)
		return err;
	s->st.status[si->status]++;
	*out = si;
	return 0;
}

/* Symbolize a runtime address of a process. */
int symbolizer__pc(struct symbolizer *s, const struct procmap *pm, uint64_t pc, int retaddr,
		   const struct sym_info **out)
{
	const struct procmap_ent *e;
	struct sym_info *si = &s->scratch;
	uint64_t a = retaddr && pc ? pc - 1 : pc, vaddr, foff;
	const struct sym_info *r;
	int err, guessed = 0;

	if (!s || !out)
		return -EINVAL;
	e = procmap__find(pm, a);
	foff = e ? a - e->start + e->offset : 0;
	if (!e || !e->obj) {
		const char *base = e ? strrchr(e->path, '/') : NULL;

		memset(si, 0, sizeof(*si));
		si->status = e ? SYM_ANON : SYM_NO_MAPPING;
		si->path = e ? e->path : "";
		si->module = base ? base + 1 : si->path;
		si->vaddr = a;
		si->file_off = foff;
		s->st.lookups++;
		s->st.status[si->status]++;
		*out = si;
		return 0;
	}
	if (e->has_bias) {
		vaddr = a - e->bias;
	} else {	/* binary missing: the usual layout has vaddr == offset in text */
		vaddr = foff;
		guessed = 1;
	}
	err = symbolizer__obj(s, e->obj, vaddr, &r);
	if (err)
		return err;
	if (r->file_off != foff || r->bias_guessed != guessed) {
		/* first lookup through a mapping: record its view (same for every
		 * mapping of a file at the same offset) */
		((struct sym_info *)r)->file_off = foff;
		((struct sym_info *)r)->bias_guessed = (uint8_t)guessed;
	}
	*out = r;
	return 0;
}

/* snprintf(buf, size, "%s+0x%llx", s, v) without the format parser (one per
 * native frame without a symbol): the same bytes and return value. */
static int plus_hex(char *buf, size_t size, const char *s, uint64_t v)
{
	char tmp[3 + 16];
	size_t sl = strlen(s), n = 0, tl, i, c;

	memcpy(tmp, "+0x", 3);
	tl = 3;
	do {
		tmp[tl + n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	for (i = 0; i < n / 2; i++) {	/* digits were written lowest first */
		c = (unsigned char)tmp[tl + i];
		tmp[tl + i] = tmp[tl + n - 1 - i];
		tmp[tl + n - 1 - i] = (char)c;
	}
	tl += n;
	if (sl + tl > INT_MAX)
		return -1;
	if (size) {
		c = sl < size - 1 ? sl : size - 1;
		memcpy(buf, s, c);
		i = tl < size - 1 - c ? tl : size - 1 - c;
		memcpy(buf + c, tmp, i);
		buf[c + i] = '\0';
	}
	return (int)(sl + tl);
}

/* "name+0xoff", or "module+0xfileoff". */
int sym_info__format(const struct sym_info *si, char *buf, size_t size)
{
	const char *mod = si->module && si->module[0] ? si->module : "[anon]";

	if (si->name)
		return plus_hex(buf, size, si->name, si->offset);
	if (si->status == SYM_NO_MAPPING)
		return plus_hex(buf, size, "[unknown]", si->vaddr);
	if (si->in_func && si->file_off >= si->vaddr - si->func_lo)	/* the function's start */
		return plus_hex(buf, size, mod, si->file_off - (si->vaddr - si->func_lo));
	return plus_hex(buf, size, mod, si->status == SYM_ANON ? si->vaddr : si->file_off);
}

/* -- Lifetime -------------------------------------------------------------- */

/* Create a symbolizer. */
struct symbolizer *symbolizer__new(const struct symbolizer_opts *o)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (o)
		s->opts = *o;
	if (!s->opts.no_lines) {
		bfd_init();
		bfd_set_error_handler(sym__bfd_quiet);
	}
	return s;
}

/* Free a symbolizer, its caches and the bfds it opened. */
void symbolizer__delete(struct symbolizer *s)
{
	size_t it = 0;
	uint64_t v;

	if (!s)
		return;
	while (intmap__next(&s->objs, &it, NULL, &v))
		sym_obj__delete((struct sym_obj *)(uintptr_t)v);
	intmap__exit(&s->objs);
	while (s->arena) {
		struct sym_chunk *c = s->arena;

		s->arena = c->next;
		free(c);
	}
	free(s);
}

/* Counters. */
const struct symbolizer_stats *symbolizer__stats(const struct symbolizer *s)
{
	return &s->st;
}
