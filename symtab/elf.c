/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * elf.c -- one ELF file: symbols, PT_LOAD segments, sections, build id.
 *
 * Opened with libelf in ELF_C_READ mode (section data is pread on demand,
 * never mmap'd), so a truncated or corrupt file yields errors, not faults.
 * Symbol indexes (by address and by name) are built on first use.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symtab/elf.h"
#include "symtab/vec.h"

#define ELF_FILE_MAX_SEGS	256	/* PT_LOAD headers kept (real files have < 10) */
#define ELF_FILE_MAX_BUILD_ID	64
#define ELF_FILE_SYM_BACKSCAN	256	/* symbols looked at below an address */

struct elf_file {
	int fd;			/* -1 for an image in memory */
	uint8_t *mem;		/* the image, when opened from memory */
	Elf *elf;
	char *path;
	uint64_t size;
	uint16_t type, machine;
	int class;
	struct elf_segment *segs;
	size_t nsegs;
	uint8_t build_id[ELF_FILE_MAX_BUILD_ID];
	int build_id_len;		/* -ENOENT when absent */
	/* Symbol indexes, built on first use (syms_state: 0 not yet, 1 ok, <0 error). */
	int syms_state;
	int has_symtab;
	struct elf_symbol *syms;	/* sorted by value, deduplicated */
	size_t nsyms;
	const struct elf_symbol **by_name;	/* sorted by name */
};

/* -- Opening ------------------------------------------------------------- */

/* Read the PT_LOAD headers into ef->segs. */
static int elf_file__load_segments(struct elf_file *ef)
{
	size_t phnum, i;
	int err = 0;

	if (elf_getphdrnum(ef->elf, &phnum) != 0)
		return -ENOEXEC;
	if (phnum == 0)
		return 0;
	ef->segs = calloc(phnum < ELF_FILE_MAX_SEGS ? phnum : ELF_FILE_MAX_SEGS,
			  sizeof(*ef->segs));
	if (!ef->segs)
		return -ENOMEM;
	for (i = 0; i < phnum && ef->nsegs < ELF_FILE_MAX_SEGS; i++) {
		GElf_Phdr ph;
		struct elf_segment *s;

		if (!gelf_getphdr(ef->elf, (int)i, &ph)) {
			err = -ENOEXEC;
			goto out;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		/* An offset or size that overflows is a corrupt header: skip it. */
		if (ph.p_offset + ph.p_filesz < ph.p_offset || ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
			continue;
		if (ph.p_offset + ph.p_filesz > ef->size) {
			err = -ENOEXEC;	/* truncated: the loader would fault on it */
			goto out;
		}
		s = &ef->segs[ef->nsegs++];
		s->vaddr = ph.p_vaddr;
		s->offset = ph.p_offset;
		s->filesz = ph.p_filesz;
		s->memsz = ph.p_memsz > ph.p_filesz ? ph.p_memsz : ph.p_filesz;
		s->align = ph.p_align;
		s->flags = ph.p_flags;
	}
out:
	return err;
}

/* Look for NT_GNU_BUILD_ID in one note buffer; returns 1 when found. */
static int elf_file__scan_notes(struct elf_file *ef, Elf_Data *data)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;
	unsigned guard = 0;

	if (!data || !data->d_buf)
		return 0;
	while (guard++ < 4096 && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    name_off + 4 <= data->d_size && memcmp(name, "GNU", 4) == 0 &&
		    desc_off + nh.n_descsz <= data->d_size && nh.n_descsz > 0) {
			size_t n = nh.n_descsz < sizeof(ef->build_id) ? nh.n_descsz
								     : sizeof(ef->build_id);

			memcpy(ef->build_id, (const uint8_t *)data->d_buf + desc_off, n);
			ef->build_id_len = (int)n;
			return 1;
		}
		if (next <= off)
			break;
		off = next;
	}
	return 0;
}

/* Find the GNU build id in PT_NOTE segments, else in SHT_NOTE sections. */
static void elf_file__load_build_id(struct elf_file *ef)
{
	size_t phnum = 0, i;
	Elf_Scn *scn = NULL;
	unsigned guard = 0;

	ef->build_id_len = -ENOENT;
	if (elf_getphdrnum(ef->elf, &phnum) == 0) {
		for (i = 0; i < phnum && i < 4096; i++) {
			GElf_Phdr ph;
			Elf_Data *d;

			if (!gelf_getphdr(ef->elf, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			if (ph.p_offset > ef->size || ph.p_filesz > ef->size - ph.p_offset)
				continue;
			d = elf_getdata_rawchunk(ef->elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
			if (elf_file__scan_notes(ef, d))
				return;
		}
	}
	while (guard++ < 65536 && (scn = elf_nextscn(ef->elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if (elf_file__scan_notes(ef, elf_getdata(scn, NULL)))
			return;
	}
}

/* Reject files whose header tables end past EOF (truncated copies). */
static int elf_file__check_tables(const struct elf_file *ef, const GElf_Ehdr *eh)
{
	size_t shnum = 0, phnum = 0;

	if (elf_getphdrnum(ef->elf, &phnum) != 0 || elf_getshdrnum(ef->elf, &shnum) != 0)
		return -ENOEXEC;
	if (phnum && (eh->e_phoff > ef->size ||
		      (uint64_t)phnum * eh->e_phentsize > ef->size - eh->e_phoff))
		return -ENOEXEC;
	if (shnum && (eh->e_shoff > ef->size ||
		      (uint64_t)shnum * eh->e_shentsize > ef->size - eh->e_shoff))
		return -ENOEXEC;
	return 0;
}

/* The checks and indexes shared by both ways of opening. */
static int elf_file__init(struct elf_file *ef)
{
	GElf_Ehdr eh;
	int err;

	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF || !gelf_getehdr(ef->elf, &eh))
		return -ENOEXEC;
	err = elf_file__check_tables(ef, &eh);
	if (err)
		return err;
	ef->type = eh.e_type;
	ef->machine = eh.e_machine;
	ef->class = gelf_getclass(ef->elf);
	err = elf_file__load_segments(ef);
	if (err)
		return err;
	elf_file__load_build_id(ef);
	return 0;
}

/* Open an ELF image held in memory (a copy is kept); see elf.h. */
int elf_file__open_mem(const void *data, size_t len, const char *name, struct elf_file **out)
{
	struct elf_file *ef;
	int err = -ENOMEM;

	*out = NULL;
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return -ENOMEM;
	ef->fd = -1;
	ef->path = strdup(name);
	ef->mem = malloc(len ? len : 1);
	if (!ef->path || !ef->mem)
		goto out;
	memcpy(ef->mem, data, len);
	ef->size = len;
	elf_version(EV_CURRENT);
	ef->elf = elf_memory((char *)ef->mem, len);
	err = elf_file__init(ef);
	if (err)
		goto out;
	*out = ef;
	ef = NULL;
out:
	elf_file__delete(ef);
	return err;
}

/* Open path and read its ELF, program and note headers. */
int elf_file__open(const char *path, struct elf_file **out)
{
	struct elf_file *ef;
	struct stat st;
	int err;

	*out = NULL;
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return -ENOMEM;
	ef->fd = -1;
	ef->path = strdup(path);
	if (!ef->path) {
		err = -ENOMEM;
		goto out;
	}
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0) {
		err = -errno;
		goto out;
	}
	if (fstat(ef->fd, &st) != 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -ENOEXEC;
		goto out;
	}
	ef->size = (uint64_t)st.st_size;
	elf_version(EV_CURRENT);
	ef->elf = elf_begin(ef->fd, ELF_C_READ, NULL);
	err = elf_file__init(ef);
	if (err)
		goto out;
	*out = ef;
	ef = NULL;
	err = 0;
out:
	elf_file__delete(ef);
	return err;
}

/* Close the file and free every index. */
void elf_file__delete(struct elf_file *ef)
{
	if (!ef)
		return;
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
	free(ef->mem);
	free(ef->by_name);
	free(ef->syms);
	free(ef->segs);
	free(ef->path);
	free(ef);
}

/* -- Header facts -------------------------------------------------------- */

/* Path the file was opened with. */
const char *elf_file__path(const struct elf_file *ef) { return ef->path; }
/* e_type. */
uint16_t elf_file__type(const struct elf_file *ef) { return ef->type; }
/* e_machine. */
uint16_t elf_file__machine(const struct elf_file *ef) { return ef->machine; }
/* ELFCLASS32 or ELFCLASS64. */
int elf_file__class(const struct elf_file *ef) { return ef->class; }
/* File size at open time. */
uint64_t elf_file__size(const struct elf_file *ef) { return ef->size; }

/* Copy the GNU build id (up to cap bytes); returns its length or -ENOENT. */
int elf_file__build_id(const struct elf_file *ef, uint8_t *buf, size_t cap)
{
	if (ef->build_id_len < 0)
		return ef->build_id_len;
	memcpy(buf, ef->build_id, (size_t)ef->build_id_len < cap ? (size_t)ef->build_id_len : cap);
	return ef->build_id_len;
}

/* -- Segments and addresses ---------------------------------------------- */

/* The PT_LOAD segments. */
const struct elf_segment *elf_file__segments(const struct elf_file *ef, size_t *n)
{
	*n = ef->nsegs;
	return ef->segs;
}

/* The segment whose memory image contains vaddr. */
const struct elf_segment *elf_file__segment_at(const struct elf_file *ef, uint64_t vaddr)
{
	size_t i;

	for (i = 0; i < ef->nsegs; i++) {
		const struct elf_segment *s = &ef->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->memsz)
			return s;
	}
	return NULL;
}

/* vaddr -> file offset, through the file-backed part of a segment. */
int elf_file__vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr, uint64_t *off)
{
	size_t i;

	for (i = 0; i < ef->nsegs; i++) {
		const struct elf_segment *s = &ef->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*off = s->offset + (vaddr - s->vaddr);
			return 0;
		}
	}
	return -ENOENT;
}

/* file offset -> vaddr, through the file-backed part of a segment. */
int elf_file__offset_to_vaddr(const struct elf_file *ef, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < ef->nsegs; i++) {
		const struct elf_segment *s = &ef->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = s->vaddr + (off - s->offset);
			return 0;
		}
	}
	return -ENOENT;
}

