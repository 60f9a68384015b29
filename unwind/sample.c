/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sample.c -- decode a raw ring-buffer sample record into struct ljs_sample.
 */
#include <errno.h>
#include <string.h>
#include "unwind/sample.h"

/* First section of a kind (and aux, or any aux when aux < 0), or NULL. */
const struct ljs_section *ljs_sample__section(const struct ljs_sample *s, int kind, int aux)
{
	uint32_t i;

	for (i = 0; i < s->nsec && i < LJS_SAMPLE_MAX_SECS; i++) {
		if (s->sec[i].kind == kind && (aux < 0 || s->sec[i].aux == (uint32_t)aux))
			return &s->sec[i];
	}
	return NULL;
}

/* Parse a raw record (struct ljs_sample_hdr + sections); data points into rec. */
int ljs_sample__parse_raw(struct ljs_sample *s, const void *rec, size_t size)
{
	const uint8_t *p = rec;
	struct ljs_sample_hdr h;
	size_t off;
	uint32_t i;

	if (size < sizeof(h))
		return -EINVAL;
	memcpy(&h, p, sizeof(h));
	if (h.type != LJS_REC_SAMPLE || h.size > size || h.size < sizeof(h))
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->time_ns = h.time_ns;
	s->pid = h.pid;
	s->tid = h.tid;
	s->cpu = h.cpu;
	s->flags = h.flags;
	memcpy(s->comm, h.comm, sizeof(s->comm));
	s->comm[sizeof(s->comm) - 1] = 0;
	s->regs = h.regs;
	s->g = h.g;
	s->cfg_gen = h.cfg_gen;
	off = sizeof(h);
	for (i = 0; i < h.nsec; i++) {
		struct ljs_sec_hdr sh;
		struct ljs_section *d;

		if (off + sizeof(sh) > h.size)
			return -EINVAL;
		memcpy(&sh, p + off, sizeof(sh));
		off += sizeof(sh);
		if (sh.len > h.size - off)
			return -EINVAL;
		if (s->nsec < LJS_SAMPLE_MAX_SECS) {
			d = &s->sec[s->nsec++];
			d->kind = sh.kind;
			d->status = sh.status;
			d->len = sh.len;
			d->want = sh.want;
			d->aux = sh.aux;
			d->addr = sh.addr;
			d->data = p + off;
		}
		off += (sh.len + 7) & ~(size_t)7;
		if (off > h.size)
			off = h.size;
	}
	return 0;
}
