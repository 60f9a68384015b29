/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * native_space.c -- one libdw Dwfl per mapping set (see native.h): the
 * CFI-bearing files reported as modules at their load biases, a bare x86_64
 * ELF header for the architecture, our thread callbacks attached; looked up
 * by content, least recently used evicted.
 */
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/native_int.h"

/* FNV-1a over bytes. */
static uint64_t native__fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

/* Compute the key of a mapping set from its contents. */
void native_maps__init(struct native_maps *m, const struct native_map *v, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	m->v = v;
	m->n = n;
	for (i = 0; v && i < n; i++) {
		const char *p = v[i].path ? v[i].path : "";

		h = native__fnv(h, &v[i].start, sizeof(v[i].start));
		h = native__fnv(h, &v[i].end, sizeof(v[i].end));
		h = native__fnv(h, &v[i].bias, sizeof(v[i].bias));
		h = native__fnv(h, &v[i].flags, sizeof(v[i].flags));
		h = native__fnv(h, p, strlen(p) + 1);
	}
	m->key = h;
}

/* Separate debug files are not searched unless asked (see native_unw_opts). */
static int native__no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				Dwarf_Addr base, const char *file_name, const char *debuglink_file,
				GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks native__dwfl_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = native__no_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static const Dwfl_Callbacks native__dwfl_cb_debug = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* Free an address space. */
void native_space__delete(struct native_space *s)
{
	size_t i;

	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	if (s->arch_elf)
		elf_end(s->arch_elf);
	for (i = 0; s->maps && i < s->n; i++)
		free(s->maps[i].path);
	free(s->maps);
	free(s->sorted);
	intmap__exit(&s->rule_idx);
	intmap__exit(&s->rule_uniq);
	free(s->rules);
	free(s);
}

/* Does a space hold exactly this mapping set? */
static int native_space__same(const struct native_space *s, const struct native_maps *m)
{
	size_t i;

	if (s->key != m->key || s->n != m->n)
		return 0;
	if (s->last_v == m->v)	/* same array, same key: compared before */
		return 1;
	for (i = 0; i < m->n; i++) {
		const struct native_map *a = &m->v[i];
		const struct native_smap *b = &s->maps[i];

		if (a->start != b->start || a->end != b->end || a->bias != b->bias ||
		    a->flags != b->flags || strcmp(a->path ? a->path : "", b->path) != 0)
			return 0;
	}
	return 1;
}

/* Order of mapping indexes by start address (qsort_r comparator). */
static int native__cmp_start(const void *a, const void *b, void *arg)
{
	const struct native_smap *maps = arg;
	uint64_t x = maps[*(const uint32_t *)a].start, y = maps[*(const uint32_t *)b].start;

	return x < y ? -1 : x > y;
}

/* Report the CFI-bearing files of s to its Dwfl, one module per (path, bias). */
static void native_space__report(struct native_unw *u, struct native_space *s)
{
	size_t i, j;

	dwfl_report_begin(s->dwfl);
	for (i = 0; i < s->n; i++) {
		struct native_smap *m = &s->maps[i];
		Dwfl_Module *mod = NULL;
		const char *base;

		if (!(m->flags & NATIVE_MAP_CFI) || !m->path[0])
			continue;
		for (j = 0; j < i; j++)	/* same file, same bias: one module */
			if (s->maps[j].has_mod && s->maps[j].bias == m->bias &&
			    strcmp(s->maps[j].path, m->path) == 0)
				break;
		if (j < i) {
			m->has_mod = 1;
			continue;
		}
		base = strrchr(m->path, '/');
		mod = dwfl_report_elf(s->dwfl, base ? base + 1 : m->path, m->path, -1, m->bias, true);
		if (mod) {
			m->has_mod = 1;
			u->st.modules_reported++;
		} else {
			u->st.modules_failed++;
		}
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
}

/* Build the minimal x86_64 ELF header that tells libdw the architecture. */
static int native_space__arch(struct native_space *s)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)s->ehdr;

	memset(eh, 0, sizeof(*eh));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_CORE;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	elf_version(EV_CURRENT);
	s->arch_elf = elf_memory((char *)s->ehdr, sizeof(s->ehdr));
	return s->arch_elf ? 0 : -ENOMEM;
}