/* Load bias of a mapping (start, file offset) of this file. */
int elf_file__load_bias(const struct elf_file *ef, uint64_t map_start, uint64_t map_off,
			uint64_t *bias)
{
	static const uint64_t pages[] = { 4096, 16384, 65536 };
	size_t p, i;

	/* The mapping offset is the segment offset rounded down to a page. */
	for (p = 0; p < sizeof(pages) / sizeof(pages[0]); p++) {
		for (i = 0; i < ef->nsegs; i++) {
			const struct elf_segment *s = &ef->segs[i];
			uint64_t lo = s->offset & ~(pages[p] - 1);

			if (map_off < lo || map_off >= s->offset + (s->filesz ? s->filesz : 1))
				continue;
			*bias = map_start - map_off - s->vaddr + s->offset;
			return 0;
		}
	}
	return -ENOENT;
}

/* Read file-backed bytes at a link-time address. */
int elf_file__read(const struct elf_file *ef, uint64_t vaddr, void *buf, size_t len)
{
	uint64_t off;
	size_t i, done = 0;

	for (i = 0; i < ef->nsegs; i++) {
		const struct elf_segment *s = &ef->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr <= s->filesz &&
		    len <= s->filesz - (vaddr - s->vaddr))
			break;
	}
	if (i == ef->nsegs)
		return -ENOENT;
	off = ef->segs[i].offset + (vaddr - ef->segs[i].vaddr);
	if (off > ef->size || len > ef->size - off)
		return -EIO;
	if (ef->mem) {
		memcpy(buf, ef->mem + off, len);
		return 0;
	}
	while (done < len) {
		ssize_t r = pread(ef->fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;
		done += (size_t)r;
	}
	return 0;
}

