/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bpfload.c -- skeleton lifecycle (open -> rodata and map sizes -> load ->
 * attach), one cpu-clock perf event per online CPU, counters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "daemon/bpfload.h"
#include "bpf/ljsnap.skel.h"

/* Do we hold the capabilities BPF sampling needs (CapEff of /proc/self/status)? */
static int have_caps(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	int ok = 0;

	if (!f)
		return geteuid() == 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	/* CAP_SYS_ADMIN (21) covers everything; else CAP_BPF (39) and CAP_PERFMON (38). */
	if (eff & (1ull << 21))
		ok = 1;
	else if ((eff & (1ull << 39)) && (eff & (1ull << 38)))
		ok = 1;
	return ok;
}

/* Say what to do about a permission problem; EACCES with every needed
 * capability held is the verifier refusing the program instead. */
static void perm_hint(char *errbuf, size_t errlen, const char *what, int err)
{
	if (have_caps()) {
		snprintf(errbuf, errlen,
			 "%s: %s, although this process has the needed capabilities: the kernel "
			 "refused the program (libbpf printed the verifier log above; "
			 "please report it with the kernel version)", what, strerror(err));
		return;
	}
	snprintf(errbuf, errlen,
		 "%s: %s. ljsnap record needs root, or the capabilities CAP_BPF, CAP_PERFMON "
		 "and CAP_SYS_PTRACE (e.g. 'sudo ljsnap record ...' or "
		 "'setcap cap_bpf,cap_perfmon,cap_sys_ptrace+ep ljsnap')",
		 what, strerror(err));
}

/* Open a cpu-clock sampling event on one CPU, all tasks; with
 * exclude_idle, the ticks of the idle task do not run the program (they are
 * never a target's). */
static int open_cpu_clock(int cpu, uint32_t freq, int exclude_idle)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = freq;
	attr.exclude_idle = !!exclude_idle;
	return syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Set a map's size before loading: 0, or negative errno (message in errbuf). */
static int size_map(struct bpf_map *m, uint32_t n, char *errbuf, size_t errlen)
{
	int err = bpf_map__set_max_entries(m, n);

	if (err)
		snprintf(errbuf, errlen, "cannot size the BPF map %s to %u entries: %s",
			 bpf_map__name(m), n, strerror(-err));
	return err;
}

