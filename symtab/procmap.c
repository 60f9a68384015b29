/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procmap.c -- one process's recorded mappings resolved against the object
 * cache: which file, at which load bias, holds an address.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab/elf.h"
#include "symtab/procmap.h"

/* Order mappings by start. */
static int procmap__cmp(const void *a, const void *b)
{
	const struct procmap_ent *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Is a mapping path a kernel pseudo name ([vdso], [stack], [heap], ...)? */
static int procmap__pseudo(const char *path)
{
	return path[0] == '[' || path[0] == 0 || strncmp(path, "anon_inode:", 11) == 0 ||
	       strncmp(path, "/memfd:", 7) == 0 || strncmp(path, "/dev/", 5) == 0 ||
	       strncmp(path, "/SYSV", 5) == 0;
}

/* Load bias of one mapping.  The file page at map_off can hold the end of
 * one PT_LOAD segment and the start of the next (e.g. .rodata and the
 * RELRO part of .data), so when several segments fit, the one whose flags
 * match the mapping's permissions wins.  Only used on the first mapping of a
 * run (see procmap__biases), where the page is rarely shared.  0 or -ENOENT. */
static int procmap__bias(struct elf_file *ef, const struct procmap_ent *e, uint64_t *bias)
{
	static const uint64_t pages[] = { 4096, 16384, 65536 };
	const struct elf_segment *segs, *best = NULL;
	size_t n, i, p;
	int score, best_score = -1;

	segs = elf_file__segments(ef, &n);
	for (p = 0; p < sizeof(pages) / sizeof(pages[0]) && !best; p++) {
		for (i = 0; i < n; i++) {
			const struct elf_segment *s = &segs[i];
			uint64_t lo = s->offset & ~(pages[p] - 1);

			if (e->offset < lo || e->offset >= s->offset + (s->filesz ? s->filesz : 1))
				continue;
			score = !!(s->flags & PF_W) == !!(e->prot & PROCMAP_PROT_WRITE);
			score += !!(s->flags & PF_X) == !!(e->prot & PROCMAP_PROT_EXEC);
			if (score > best_score) {
				best = s;
				best_score = score;
			}
		}
	}
	if (!best)
		return -ENOENT;
	*bias = e->start - e->offset - best->vaddr + best->offset;
	return 0;
}

/* One bias per loaded copy of a file: a run of adjacent mappings of the same
 * object with growing offsets takes the bias of its lowest-offset mapping
 * (offset 0 in practice, which only the first segment can contain).  Per
 * mapping, the bias would be ambiguous where two segments share a page. */
static void procmap__biases(struct procmap *pm)
{
	size_t i = 0, j, k, lo;
	uint64_t bias;

	while (i < pm->n) {
		struct objfile *obj = pm->v[i].obj;

		for (j = i + 1; obj && j < pm->n && pm->v[j].obj == obj &&
		     pm->v[j].offset >= pm->v[j - 1].offset; j++)
			;
		if (obj && obj->ef) {
			for (lo = i, k = i; k < j; k++)
				if (pm->v[k].offset < pm->v[lo].offset)
					lo = k;
			if (procmap__bias(obj->ef, &pm->v[lo], &bias) == 0)
				for (k = i; k < j; k++) {
					pm->v[k].bias = bias;
					pm->v[k].has_bias = 1;
				}
		}
		i = j;
	}
}

/* Resolve one process's mappings. */
int procmap__new(struct objcache *c, const struct procmap_desc *maps, size_t n,
		 struct procmap **out)
{
	struct procmap *pm = NULL;
	size_t i, strsz = 0, at = 0;
	int err = -EINVAL;

	if (!c || !out || (n && !maps))
		goto out;
	err = -ENOMEM;
	for (i = 0; i < n; i++)
		strsz += strlen(maps[i].path ? maps[i].path : "") + 1;
	pm = calloc(1, sizeof(*pm));
	if (!pm || !(pm->v = calloc(n ? n : 1, sizeof(*pm->v))) ||
	    !(pm->strs = malloc(strsz + 1)))
		goto out;
	for (i = 0; i < n; i++) {
		const struct procmap_desc *m = &maps[i];
		struct procmap_ent *e = &pm->v[pm->n];
		const char *path = m->path ? m->path : "";

		if (m->end <= m->start)
			continue;
		e->start = m->start;
		e->end = m->end;
		e->offset = m->offset;
		e->prot = m->prot;
		e->path = strcpy(pm->strs + at, path);
		at += strlen(path) + 1;
		if (!procmap__pseudo(path)) {
			e->obj = objcache__get(c, path, m->build_id,
					       m->build_id ? m->build_id_len : 0);
			if (!e->obj)
				goto out;
		} else {
			/* [vdso], when the file carries that image */
			e->obj = objcache__image(c, path, m->build_id,
						 m->build_id ? m->build_id_len : 0);
		}
		pm->n++;
	}
	qsort(pm->v, pm->n, sizeof(*pm->v), procmap__cmp);
	procmap__biases(pm);
	*out = pm;
	pm = NULL;
	err = 0;
out:
	procmap__delete(pm);
	return err;
}

/* Free a procmap (the objects stay in the cache). */
void procmap__delete(struct procmap *pm)
{
	if (!pm)
		return;
	free(pm->v);
	free(pm->strs);
	free(pm);
}

/* The mapping containing addr. */
const struct procmap_ent *procmap__find(const struct procmap *pm, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!pm)
		return NULL;
	hi = pm->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < pm->v[lo - 1].end ? &pm->v[lo - 1] : NULL;
}

/* Read file-backed bytes of a read-only mapping. */
int procmap__read(const struct procmap *pm, uint64_t addr, void *buf, size_t len)
{
	const struct procmap_ent *e = procmap__find(pm, addr);

	/* A copy from the capture holds no code nor read-only data (its holes
	 * read as zeros: symtab/elfcopy.h), so nothing is read from it. */
	if (!e || !e->obj || !e->obj->ef || !e->has_bias || e->obj->status != OBJFILE_OK ||
	    e->obj->from_copy || (e->prot & PROCMAP_PROT_WRITE) || e->end - addr < len)
		return -EFAULT;
	return elf_file__read(e->obj->ef, addr - e->bias, buf, len) == 0 ? 0 : -EFAULT;
}