/* -- Sections ------------------------------------------------------------ */

/* Find a section by name; *scn_out gets the libelf handle. */
static int elf_file__find_scn(struct elf_file *ef, const char *name, struct elf_section *out,
			      Elf_Scn **scn_out)
{
	size_t shstrndx, shnum, guard = 0;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(ef->elf, &shstrndx) != 0 || elf_getshdrnum(ef->elf, &shnum) != 0)
		return -ENOENT;
	while (guard++ < shnum && (scn = elf_nextscn(ef->elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(ef->elf, shstrndx, sh.sh_name);
		if (!n || strcmp(n, name) != 0)
			continue;
		out->name = n;
		out->addr = sh.sh_addr;
		out->offset = sh.sh_offset;
		out->size = sh.sh_size;
		out->type = sh.sh_type;
		out->flags = sh.sh_flags;
		out->index = elf_ndxscn(scn);
		if (scn_out)
			*scn_out = scn;
		return 0;
	}
	return -ENOENT;
}

/* Section header by name. */
int elf_file__section(struct elf_file *ef, const char *name, struct elf_section *out)
{
	return elf_file__find_scn(ef, name, out, NULL);
}

/* Section contents by name. */
int elf_file__section_data(struct elf_file *ef, const char *name, struct elf_section *sec,
			   const uint8_t **data, size_t *size)
{
	Elf_Scn *scn = NULL;
	Elf_Data *d;
	int err;

	err = elf_file__find_scn(ef, name, sec, &scn);
	if (err)
		return err;
	if (sec->type == SHT_NOBITS || sec->offset > ef->size || sec->size > ef->size - sec->offset)
		return -EIO;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size != sec->size)
		return -EIO;
	*data = d->d_buf;
	*size = d->d_size;
	return 0;
}