/* Open, configure, load and attach the program; see bpfload.h. */
int bpfload__init(struct bpfload *bl, const struct bpfload_opts *o, char *errbuf, size_t errlen)
{
	int err, cpu, nattached = 0;

	memset(bl, 0, sizeof(*bl));
	bl->stats_fd = -ENOTSUP;
	if (!have_caps()) {
		/* Say it in one sentence, before libbpf prints its own guesses. */
		perm_hint(errbuf, errlen, "cannot load the BPF program", EPERM);
		return -EPERM;
	}
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	bl->ncpus = libbpf_num_possible_cpus();
	if (bl->ncpus <= 0) {
		snprintf(errbuf, errlen, "cannot count CPUs: %s", strerror(-bl->ncpus));
		return bl->ncpus ? bl->ncpus : -EINVAL;
	}
	bl->skel = ljsnap_bpf__open();
	if (!bl->skel) {
		err = -errno;
		snprintf(errbuf, errlen, "cannot open the BPF object: %s", strerror(-err));
		return err;
	}
	bl->skel->rodata->cfg_filter_all = !!o->filter_all;
	bl->skel->rodata->cfg_self_pid = o->self_pid;
	bl->skel->rodata->cfg_ustack_bytes = o->ustack_bytes;
	bl->skel->rodata->cfg_timing = !!o->timing;
	err = size_map(bl->skel->maps.scratch, (uint32_t)bl->ncpus, errbuf, errlen);
	if (!err)
		err = size_map(bl->skel->maps.events, o->ringbuf_bytes, errbuf, errlen);
	if (!err)
		err = size_map(bl->skel->maps.targets,
			       o->max_procs ? o->max_procs : BPFLOAD_TARGETS_DEFAULT, errbuf, errlen);
	if (!err)
		err = size_map(bl->skel->maps.proc_cfg,
			       o->max_procs ? o->max_procs : BPFLOAD_CFGS_DEFAULT, errbuf, errlen);
	if (err)
		goto out;

	err = ljsnap_bpf__load(bl->skel);
	if (err) {
		if (err == -EPERM || err == -EACCES)
			perm_hint(errbuf, errlen, "cannot load the BPF program", -err);
		else
			snprintf(errbuf, errlen,
				 "cannot load the BPF program: %s (the kernel needs BTF and BPF ring "
				 "buffers, Linux >= 5.17; libbpf printed the details above)",
				 strerror(-err));
		goto out;
	}
	if (o->run_stats) {
		/* Held until bpfload__exit: the statistics stay on only while we record. */
		bl->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (bl->stats_fd < 0)
			bl->stats_fd = -errno;
	}
	err = ljsnap_bpf__attach(bl->skel);	/* the tracepoints; perf events below */
	if (err) {
		snprintf(errbuf, errlen, "cannot attach the process tracepoints: %s", strerror(-err));
		goto out;
	}
	bl->pfd = calloc(bl->ncpus, sizeof(*bl->pfd));
	bl->links = calloc(bl->ncpus, sizeof(*bl->links));
	if (!bl->pfd || !bl->links) {
		err = -ENOMEM;
		snprintf(errbuf, errlen, "out of memory");
		goto out;
	}
	for (cpu = 0; cpu < bl->ncpus; cpu++) {
		bl->pfd[cpu] = open_cpu_clock(cpu, o->freq_hz, !o->filter_all);
		if (bl->pfd[cpu] < 0) {
			err = -errno;
			bl->pfd[cpu] = -1;
			if (err == -ENODEV || err == -ENOENT)
				continue;	/* CPU offline or absent */
			if (err == -EACCES || err == -EPERM)
				perm_hint(errbuf, errlen, "cannot open perf events", -err);
			else if (err == -EINVAL)
				snprintf(errbuf, errlen,
					 "cannot sample at %u Hz: above kernel.perf_event_max_sample_rate? (%s)",
					 o->freq_hz, strerror(-err));
			else
				snprintf(errbuf, errlen, "perf_event_open on CPU %d: %s", cpu, strerror(-err));
			goto out;
		}
		bl->links[cpu] = bpf_program__attach_perf_event(bl->skel->progs.ljsnap_sample,
								bl->pfd[cpu]);
		if (!bl->links[cpu]) {
			err = -errno;
			snprintf(errbuf, errlen, "cannot attach to the perf event of CPU %d: %s", cpu,
				 strerror(-err));
			goto out;
		}
		nattached++;
	}
	if (!nattached) {
		err = -ENODEV;
		snprintf(errbuf, errlen, "no online CPU accepted a cpu-clock perf event");
		goto out;
	}
	bl->targets_fd = bpf_map__fd(bl->skel->maps.targets);
	bl->cfg_fd = bpf_map__fd(bl->skel->maps.proc_cfg);
	bl->errs_fd = bpf_map__fd(bl->skel->maps.errs);
	return 0;
out:
	bpfload__exit(bl);
	return err;
}

/* Detach and free everything (safe on a partly initialised struct). */
void bpfload__exit(struct bpfload *bl)
{
	int cpu;

	for (cpu = 0; bl->links && cpu < bl->ncpus; cpu++)
		bpf_link__destroy(bl->links[cpu]);
	for (cpu = 0; bl->pfd && cpu < bl->ncpus; cpu++)
		if (bl->pfd[cpu] >= 0)
			close(bl->pfd[cpu]);
	free(bl->links);
	free(bl->pfd);
	if (bl->stats_fd > 0)
		close(bl->stats_fd);
	ljsnap_bpf__destroy(bl->skel);
	memset(bl, 0, sizeof(*bl));
}

