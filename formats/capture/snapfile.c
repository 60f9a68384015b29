/* SPDX-License-Identifier: GPL-2.0-or-later */
/* snapfile.c -- capture file helpers shared by the writer, the reader and info. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include "formats/capture/snapfile_int.h"

#define R(n) { #n, offsetof(struct ljs_regs, n) }

/* struct ljs_regs, member by member (a sample stores them in this order). */
const struct snapfile_reg_field snapfile__regs[] = {
	R(r15), R(r14), R(r13), R(r12), R(bp), R(bx), R(r11), R(r10), R(r9), R(r8),
	R(ax), R(cx), R(dx), R(si), R(di), R(orig_ax), R(ip), R(cs), R(flags), R(sp), R(ss),
};

const size_t snapfile__nregs = sizeof(snapfile__regs) / sizeof(snapfile__regs[0]);

/* A member added to struct ljs_regs must be added to the table above. */
_Static_assert(sizeof(struct ljs_regs) == sizeof(snapfile__regs) / sizeof(snapfile__regs[0]) * 8,
	       "snapfile__regs must name every member of struct ljs_regs");
_Static_assert(sizeof(struct ljs_regs) <= SNAPFILE_REGS_MAX * 8, "raise SNAPFILE_REGS_MAX");

/* Explain an error returned by this module (format errors and errno). */
const char *snapfile__strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case SNAPFILE_E_NOTCAPTURE:
		return "not an ljsnap capture file (no magic at its start)";
	case SNAPFILE_E_NEWER:
		return "the capture file was written by a newer, incompatible ljsnap: "
		       "read it with that version or newer";
	case SNAPFILE_E_TRUNCHDR:
		return "the capture file ends inside its header (the recording was stopped "
		       "before it started, or the file was cut)";
	case SNAPFILE_E_CORRUPT:
		return "corrupt record in the capture file (checksum or encoding error)";
	case -E2BIG:
		return "record larger than the capture file format allows";
	case -ENOSPC:
		return "no space left on the device holding the capture file: free space "
		       "or record to another file system";
	default:
		return strerror(err < 0 ? -err : err);
	}
}

/* Name of a record kind ("sample"...), "unknown" otherwise. */
const char *snapfile__kind_name(int kind)
{
	static const char *const names[SNAPFILE_REC__MAX] = {
		[SNAPFILE_REC_HEADER] = "header",
		[SNAPFILE_REC_PROCESS] = "process",
		[SNAPFILE_REC_SAMPLE] = "sample",
		[SNAPFILE_REC_MEMORY] = "memory",
		[SNAPFILE_REC_KSYMS] = "ksyms",
		[SNAPFILE_REC_STATS] = "stats",
		[SNAPFILE_REC_END] = "end",
		[SNAPFILE_REC_OBJECT] = "object",
		[SNAPFILE_REC_EMBED] = "embed",
	};

	if (kind <= 0 || kind >= SNAPFILE_REC__MAX)
		return "unknown";
	return names[kind];
}

/* Read a clock in ns (0 if it is unavailable). */
static uint64_t snapfile__clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Take CLOCK_MONOTONIC and CLOCK_REALTIME at (nearly) the same moment:
 * the realtime read bracketed by the tightest pair of monotonic reads. */
void snapfile__clock_ref(uint64_t *mono_ns, uint64_t *real_ns)
{
	uint64_t best = UINT64_MAX;
	int i;

	*mono_ns = 0;
	*real_ns = 0;
	for (i = 0; i < 5; i++) {
		uint64_t m1 = snapfile__clock_ns(CLOCK_MONOTONIC);
		uint64_t r = snapfile__clock_ns(CLOCK_REALTIME);
		uint64_t m2 = snapfile__clock_ns(CLOCK_MONOTONIC);

		if (m2 >= m1 && m2 - m1 < best) {
			best = m2 - m1;
			*mono_ns = m1 + (m2 - m1) / 2;
			*real_ns = r;
		}
	}
}

/* Convert a sample time (CLOCK_MONOTONIC ns) to wall-clock ns. */
uint64_t snapfile_header__wall_ns(const struct snapfile_header *h, uint64_t mono_ns)
{
	if (mono_ns >= h->mono_ns)
		return h->real_ns + (mono_ns - h->mono_ns);
	if (h->mono_ns - mono_ns > h->real_ns)
		return 0;
	return h->real_ns - (h->mono_ns - mono_ns);
}
