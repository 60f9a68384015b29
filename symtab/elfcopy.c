/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * elfcopy.c -- the sections report needs from an ELF file, as a sparse
 * image, and the file rebuilt from it (see elfcopy.h).
 *
 * Section and program headers as in the ELF specification (System V ABI,
 * "Object Files": ELF header, section header table, program header table).
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symtab/elfcopy.h"
#include "symtab/elfrel.h"
#include "symtab/funcs.h"
#include "symtab/ljnames.h"
#include "symtab/vec.h"

/* Offset of sh_type in Elf32_Shdr and Elf64_Shdr alike (after sh_name). */
#define ELFCOPY_SH_TYPE_OFF	4

/* A range to copy while the list is built. */
struct elfcopy_build {
	struct elfcopy_extent *v;
	size_t n, cap;
	uint64_t size;
};

/* Add [off, off + len) when it lies in the file.  0, -ENOEXEC, -ENOMEM. */
static int build__add(struct elfcopy_build *b, uint64_t off, uint64_t len)
{
	if (!len)
		return 0;
	if (off > b->size || len > b->size - off)
		return -ENOEXEC;
	if (VEC_GROW(b->v, &b->cap, b->n + 1) != 0)
		return -ENOMEM;
	b->v[b->n].offset = off;
	b->v[b->n].len = len;
	b->n++;
	return 0;
}

/* Order extents by offset. */
static int extent__cmp(const void *a, const void *b)
{
	const struct elfcopy_extent *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Sort and merge overlapping or touching extents. */
static void build__merge(struct elfcopy_build *b)
{
	size_t i, o = 0;

	if (!b->n)
		return;
	qsort(b->v, b->n, sizeof(*b->v), extent__cmp);
	for (i = 1; i < b->n; i++) {
		struct elfcopy_extent *last = &b->v[o];
		uint64_t end = last->offset + last->len;

		if (b->v[i].offset <= end) {
			if (b->v[i].offset + b->v[i].len > end)
				last->len = b->v[i].offset + b->v[i].len - last->offset;
		} else {
			b->v[++o] = b->v[i];
		}
	}
	b->n = o + 1;
}

/* Whether section sh (named name; index ndx) is kept for `what`; *what_found
 * gains the bit it stands for. */
static int elfcopy__keep(size_t ndx, const GElf_Shdr *sh, const char *name, size_t shstrndx,
			 uint32_t what, uint32_t *what_found, const uint8_t *strtabs)
{
	if (sh->sh_type == SHT_NOTE || ndx == shstrndx || strtabs[ndx] ||
	    !strcmp(name, ".gnu_debuglink"))
		return 1;
	if (!strcmp(name, ".eh_frame") || !strcmp(name, ".eh_frame_hdr") ||
	    !strcmp(name, ".debug_frame") || !strcmp(name, ".zdebug_frame")) {
		*what_found |= ELFCOPY_UNWIND;
		return 1;
	}
	if (sh->sh_type == SHT_SYMTAB || sh->sh_type == SHT_DYNSYM ||
	    !strcmp(name, ".gnu_debugdata")) {
		*what_found |= ELFCOPY_SYMBOLS;
		return 1;
	}
	if ((what & ELFCOPY_DEBUG) &&
	    (!strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8))) {
		*what_found |= ELFCOPY_DEBUG;
		return 1;
	}
	return 0;
}

/* Read the merged extents into c->data and turn the sections not kept into
 * SHT_NOBITS in the copied section header table. */
static int elfcopy__fill(int fd, struct elfcopy *c, const GElf_Ehdr *eh, const uint8_t *drop,
			 size_t shnum)
{
	size_t i, at = 0, k;

	c->data = malloc(c->len ? c->len : 1);
	if (!c->data)
		return -ENOMEM;
	for (i = 0; i < c->n; i++) {
		ssize_t r = pread(fd, c->data + at, c->ext[i].len, (off_t)c->ext[i].offset);

		if (r < 0)
			return -errno;
		if ((uint64_t)r != c->ext[i].len)
			return -ENOEXEC;	/* shrank while we read it */
		at += c->ext[i].len;
	}
	for (k = 1; k < shnum; k++) {
		uint64_t pos = eh->e_shoff + k * eh->e_shentsize + ELFCOPY_SH_TYPE_OFF;
		uint8_t *p = NULL;

		if (!drop[k])
			continue;
		for (i = 0, at = 0; i < c->n && !p; at += c->ext[i].len, i++)
			if (pos >= c->ext[i].offset && pos + 4 <= c->ext[i].offset + c->ext[i].len)
				p = c->data + at + (pos - c->ext[i].offset);
		if (!p)
			return -ENOEXEC;
		if (eh->e_ident[EI_DATA] == ELFDATA2MSB) {
			p[0] = 0, p[1] = 0, p[2] = 0, p[3] = SHT_NOBITS;
		} else {
			p[0] = SHT_NOBITS, p[1] = 0, p[2] = 0, p[3] = 0;
		}
	}
	return 0;
}

/* Mark the string tables of the symbol tables (their sh_link) in strtabs. */
static void elfcopy__strtabs(Elf *elf, size_t shnum, uint8_t *strtabs)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) &&
		    sh.sh_link < shnum)
			strtabs[sh.sh_link] = 1;
	}
}

