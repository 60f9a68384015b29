/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record.h -- state of one `ljsnap record` run, shared by its parts
 * (record.c: the main loop; record_opts.c: options; inspect.c: process
 * inspection; harvest.c: memory the walker needs).
 */
#ifndef LJSNAP_RECORD_H
#define LJSNAP_RECORD_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include "daemon/bpfload.h"
#include "daemon/embed.h"
#include "daemon/proctab.h"
#include "daemon/vdso.h"
#include "formats/capture/snapfile.h"
#include "unwind/ljwalk.h"

struct harvest;
struct ksym_ipset;
struct ljs_sample;
struct lj_proc_detect;
struct procmap_desc;
struct rr_batch;

/* The ranges of record's options. */
#define RECORD_FREQ_MAX		100000		/* -F, Hz */
#define RECORD_DURATION_MAX	31536000	/* -d, seconds (a year) */
#define RECORD_RINGBUF_MB_MAX	1024		/* --ringbuf-mb: the size must fit the map's u32 */
#define RECORD_PID_MAX		4194304		/* -p: the kernel's PID_MAX_LIMIT */
#define RECORD_CPU_PCT_DEFAULT	10		/* --max-cpu-percent */
#define RECORD_FREQ_START	1000		/* Hz: higher -F is reached step by step */

struct record_opts {
	uint32_t *pids;		/* -p */
	int npids;
	size_t pidcap;
	int all;		/* -a */
	uint32_t freq;		/* -F, 1..RECORD_FREQ_MAX */
	double duration;	/* -d, 0 = until Ctrl-C or the command exits */
	const char *output;	/* -o */
	uint32_t stack_bytes;
	uint32_t lstack_bytes;
	uint32_t ringbuf_mb;
	uint32_t max_procs;	/* --max-procs, 0: the BPF maps' defaults */
	uint32_t max_cpu_pct;	/* --max-cpu-percent, 1..100 */
	int quiet;
	int debug_info;		/* --debug-info: embed line tables and inline information */
	int no_embed;		/* --no-embed */
	int bpf_timing;		/* --bpf-timing */
	char **cmd;		/* -- COMMAND ARGS */
};

/* The sampling rate as bounded by its cost (record_rate.c). */
struct record_rate {
	uint32_t freq;		/* the rate now, Hz */
	uint32_t held;		/* the rate the cost last held us at */
	int ncpus;		/* CPUs sampled */
	int unmeasured;		/* no run-time statistics: not bounded */
	int stop;		/* the rate could not be changed */
	uint64_t t_ns, run_ns, runs, samples;	/* at the last measurement */
	int by_busy;		/* the events skip the idle task: runs are counted
				 * against the CPUs' busy time, not the wall clock */
	int64_t busy;		/* their busy clock ticks (/proc/stat) when the
				 * interval of busy time started, or -1 */
	uint64_t busy_runs;	/* the program's runs then */
	uint64_t cost_ns;	/* BPF run time per target sample, last measured */
	uint64_t limited;	/* times the cost lowered the rate or held it below -F */
	uint64_t limited_at;	/* when it first did */
};

/* What a live view (daemon/top.c) adds to the record loop; every member
 * may be NULL.  Called from the loop's thread. */
struct recorder;
struct record_hooks {
	/* every sample, after the recorder took it (p NULL: not a target) */
	void (*sample)(void *arg, const struct proc *p, const struct ljs_sample *s);
	/* a process was inspected (again): its mappings and LuaJIT (pd) */
	void (*process)(void *arg, const struct proc *p, const struct lj_proc_detect *pd);
	/* a process exited */
	void (*exited)(void *arg, const struct proc *p);
	/* from the loop at least every tick_ms (rc: the running recorder, for
	 * its BPF counters): nonzero ends the recording */
	int (*tick)(void *arg, struct recorder *rc, uint64_t now_ns);
	int tick_ms;
};

struct recorder {
	struct record_opts o;	/* o.output NULL: no capture file (a live view) */
	const char *cmd;	/* the command in messages ("top"); NULL: "record" */
	const struct record_hooks *hooks;
	void *hook_arg;
	struct bpfload bl;
	struct ring_buffer *rb;
	struct snapfile_writer *w;
	struct proctab pt;
	pid_t child;		/* the command we started, 0 if none */
	int child_status;
	int child_done;
	uint64_t samples;	/* sample records written */
	uint64_t bad_records;	/* malformed ring-buffer records */
	uint64_t sample_records; /* sample records taken off the ring buffer */
	uint64_t samples_bad;	/* ... of them malformed, so not written */
	uint64_t samples_write_failed; /* ... of them the writer refused */
	uint64_t g_found_saved;	/* g_hints found in saved words (inspect__find_g) */
	uint64_t task_events;
	uint64_t sample_bytes;	/* raw record bytes of samples */
	int werr;		/* first write error (sticky) */
	int live_targets;	/* -p/command mode: targets still alive */
	uint32_t cfg_gen;	/* last configuration generation handed out */
	struct harvest *hv;	/* memory the walker needs, kept in the file */
	struct ljw *walker;
	uint64_t walked, walked_complete;	/* LuaJIT samples walked while recording */
	uint64_t walk_ns;	/* time spent walking and harvesting */
	uint64_t batch_ns;	/* the harvest batch of the walks (harvest__batch) */
	uint64_t walk_skipped;	/* LuaJIT samples not walked: the recorder was behind */
	uint64_t lj_last_ns;	/* time of the last LuaJIT sample (sets the poll timeout) */
	uint64_t cpu_loop_ns;	/* the recorder's CPU time in its sampling loop */
	struct rr_batch *rr;	/* batched reads of the harvest (record_readv.c) */
	uint64_t map_failures;	/* BPF map updates that failed (a process not sampled,
				 * or sampled without its LuaJIT layout) */
	struct ksym_ipset *kips;	/* kernel IPs seen, symbolized at the end */
	int ksyms_cached;		/* ... from the per-boot copy (ksyms_cache.h) */
	struct vdso_image vdso;		/* carried in the file; tags [vdso] mappings */
	struct embedder emb;		/* copies of the mapped files carried in the file */
	struct record_rate rate;
	uint32_t batch;		/* records handled since the loop last had control */
};

