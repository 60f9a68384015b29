/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vdso.c -- this process's vDSO image; see vdso.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "unwind/detect/livemem.h"
#include "daemon/vdso.h"
#include "symtab/elf.h"

#define VDSO_MAX_LEN	(1u << 20)	/* a real vDSO is 2 pages */
#define VDSO_HDR_LEN	64		/* the ELF header compared per process */

/* The size of the mapping starting at addr in /proc/self/maps, or 0. */
static size_t self_mapping_len(uint64_t addr)
{
	char line[512];
	size_t len = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t lo, hi;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) == 2 && lo == addr && hi > lo) {
			len = (size_t)(hi - lo);
			break;
		}
	}
	fclose(f);
	return len;
}

/* Copy this process's vDSO; see vdso.h. */
int vdso__self(struct vdso_image *v)
{
	uint64_t addr = getauxval(AT_SYSINFO_EHDR);
	struct elf_file *ef = NULL;
	size_t len;
	int n;

	memset(v, 0, sizeof(*v));
	len = addr ? self_mapping_len(addr) : 0;
	if (!len || len > VDSO_MAX_LEN)
		return -ENOENT;
	v->data = malloc(len);
	if (!v->data)
		return -ENOMEM;
	memcpy(v->data, (const void *)(uintptr_t)addr, len);
	v->len = len;
	if (elf_file__open_mem(v->data, len, "[vdso]", &ef) == 0) {
		n = elf_file__build_id(ef, v->build_id, sizeof(v->build_id));
		v->build_id_len = n > 0 ? n : 0;
		elf_file__delete(ef);
	}
	return 0;
}

/* Free the copy. */
void vdso__exit(struct vdso_image *v)
{
	free(v->data);
	memset(v, 0, sizeof(*v));
}

/* Whether pid maps the same image at [start, end); see vdso.h. */
int vdso__same(const struct vdso_image *v, int pid, uint64_t start, uint64_t end)
{
	uint8_t hdr[VDSO_HDR_LEN];
	struct livemem lm;
	struct memsrc ms;

	if (!v->data || v->len < sizeof(hdr) || end - start != v->len)
		return 0;
	livemem__init(&ms, &lm, pid, NULL);
	return ms.read(&ms, start, hdr, sizeof(hdr)) == 0 && !memcmp(hdr, v->data, sizeof(hdr));
}