/* Create the address space of a mapping set. */
static int native_space__new(struct native_unw *u, const struct native_maps *m,
			     struct native_space **out)
{
	struct native_space *s = calloc(1, sizeof(*s));
	size_t i;
	int err = -ENOMEM;

	if (!s)
		goto out;
	s->key = m->key;
	s->n = m->n;
	s->maps = calloc(m->n ? m->n : 1, sizeof(*s->maps));
	s->sorted = calloc(m->n ? m->n : 1, sizeof(*s->sorted));
	if (!s->maps || !s->sorted)
		goto out;
	for (i = 0; i < m->n; i++) {
		s->maps[i].start = m->v[i].start;
		s->maps[i].end = m->v[i].end;
		s->maps[i].bias = m->v[i].bias;
		s->maps[i].flags = m->v[i].flags;
		s->maps[i].idx = (uint32_t)i;
		s->maps[i].path = strdup(m->v[i].path ? m->v[i].path : "");
		if (!s->maps[i].path)
			goto out;
		s->sorted[i] = (uint32_t)i;
	}
	qsort_r(s->sorted, s->n, sizeof(*s->sorted), native__cmp_start, s->maps);
	s->dwfl = dwfl_begin(u->opts.debuginfo ? &native__dwfl_cb_debug : &native__dwfl_cb);
	if (!s->dwfl)
		goto out;
	native_space__report(u, s);
	err = native_space__arch(s);
	if (err)
		goto out;
	if (!dwfl_attach_state(s->dwfl, s->arch_elf, 1, &native__thread_cb, u)) {
		err = -EINVAL;
		goto out;
	}
	u->st.spaces_created++;
	*out = s;
	s = NULL;
	err = 0;
out:
	native_space__delete(s);
	return err;
}

/* Find or create the address space of m (evicting the least recently used). */
int native__space(struct native_unw *u, const struct native_maps *m, struct native_space **out)
{
	size_t i, lru = 0;
	int err;

	for (i = 0; i < u->nspaces; i++) {
		if (native_space__same(u->spaces[i], m)) {
			*out = u->spaces[i];
			(*out)->last_v = m->v;
			(*out)->last_used = ++u->clock;
			return 0;
		}
		if (u->spaces[i]->last_used < u->spaces[lru]->last_used)
			lru = i;
	}
	if (u->nspaces == u->opts.max_spaces) {
		native_space__delete(u->spaces[lru]);
		u->spaces[lru] = u->spaces[--u->nspaces];
		u->st.spaces_evicted++;
	}
	err = native_space__new(u, m, out);
	if (err)
		return err;
	(*out)->last_used = ++u->clock;
	(*out)->last_v = m->v;
	u->spaces[u->nspaces++] = *out;
	return 0;
}

/* Mapping containing addr (position in the space's arrays), or NULL. */
const struct native_smap *native_space__find(struct native_space *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n, m = (size_t)(addr ^ addr >> 6 ^ addr >> 12) &
					  (NATIVE_RULE_MEMO - 1);

	/* The space's mappings never change: an address found stays found. */
	if (s->find_memo[m].idx1 && s->find_memo[m].addr == addr)
		return &s->maps[s->find_memo[m].idx1 - 1];
	while (lo < hi) {	/* first mapping with start > addr */
		size_t mid = lo + (hi - lo) / 2;

		if (s->maps[s->sorted[mid]].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= s->maps[s->sorted[lo - 1]].end)
		return NULL;
	s->find_memo[m].addr = addr;
	s->find_memo[m].idx1 = (uint64_t)s->sorted[lo - 1] + 1;
	return &s->maps[s->sorted[lo - 1]];
}
