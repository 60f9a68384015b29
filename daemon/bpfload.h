/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bpfload.h -- load the sampling program, open the perf events, read counters.
 */
#ifndef LJSNAP_BPFLOAD_H
#define LJSNAP_BPFLOAD_H

#include <stdint.h>
#include "bpf/ljsnap.h"

struct ljsnap_bpf;
struct ring_buffer;

struct bpfload_opts {
	int filter_all;		/* -a */
	int self_pid;
	uint32_t freq_hz;
	uint32_t ustack_bytes;
	uint32_t ringbuf_bytes;	/* power of two, multiple of the page size */
	uint32_t max_procs;	/* entries of the target and configuration maps (0: defaults) */
	int run_stats;		/* hold BPF run-time statistics on while loaded */
	int timing;		/* time the parts of a sample (record --bpf-timing) */
};

#define BPFLOAD_TARGETS_DEFAULT	65536	/* processes sampled at once */
#define BPFLOAD_CFGS_DEFAULT	16384	/* LuaJIT processes configured at once */

struct bpfload {
	struct ljsnap_bpf *skel;
	int ncpus;
	int *pfd;		/* perf event fd per CPU, -1 if offline */
	struct bpf_link **links;
	int targets_fd, cfg_fd, errs_fd;
	int stats_fd;		/* bpf_enable_stats(BPF_STATS_RUN_TIME), or negative errno */
};

/* Open, configure, load and attach; fills *bl.  Negative errno on failure,
 * with a message in errbuf saying what to do. */
int bpfload__init(struct bpfload *bl, const struct bpfload_opts *o, char *errbuf, size_t errlen);
void bpfload__exit(struct bpfload *bl);
/* Disable the perf events: no sample is emitted after it (task events still are). */
int bpfload__stop(struct bpfload *bl);

/* Target set and per-process configuration. */
int bpfload__add_target(struct bpfload *bl, uint32_t pid);
int bpfload__del_target(struct bpfload *bl, uint32_t pid);
int bpfload__set_cfg(struct bpfload *bl, uint32_t pid, const struct ljs_proc_cfg *cfg);
int bpfload__del_cfg(struct bpfload *bl, uint32_t pid);

/* Sum of the per-CPU error counters (LJS_ERR__MAX entries). */
int bpfload__counters(struct bpfload *bl, uint64_t out[LJS_ERR__MAX]);
/* One of them (slot k: LJS_ERR_SAMPLES...), summed: one system call. */
int bpfload__counter(struct bpfload *bl, uint32_t k, uint64_t *out);

/* Ring-buffer fd for ring_buffer__new. */
int bpfload__ringbuf_fd(struct bpfload *bl);

/* Total BPF run time of every program loaded (sampling and tracepoints) and
 * the run count of the sampling program (non-zero only while run-time
 * statistics are on: opts.run_stats, or kernel.bpf_stats_enabled). */
int bpfload__prog_stats(struct bpfload *bl, uint64_t *run_ns, uint64_t *run_cnt);

/* Sample at hz from now on, on every CPU: 0 or the first negative errno. */
int bpfload__set_freq(struct bpfload *bl, uint32_t hz);

#endif