/* -- Symbols ------------------------------------------------------------- */

/* Order symbols by value, then name, then .symtab before .dynsym. */
static int elf_sym__cmp_value(const void *a, const void *b)
{
	const struct elf_symbol *x = a, *y = b;
	int c;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	return (int)x->dynamic - (int)y->dynamic;
}

/* Rank of a symbol type for name lookups: functions and objects first. */
static int elf_sym__rank(const struct elf_symbol *s)
{
	return (s->type == STT_FUNC || s->type == STT_OBJECT) ? 0 : 1;
}

/* Order symbol pointers by name, then rank. */
static int elf_sym__cmp_name(const void *a, const void *b)
{
	const struct elf_symbol *x = *(const struct elf_symbol *const *)a;
	const struct elf_symbol *y = *(const struct elf_symbol *const *)b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return elf_sym__rank(x) - elf_sym__rank(y);
}

/* Append the defined symbols of one SHT_SYMTAB/SHT_DYNSYM section. */
static int elf_file__add_symtab(struct elf_file *ef, Elf_Scn *scn, const GElf_Shdr *sh,
				size_t *cap)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t entsize = gelf_fsize(ef->elf, ELF_T_SYM, 1, EV_CURRENT);
	size_t n, i;
	int err;

	if (!d || !d->d_buf || entsize == 0)
		return -EIO;
	n = d->d_size / entsize;
	for (i = 1; i < n; i++) {
		GElf_Sym s;
		const char *name;
		struct elf_symbol *o;

		if (!gelf_getsym(d, (int)i, &s))
			return -EIO;
		if (s.st_shndx == SHN_UNDEF || GELF_ST_TYPE(s.st_info) == STT_SECTION ||
		    GELF_ST_TYPE(s.st_info) == STT_FILE || s.st_name == 0)
			continue;
		name = elf_strptr(ef->elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if ((err = VEC_GROW(ef->syms, cap, ef->nsyms + 1)) != 0)
			return err;
		o = &ef->syms[ef->nsyms++];
		o->name = name;
		o->value = s.st_value;
		o->size = s.st_size;
		o->type = (uint8_t)GELF_ST_TYPE(s.st_info);
		o->bind = (uint8_t)GELF_ST_BIND(s.st_info);
		o->dynamic = sh->sh_type == SHT_DYNSYM;
		o->shndx = s.st_shndx;
	}
	return 0;
}