/* Copy what report needs; see elfcopy.h. */
int elfcopy__extract(int fd, uint32_t what, struct elfcopy *out)
{
	struct elfcopy_build b = { 0 };
	uint8_t *drop = NULL, *strtabs = NULL;
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	struct stat st;
	size_t shnum, shstrndx, phnum, i;
	int err = -ENOEXEC;

	memset(out, 0, sizeof(*out));
	if (fstat(fd, &st) != 0) {
		err = -errno;
		goto out;
	}
	b.size = (uint64_t)st.st_size;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    elf_getshdrnum(elf, &shnum) != 0 || elf_getshdrstrndx(elf, &shstrndx) != 0 ||
	    elf_getphdrnum(elf, &phnum) != 0 || !shnum)
		goto out;
	err = -ENOMEM;
	drop = calloc(shnum, 1);
	strtabs = calloc(shnum, 1);
	if (!drop || !strtabs)
		goto out;
	elfcopy__strtabs(elf, shnum, strtabs);
	if ((err = build__add(&b, 0, eh.e_ehsize)) != 0 ||
	    (err = build__add(&b, eh.e_phoff, (uint64_t)phnum * eh.e_phentsize)) != 0 ||
	    (err = build__add(&b, eh.e_shoff, (uint64_t)shnum * eh.e_shentsize)) != 0)
		goto out;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		size_t ndx = elf_ndxscn(scn);
		const char *name;
		GElf_Shdr sh;

		err = -ENOEXEC;
		if (!gelf_getshdr(scn, &sh) || ndx >= shnum)
			goto out;
		if (sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!elfcopy__keep(ndx, &sh, name ? name : "", shstrndx, what, &out->what, strtabs)) {
			drop[ndx] = 1;
			continue;
		}
		if ((err = build__add(&b, sh.sh_offset, sh.sh_size)) != 0)
			goto out;
	}
	build__merge(&b);
	err = -E2BIG;
	if (b.n > ELFCOPY_MAX_EXTENTS)
		goto out;
	out->size = b.size;
	out->ext = b.v;
	out->n = b.n;
	b.v = NULL;
	for (i = 0; i < out->n; i++)
		out->len += out->ext[i].len;
	err = elfcopy__fill(fd, out, &eh, drop, shnum);
out:
	if (err)
		elfcopy__exit(out);
	if (elf)
		elf_end(elf);
	free(b.v);
	free(drop);
	free(strtabs);
	return err;
}

/* Take a copy read back from a capture; see elfcopy.h. */
int elfcopy__init(struct elfcopy *c, uint64_t size, uint32_t what,
		  const struct elfcopy_extent *ext, size_t n, const uint8_t *data, size_t len)
{
	uint64_t sum = 0, end = 0;
	size_t i;

	memset(c, 0, sizeof(*c));
	if (n > ELFCOPY_MAX_EXTENTS || (n && !ext) || (len && !data))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (ext[i].offset < end || ext[i].offset > size || ext[i].len > size - ext[i].offset)
			return -EINVAL;
		end = ext[i].offset + ext[i].len;
		sum += ext[i].len;
	}
	if (sum != len)
		return -EINVAL;
	c->ext = malloc((n ? n : 1) * sizeof(*ext));
	c->data = malloc(len ? len : 1);
	if (!c->ext || !c->data) {
		elfcopy__exit(c);
		return -ENOMEM;
	}
	if (n)
		memcpy(c->ext, ext, n * sizeof(*ext));
	if (len)
		memcpy(c->data, data, len);
	c->size = size;
	c->what = what;
	c->n = n;
	c->len = len;
	return 0;
}

/* Free a copy. */
void elfcopy__exit(struct elfcopy *c)
{
	free(c->ext);
	free(c->data);
	free(c->names);
	memset(c, 0, sizeof(*c));
}

/* Add the names recovered from the original; see elfcopy.h. */
int elfcopy__names(struct elfcopy *c, struct elf_file *ef)
{
	struct elf_rels rels = { NULL, 0, 0 };
	struct funcs *f = NULL;
	int err;

	free(c->names);
	c->names = NULL;
	c->names_len = 0;
	/* Every recovered name starts from the IR call table: a file without
	 * one (libc, most files) has none, and its ranges are not built. */
	err = elf_rels__read(ef, &rels);
	if (!err)
		err = ljnames__ircall(ef, &rels, NULL, NULL, NULL);
	elf_rels__exit(&rels);
	if (err)
		return err == -ENOENT ? 0 : err;
	if ((err = funcs__new(ef, &f)) != 0)
		return err;
	err = funcs__save(f, &c->names, &c->names_len);
	funcs__delete(f);
	return err;
}

/* Take names read back from a capture; see elfcopy.h. */
int elfcopy__set_names(struct elfcopy *c, const uint8_t *names, size_t len)
{
	uint8_t *b;

	if (len && funcs__saved_check(names, len) != 0)
		return -EINVAL;
	b = len ? malloc(len) : NULL;
	if (len && !b)
		return -ENOMEM;
	if (len)
		memcpy(b, names, len);
	free(c->names);
	c->names = b;
	c->names_len = len;
	return 0;
}

/* Rebuild the file in a memfd; see elfcopy.h. */
int elfcopy__memfd(const struct elfcopy *c, int *fd)
{
	size_t i, at = 0;
	int err = 0, f = memfd_create("ljsnap-elfcopy", MFD_CLOEXEC);

	if (f < 0)
		return -errno;
	if (ftruncate(f, (off_t)c->size) != 0) {
		err = -errno;
		goto out;
	}
	for (i = 0; i < c->n && !err; i++) {
		uint64_t done = 0;

		while (done < c->ext[i].len) {
			ssize_t w = pwrite(f, c->data + at + done, c->ext[i].len - done,
					   (off_t)(c->ext[i].offset + done));

			if (w <= 0) {
				err = w < 0 ? -errno : -EIO;
				goto out;
			}
			done += (uint64_t)w;
		}
		at += c->ext[i].len;
	}
out:
	if (err)
		close(f);
	else
		*fd = f;
	return err;
}
