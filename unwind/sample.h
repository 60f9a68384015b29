/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sample.h -- one decoded sample, as the walker sees it.
 *
 * A sample is the registers plus a list of byte windows ("sections") copied
 * from the target at sample time, tagged with their kind and address.  The
 * same struct is produced by the ring-buffer parser (daemon), by the capture
 * file reader (formats) and by the in-process test harness.  Section data
 * points into memory owned by whoever produced the sample.
 */
#ifndef LJSNAP_SAMPLE_H
#define LJSNAP_SAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include "bpf/ljsnap.h"

#define LJS_SAMPLE_MAX_SECS 32

struct ljs_section {
	uint16_t kind;		/* enum ljs_sec_kind */
	uint16_t status;	/* enum ljs_sec_status */
	uint32_t len;		/* bytes at data */
	uint32_t want;		/* bytes wanted at capture time */
	uint32_t aux;		/* resumer depth for RES_* kinds */
	uint64_t addr;		/* target address of data[0] */
	const uint8_t *data;
};

struct ljs_sample {
	uint64_t time_ns;
	uint32_t pid, tid, cpu, flags;	/* LJS_SAMPLE_F_* */
	char comm[LJS_COMM_LEN];
	struct ljs_regs regs;
	uint64_t g;			/* global_State address or 0 */
	uint32_t cfg_gen;
	uint32_t nsec;
	struct ljs_section sec[LJS_SAMPLE_MAX_SECS];
};

/* First section of a kind (and aux, or any aux when aux < 0), or NULL. */
const struct ljs_section *ljs_sample__section(const struct ljs_sample *s, int kind, int aux);

/* Parse a raw ring-buffer sample record into s (data points into rec).
 * Returns 0 or -EINVAL when the record is malformed. */
int ljs_sample__parse_raw(struct ljs_sample *s, const void *rec, size_t size);

#endif /* LJSNAP_SAMPLE_H */
