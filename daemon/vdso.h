/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vdso.h -- the kernel's vDSO image, carried in the capture so that report
 * can name the frames in it ("[vdso]" has no file on any machine).
 *
 * Every 64-bit process on one kernel maps the same image; the recorder
 * copies its own and checks, per process, that the mapping holds the same
 * ELF header before it tags that mapping with the image's build id.
 */
#ifndef LJSNAP_VDSO_H
#define LJSNAP_VDSO_H

#include <stddef.h>
#include <stdint.h>

#define VDSO_BUILD_ID_MAX	64

struct vdso_image {
	uint8_t *data;			/* NULL: none */
	size_t len;
	uint8_t build_id[VDSO_BUILD_ID_MAX];
	int build_id_len;		/* 0 when the image has none */
};

/* Copy this process's vDSO (AT_SYSINFO_EHDR, size from /proc/self/maps).
 * 0, -ENOENT (no vDSO) or -ENOMEM. */
int vdso__self(struct vdso_image *v);
void vdso__exit(struct vdso_image *v);

/* Whether pid's mapping [start, end) holds the image v (same size, same
 * ELF header, read with process_vm_readv). */
int vdso__same(const struct vdso_image *v, int pid, uint64_t start, uint64_t end);

#endif
