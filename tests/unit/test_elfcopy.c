/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_elfcopy.c -- symtab/elfcopy.h and the object cache's copies.
 *
 * This test's own executable (built with -g: .symtab, .eh_frame, .debug_*)
 * is copied and rebuilt in a memfd; opened with symtab/elf.h, the rebuilt
 * file has the same build id, PT_LOAD segments, symbols, .eh_frame and
 * .eh_frame_hdr bytes, and .text as SHT_NOBITS (no contents); .debug_info
 * only when ELFCOPY_DEBUG was asked for.  elfcopy__init refuses extents out
 * of order, past the file or not adding up.  The object cache resolves a
 * missing path, and a path holding another build, to the copy of the
 * recorded build id (from_copy, file_status), and procmap__read never reads
 * code from it, while it does from the real file.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symtab/elf.h"
#include "symtab/elfcopy.h"
#include "symtab/objfile.h"
#include "symtab/procmap.h"
#include "tests/unit/check.h"

int failures, checks;

static char self[4096];

/* Open the rebuilt copy of self made with what; NULL on failure. */
static struct elf_file *copy_open(uint32_t what, struct elfcopy *c, int *fd)
{
	struct elf_file *ef = NULL;
	char path[64];
	int in = open(self, O_RDONLY | O_CLOEXEC);