/* Parse `ljsnap record`'s command line into o (record_opts.c); 0, 1 (help
 * printed) or negative errno (reported). */
int record_opts__parse(struct record_opts *o, int argc, char **argv);

/* The defaults of every option but -o (no file); -p's list of pids added
 * to o->pids: 0, -EINVAL or -ENOMEM (for the live views' options). */
void record_opts__defaults(struct record_opts *o);
int record_opts__pids(struct record_opts *o, const char *arg);

/* The options record and the live views share: -p, -a, -F, -d and -o.  1
 * when option c is one of them (taken into o), 0 when it is not, -EINVAL
 * for a bad value (said in one line as "ljsnap CMD: ..."). */
int record_opts__target(struct record_opts *o, int c, const char *arg, const char *cmd);

/* After the options (getopt's optind): the command after them, exactly one
 * kind of target (else the message and usage), and a rate the kernel
 * allows.  0 or -EINVAL (said). */
int record_opts__finish(struct record_opts *o, int argc, char **argv, const char *cmd,
			void (*print_usage)(FILE *));

/* Record with the parsed options o (and hooks, when set) until a signal,
 * the duration, the targets' end or a hook says stop; prints the summary
 * unless o.quiet.  Frees what it set up (not o.pids); the exit status. */
int record__run(struct recorder *rc);

/* The command's name for messages: rc->cmd, or "record". */
static inline const char *record__cmd(const struct recorder *rc)
{
	return rc->cmd ? rc->cmd : "record";
}

/* The mappings of a detection result as the pipeline (ljs_pipe__proc) and
 * the PROCESS record take them, the [vdso] one with vdso's build id when
 * it is the same image (vdso may be NULL): malloc'ed, *n entries, pointing
 * into pd; NULL when there are none or no memory. */
struct procmap_desc *inspect__maps(const struct lj_proc_detect *pd, const struct vdso_image *vdso,
				   uint32_t pid, size_t *n);

/* Bound the sampling rate by its measured cost (record_rate.c): open the
 * perf events at record_rate__first, start once the BPF program is
 * attached, check from the loop (every 100 ms it may raise the rate towards
 * -F, lower it, or set rate.stop), and add its four STATS entries and its
 * summary line at the end. */
uint32_t record_rate__first(const struct record_opts *o);
void record_rate__start(struct recorder *rc, uint64_t now);
void record_rate__check(struct recorder *rc, uint64_t now);
size_t record_rate__stats(struct recorder *rc, uint64_t now, struct snapfile_stat *st);
void record_rate__summary(struct recorder *rc, uint64_t now);

/* Inspect a process (maps, ELF files, LuaJIT detection), push its BPF
 * configuration and write its PROCESS record.  Never fails the recording:
 * problems are noted in the process record and on stderr. */
void inspect__process(struct recorder *rc, struct proc *p, uint64_t now_ns);

/* Count a BPF map update that failed with err (what: what it was for); the
 * first one is said on stderr. */
void record__map_failed(struct recorder *rc, uint32_t pid, const char *what, int err);

/* Called for every sample of a LuaJIT process: the first time a sample
 * gives a g (or, when none does, a DISPATCH register in the interpreter or
 * a GC64 trace), calibrate the layout from live memory
 * (lj_detect__calibrate_live) and, if it differs from the detected one,
 * republish the BPF configuration and the PROCESS record.  A few bounded
 * attempts per process; cheap once done. */
void inspect__sample(struct recorder *rc, struct proc *p, const struct ljs_sample *s);

/* A LuaJIT sample that found no global_State, in a process none is known
 * for yet (the threads run C code that clobbers r14, or traces that do not
 * keep DISPATCH): look for DISPATCH or a lua_State among its registers and
 * stack words (lj_detect__g_from_words): the g that validates, for the
 * caller to publish as the process's g_hint so that BPF finds g in the
 * samples that follow, or 0.  Rate limited per process, backing off while
 * nothing is found. */
uint64_t inspect__find_g(struct proc *p, const struct ljs_sample *s);

/* Inspect p again if its mappings may have changed since the last time:
 * a sample of it (s, or NULL from the timer at now_ns) ran outside the
 * executable mappings seen then, or the next periodic look is due (soon
 * after a change, then ever less often).  Only for processes sampled since
 * their last inspection: idle ones cost nothing. */
void inspect__again(struct recorder *rc, struct proc *p, const struct ljs_sample *s,
		    uint64_t now_ns);

/* Batched reads of a target's memory (record_readv.c): harvest__prefetch
 * for the current sample of pid, many ranges per process_vm_readv. */
struct rr_batch *rr_batch__new(void);
void rr_batch__delete(struct rr_batch *b);
void rr_batch__prefetch(struct rr_batch *b, struct harvest *hv, pid_t pid);

/* Write the KSYMS records: the kernel symbols that resolve every kernel IP
 * seen (record_ksyms.c). */
void record__write_ksyms(struct recorder *rc);

/* Write an exit note for a process. */
void inspect__exited(struct recorder *rc, struct proc *p, uint64_t now_ns);

#endif