/* Disable every CPU's perf event; see bpfload.h. */
int bpfload__stop(struct bpfload *bl)
{
	int cpu, err = 0;

	for (cpu = 0; bl->pfd && cpu < bl->ncpus; cpu++)
		if (bl->pfd[cpu] >= 0 && ioctl(bl->pfd[cpu], PERF_EVENT_IOC_DISABLE, 0) && !err)
			err = -errno;
	return err;
}

/* Add a tgid to the sampled set. */
int bpfload__add_target(struct bpfload *bl, uint32_t pid)
{
	uint8_t one = 1;

	return bpf_map_update_elem(bl->targets_fd, &pid, &one, BPF_ANY) ? -errno : 0;
}

/* Remove a tgid from the sampled set. */
int bpfload__del_target(struct bpfload *bl, uint32_t pid)
{
	return bpf_map_delete_elem(bl->targets_fd, &pid) && errno != ENOENT ? -errno : 0;
}

/* Publish the LuaJIT configuration of a process. */
int bpfload__set_cfg(struct bpfload *bl, uint32_t pid, const struct ljs_proc_cfg *cfg)
{
	return bpf_map_update_elem(bl->cfg_fd, &pid, cfg, BPF_ANY) ? -errno : 0;
}

/* Forget the LuaJIT configuration of a process. */
int bpfload__del_cfg(struct bpfload *bl, uint32_t pid)
{
	return bpf_map_delete_elem(bl->cfg_fd, &pid) && errno != ENOENT ? -errno : 0;
}

/* One counter, summed over the CPUs (one system call). */
int bpfload__counter(struct bpfload *bl, uint32_t k, uint64_t *out)
{
	uint64_t *vals;
	int cpu, err = 0;

	*out = 0;
	vals = calloc(bl->ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bl->errs_fd, &k, vals))
		err = -errno;
	for (cpu = 0; !err && cpu < bl->ncpus; cpu++)
		*out += vals[cpu];
	free(vals);
	return err;
}

/* Sum the per-CPU counters. */
int bpfload__counters(struct bpfload *bl, uint64_t out[LJS_ERR__MAX])
{
	uint32_t k;
	int err = 0, e;

	for (k = 0; k < LJS_ERR__MAX; k++)
		if ((e = bpfload__counter(bl, k, &out[k])) != 0)
			err = e;
	return err;
}

/* The ring buffer's fd. */
int bpfload__ringbuf_fd(struct bpfload *bl)
{
	return bpf_map__fd(bl->skel->maps.events);
}

/* Run-time statistics of every program loaded (the sampling program and the
 * fork/exec/exit tracepoints, which run for every task of the machine). */
int bpfload__prog_stats(struct bpfload *bl, uint64_t *run_ns, uint64_t *run_cnt)
{
	struct bpf_program *prog;

	*run_ns = *run_cnt = 0;
	bpf_object__for_each_program(prog, bl->skel->obj) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			return -errno;
		*run_ns += info.run_time_ns;
		if (prog == bl->skel->progs.ljsnap_sample)
			*run_cnt += info.run_cnt;
	}
	return 0;
}

/*
 * Change the rate of the cpu-clock events.  A cpu-clock event opened with
 * attr.freq is turned into a fixed period of NSEC_PER_SEC / freq ns when it
 * is created (the kernel's software hrtimer events never adjust a period the
 * way hardware events in frequency mode do), so PERF_EVENT_IOC_PERIOD takes
 * the new period in ns and restarts the timer with it.
 */
int bpfload__set_freq(struct bpfload *bl, uint32_t hz)
{
	uint64_t period = 1000000000ull / (hz ? hz : 1);
	int cpu, err = 0;

	for (cpu = 0; bl->pfd && cpu < bl->ncpus; cpu++)
		if (bl->pfd[cpu] >= 0 && ioctl(bl->pfd[cpu], PERF_EVENT_IOC_PERIOD, &period) && !err)
			err = -errno;
	return err;
}
