/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vmrange.c -- find the interpreter code range of the LuaJIT this harness
 * is linked with (libluajit*.so, or libluajit.a linked in statically): the FDE of the "zPR" CIE (personality
 * lj_err_unwind_dwarf) in the library's mapped .eh_frame, found with
 * symtab/ehframe.c, plus a build-id keyed fallback table.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "symtab/ehframe.h"
#include "tests/harness/harness.h"

/* The VM is the FDE of the "zPR" CIE (lj_err_unwind_dwarf) in libluajit's
 * .eh_frame, found with symtab/ehframe.c in the mapped library.  FALLBACK,
 * used only if that fails: ranges read once with readelf --debug-dump=frames,
 * keyed by build id. */
static const struct { const char *build_id; uint64_t lo, hi; } known_vm[] = {
	/* Debian bookworm libluajit-5.1-2 2.1.0~beta3+git20220320+dfsg-4.1+deb12u1 */
	{ "2e18b5eadde600273e47ba2f83a1df8b6a5b2540", 0x8d70, 0xcdb5 },
};

struct vm_find {
	uint64_t api;		/* address of lua_gettop: tells which object is LuaJIT */
	uint64_t base;
	char build_id[64];
	int found;
	uint64_t eh_lo, eh_hi;	/* link-time [lo, hi) of the VM from .eh_frame */
};

/* Decode the eh_frame_ptr of .eh_frame_hdr at hdr; 0 if unsupported. */
static uint64_t ehhdr__frame_ptr(const unsigned char *hdr)
{
	int32_t s32;
	uint32_t u32;

	if (hdr[0] != 1)
		return 0;
	switch (hdr[1]) {
	case EHF_PE_PCREL | EHF_PE_SDATA4:
		memcpy(&s32, hdr + 4, 4);
		return (uint64_t)(uintptr_t)(hdr + 4) + (uint64_t)(int64_t)s32;
	case EHF_PE_UDATA4:
		memcpy(&u32, hdr + 4, 4);
		return u32;
	default:
		return 0;
	}
}

/* Find the VM FDE in the mapped .eh_frame (bounded by its PT_LOAD). */
static void vm__ehframe(struct dl_phdr_info *info, struct vm_find *vf)
{
	const unsigned char *hdr = NULL;
	uint64_t eh = 0, seg_end = 0;
	struct ehframe ef;
	struct ehf_lj_vm vm;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = (const unsigned char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!hdr || !(eh = ehhdr__frame_ptr(hdr)))
		return;
	if (eh < info->dlpi_addr)
		eh += info->dlpi_addr;	/* absolute (link-time) encoding */
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && eh >= lo && eh < lo + ph->p_filesz)
			seg_end = lo + ph->p_filesz;
	}
	if (!seg_end)
		return;
	ehframe__init(&ef, (const uint8_t *)(uintptr_t)eh, (size_t)(seg_end - eh),
		      eh - info->dlpi_addr);
	if (ehframe__find_lj_vm(&ef, &vm) == 0) {
		vf->eh_lo = vm.lo;
		vf->eh_hi = vm.hi;
	}
}

/* Does a PT_LOAD segment of the object hold addr? */
static int vm__holds(const struct dl_phdr_info *info, uint64_t addr)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && addr >= lo && addr < lo + ph->p_memsz)
			return 1;
	}
	return 0;
}

/* dl_iterate_phdr callback: the load base, build id and VM FDE of the
 * object that holds LuaJIT (libluajit*.so, or this executable when it links
 * libluajit.a statically). */
static int vm__phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct vm_find *vf = arg;
	int i;

	(void)size;
	if (!vm__holds(info, vf->api))
		return 0;
	vf->base = info->dlpi_addr;
	vf->found = 1;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			const unsigned char *name = p + sizeof(*nh);
			const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);
			unsigned j;

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz <= 31)
				for (j = 0; j < nh->n_descsz; j++)
					sprintf(vf->build_id + 2 * j, "%02x", desc[j]);
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	vm__ehframe(info, vf);
	return 1;
}

/* Find the interpreter range of the loaded libluajit; 0 or -1. */
int vm__range(uint64_t *lo, uint64_t *hi)
{
	struct vm_find vf = { 0 };
	size_t i;

	vf.api = (uint64_t)(uintptr_t)lua_gettop;
	dl_iterate_phdr(vm__phdr, &vf);
	if (!vf.found) {
		fprintf(stderr, "harness: no loaded object holds lua_gettop (link with pkg-config luajit)\n");
		return -1;
	}
	if (vf.eh_hi) {
		*lo = vf.base + vf.eh_lo;
		*hi = vf.base + vf.eh_hi;
		return 0;
	}
	for (i = 0; i < sizeof(known_vm) / sizeof(known_vm[0]); i++) {
		if (!strcmp(known_vm[i].build_id, vf.build_id)) {
			fprintf(stderr, "harness: VM FDE not found in .eh_frame; using the "
				"known range of build %s\n", vf.build_id);
			*lo = vf.base + known_vm[i].lo;
			*hi = vf.base + known_vm[i].hi;
			return 0;
		}
	}
	fprintf(stderr, "harness: no VM FDE in libluajit's .eh_frame and unknown build id %s: "
		"add its VM range to known_vm[] (readelf --debug-dump=frames, CIE \"zPR\")\n",
		vf.build_id);
	return -1;
}