	*fd = -1;
	memset(c, 0, sizeof(*c));
	CHECK(in >= 0 && elfcopy__extract(in, what, c) == 0);
	if (in >= 0)
		close(in);
	CHECK(elfcopy__memfd(c, fd) == 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", *fd);
	CHECK(elf_file__open(path, &ef) == 0);
	return ef;
}

/* Section contents equal in both files (or absent in both). */
static int same_section(struct elf_file *a, struct elf_file *b, const char *name)
{
	struct elf_section sa, sb;
	const uint8_t *da, *db;
	size_t la, lb;
	int ra = elf_file__section_data(a, name, &sa, &da, &la);
	int rb = elf_file__section_data(b, name, &sb, &db, &lb);

	if (ra || rb)
		return ra == rb;
	return la == lb && !memcmp(da, db, la) && sa.addr == sb.addr && sa.index == sb.index;
}

/* A symbol found by name and by address the same way in both files. */
static int same_symbol(struct elf_file *a, struct elf_file *b, const char *name)
{
	struct elf_symbol x, y, xa, ya;

	if (elf_file__sym_lookup(a, name, &x) || elf_file__sym_lookup(b, name, &y))
		return 0;
	if (x.value != y.value || x.size != y.size || x.type != y.type)
		return 0;
	if (elf_file__sym_at(a, x.value + 1, &xa) || elf_file__sym_at(b, y.value + 1, &ya))
		return 0;
	return !strcmp(xa.name, ya.name);
}

/* The copy serves what report reads: headers, symbols, unwind tables. */
static void test_copy(void)
{
	struct elf_file *orig = NULL, *cp;
	struct elfcopy c;
	struct elf_section sec;
	const struct elf_segment *s1, *s2;
	uint8_t id1[64], id2[64];
	const uint8_t *d;
	size_t n1, n2, len, i;
	int fd, l1, l2;

	CHECK(elf_file__open(self, &orig) == 0);
	cp = copy_open(ELFCOPY_UNWIND | ELFCOPY_SYMBOLS, &c, &fd);
	if (!orig || !cp)
		goto out;
	CHECK(c.what == (ELFCOPY_UNWIND | ELFCOPY_SYMBOLS));
	CHECKF(c.len < elf_file__size(orig) / 2, "copy %zu bytes of a %llu-byte file", c.len,
	       (unsigned long long)elf_file__size(orig));
	CHECK(c.size == elf_file__size(orig));
	l1 = elf_file__build_id(orig, id1, sizeof(id1));
	l2 = elf_file__build_id(cp, id2, sizeof(id2));
	CHECK(l1 > 0 && l1 == l2 && !memcmp(id1, id2, (size_t)l1));
	s1 = elf_file__segments(orig, &n1);
	s2 = elf_file__segments(cp, &n2);
	CHECK(n1 == n2 && n1 > 0);
	for (i = 0; i < n1 && i < n2; i++)
		CHECK(s1[i].vaddr == s2[i].vaddr && s1[i].offset == s2[i].offset &&
		      s1[i].filesz == s2[i].filesz && s1[i].flags == s2[i].flags);
	CHECK(elf_file__nsyms(orig) == elf_file__nsyms(cp) && elf_file__has_symtab(cp));
	CHECK(same_symbol(orig, cp, "main") && same_symbol(orig, cp, "test_copy"));
	CHECK(same_section(orig, cp, ".eh_frame") && same_section(orig, cp, ".eh_frame_hdr"));
	CHECK(elf_file__section(cp, ".text", &sec) == 0 && sec.type == SHT_NOBITS);
	CHECK(elf_file__section_data(cp, ".text", &sec, &d, &len) != 0);
	CHECK(elf_file__section(cp, ".debug_info", &sec) == 0 && sec.type == SHT_NOBITS);
	elf_file__delete(cp);
	close(fd);
	elfcopy__exit(&c);

	cp = copy_open(ELFCOPY_DEBUG, &c, &fd);
	CHECK(c.what & ELFCOPY_DEBUG);
	CHECK(cp && same_section(orig, cp, ".debug_info") && same_section(orig, cp, ".debug_line"));
	CHECK(cp && elf_file__section(cp, ".debug_info", &sec) == 0 && sec.type == SHT_PROGBITS);
out:
	elf_file__delete(cp);
	elf_file__delete(orig);
	if (fd >= 0)
		close(fd);
	elfcopy__exit(&c);
}

/* elfcopy__init checks the extents. */
static void test_init(void)
{
	static const uint8_t data[12] = "abcdefghijkl";
	struct elfcopy_extent ok[2] = { { 0, 4 }, { 100, 8 } };
	struct elfcopy_extent overlap[2] = { { 0, 8 }, { 4, 4 } };
	struct elfcopy_extent past[2] = { { 0, 4 }, { 200, 8 } };
	struct elfcopy c;
	char back[8];
	int fd = -1;

	CHECK(elfcopy__init(&c, 108, 1, overlap, 2, data, 12) == -EINVAL);
	CHECK(elfcopy__init(&c, 108, 1, past, 2, data, 12) == -EINVAL);
	CHECK(elfcopy__init(&c, 108, 1, ok, 2, data, 11) == -EINVAL);
	CHECK(elfcopy__init(&c, 107, 1, ok, 2, data, 12) == -EINVAL);
	CHECK(elfcopy__init(&c, 108, 1, ok, 2, data, 12) == 0);
	CHECK(elfcopy__memfd(&c, &fd) == 0);
	CHECK(fd >= 0 && lseek(fd, 0, SEEK_END) == 108);
	CHECK(fd >= 0 && pread(fd, back, 8, 100) == 8 && !memcmp(back, "efghijkl", 8));
	CHECK(fd >= 0 && pread(fd, back, 4, 50) == 4 && !memcmp(back, "\0\0\0\0", 4));
	if (fd >= 0)
		close(fd);
	elfcopy__exit(&c);
}

/* Read 16 code bytes through a procmap of one mapping of path with build id. */
static int read_code(struct objcache *oc, const char *path, const uint8_t *id, size_t n,
		     const struct elf_segment *text, struct objfile **obj)
{
	uint64_t start = 0x500000000000ull, off = text->offset & ~4095ull;
	struct procmap_desc d = {
		.start = start, .end = start + 0x10000, .offset = off,
		.prot = PROCMAP_PROT_READ | PROCMAP_PROT_EXEC, .path = path,
		.build_id = id, .build_id_len = (uint32_t)n,
	};
	struct procmap *pm = NULL;
	uint8_t buf[16];
	int r = -1;

	if (procmap__new(oc, &d, 1, &pm) == 0) {
		*obj = pm->v[0].obj;
		r = procmap__read(pm, start + (text->offset - off), buf, sizeof(buf));
	}
	procmap__delete(pm);
	return r;
}

/* The object cache falls back to the copy, and reads no code from it. */
static void test_cache(void)
{
	struct objcache *oc = objcache__new(NULL), *none = objcache__new(NULL);
	struct elf_file *orig = NULL;
	const struct elf_segment *segs, *text = NULL;
	struct objfile *o = NULL;
	struct elfcopy c;
	uint8_t id[64];
	size_t n, i;
	int in = open(self, O_RDONLY | O_CLOEXEC), len;

	CHECK(oc && none && in >= 0 && elf_file__open(self, &orig) == 0);
	if (!oc || !none || in < 0 || !orig)
		goto out;
	len = elf_file__build_id(orig, id, sizeof(id));
	segs = elf_file__segments(orig, &n);
	for (i = 0; i < n && !text; i++)
		if (segs[i].flags & PF_X)
			text = &segs[i];
	CHECK(len > 0 && text);
	if (len <= 0 || !text)
		goto out;
	CHECK(elfcopy__extract(in, ELFCOPY_UNWIND | ELFCOPY_SYMBOLS, &c) == 0);
	CHECK(objcache__add_copy(oc, id, (size_t)len, &c) == 0 && c.data == NULL);

	CHECK(read_code(oc, self, id, (size_t)len, text, &o) == 0);
	CHECK(o && o->status == OBJFILE_OK && !o->from_copy);
	CHECK(read_code(oc, "/nonexistent/ljsnap/test", id, (size_t)len, text, &o) == -EFAULT);
	CHECK(o && o->status == OBJFILE_OK && o->from_copy && o->file_status == OBJFILE_MISSING &&
	      o->verified && o->ef);
	if (access("/bin/sh", R_OK) == 0) {
		CHECK(read_code(oc, "/bin/sh", id, (size_t)len, text, &o) == -EFAULT);
		CHECK(o && o->from_copy && o->file_status == OBJFILE_MISMATCH);
	}
	CHECK(read_code(none, "/nonexistent/ljsnap/test", id, (size_t)len, text, &o) == -EFAULT);
	CHECK(o && o->status == OBJFILE_MISSING && !o->from_copy);
out:
	if (in >= 0)
		close(in);
	elf_file__delete(orig);
	objcache__delete(oc);
	objcache__delete(none);
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = 0;
	test_copy();
	test_init();
	test_cache();
	printf("test_elfcopy: %d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