/* Build the address and name indexes over .symtab and .dynsym (once). */
static int elf_file__load_syms(struct elf_file *ef)
{
	size_t shnum, guard = 0, cap = 0, i, w;
	Elf_Scn *scn = NULL;
	int err = 0;

	if (ef->syms_state)
		return ef->syms_state < 0 ? ef->syms_state : 0;
	if (elf_getshdrnum(ef->elf, &shnum) != 0)
		shnum = 0;
	while (guard++ < shnum && (scn = elf_nextscn(ef->elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		if (sh.sh_offset > ef->size || sh.sh_size > ef->size - sh.sh_offset) {
			err = -EIO;
			goto out;
		}
		err = elf_file__add_symtab(ef, scn, &sh, &cap);
		if (err)
			goto out;
		if (sh.sh_type == SHT_SYMTAB)
			ef->has_symtab = 1;
	}
	if (ef->nsyms) {
		qsort(ef->syms, ef->nsyms, sizeof(*ef->syms), elf_sym__cmp_value);
		/* Merge the .symtab and .dynsym copies of one symbol. */
		for (i = 1, w = 0; i < ef->nsyms; i++) {
			struct elf_symbol *p = &ef->syms[w];

			if (ef->syms[i].value == p->value && strcmp(ef->syms[i].name, p->name) == 0) {
				p->dynamic |= ef->syms[i].dynamic;
				if (!p->size)
					p->size = ef->syms[i].size;
				continue;
			}
			ef->syms[++w] = ef->syms[i];
		}
		ef->nsyms = w + 1;
		ef->by_name = malloc(ef->nsyms * sizeof(*ef->by_name));
		if (!ef->by_name) {
			err = -ENOMEM;
			goto out;
		}
		for (i = 0; i < ef->nsyms; i++)
			ef->by_name[i] = &ef->syms[i];
		qsort(ef->by_name, ef->nsyms, sizeof(*ef->by_name), elf_sym__cmp_name);
	}
out:
	if (err) {
		free(ef->syms);
		ef->syms = NULL;
		ef->nsyms = 0;
	}
	ef->syms_state = err ? err : 1;
	return err;
}

/* Defined symbol by name. */
int elf_file__sym_lookup(struct elf_file *ef, const char *name, struct elf_symbol *out)
{
	size_t lo = 0, hi;

	if (elf_file__load_syms(ef) != 0 || !ef->nsyms)
		return -ENOENT;
	hi = ef->nsyms;
	/* Lower bound: the first entry whose name is >= name. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ef->by_name[mid]->name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= ef->nsyms || strcmp(ef->by_name[lo]->name, name) != 0)
		return -ENOENT;
	*out = *ef->by_name[lo];
	return 0;
}

/* Symbol containing vaddr. */
int elf_file__sym_at(struct elf_file *ef, uint64_t vaddr, struct elf_symbol *out)
{
	const struct elf_symbol *best = NULL;
	size_t lo = 0, hi, i, n;

	if (elf_file__load_syms(ef) != 0 || !ef->nsyms)
		return -ENOENT;
	hi = ef->nsyms;
	/* Upper bound: the first entry whose value is > vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ef->syms[mid].value <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo, n = 0; i > 0 && n < ELF_FILE_SYM_BACKSCAN; i--, n++) {
		const struct elf_symbol *s = &ef->syms[i - 1];

		if (s->size && vaddr - s->value < s->size) {
			if (!best || !best->size || s->size < best->size)
				best = s;
		} else if (!s->size && s->value == vaddr && !best) {
			best = s;
		}
	}
	if (!best)
		return -ENOENT;
	*out = *best;
	return 0;
}

/* Walk every defined symbol in address order. */
int elf_file__sym_foreach(struct elf_file *ef,
			  int (*cb)(const struct elf_symbol *sym, void *arg), void *arg)
{
	size_t i;
	int err = elf_file__load_syms(ef);

	if (err)
		return err;
	for (i = 0; i < ef->nsyms; i++) {
		int r = cb(&ef->syms[i], arg);

		if (r)
			return r;
	}
	return 0;
}

/* Count of defined symbols. */
size_t elf_file__nsyms(struct elf_file *ef)
{
	return elf_file__load_syms(ef) == 0 ? ef->nsyms : 0;
}

/* Whether a full .symtab was present. */
int elf_file__has_symtab(struct elf_file *ef)
{
	return elf_file__load_syms(ef) == 0 && ef->has_symtab;
}
