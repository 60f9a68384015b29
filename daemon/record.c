/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record.c -- `ljsnap record`: the target command, the ring-buffer loop and
 * the closing statistics (record_opts.c: its options).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "daemon/cmds.h"
#include "formats/capture/harvest.h"
#include "unwind/detect/ljdetect.h"
#include "unwind/detect/livemem.h"
#include "symtab/ksyms.h"
#include "symtab/vec.h"
#include "daemon/record.h"
#include "unwind/sample.h"

static volatile sig_atomic_t g_stop;	/* set by SIGINT/SIGTERM (the one process-wide flag) */

/* Signal handler: ask the loop to stop. */
static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

/* Samples older than this when the recorder reaches them are not walked
 * (see harvest_sample). */
#define RECORD_WALK_MAX_LAG_NS	500000000ull

/* How long the loop sleeps on the ring buffer (ms): while LuaJIT samples
 * came in the last RECORD_LJ_BUSY_NS, RECORD_POLL_LJ_MS, since the BPF
 * program does not wake us for each of them (see ljsnap_sample); else
 * RECORD_POLL_MS.  RECORD_LJ_BUSY_NS is above LJS_LJ_WAKE_NS, so the first
 * LuaJIT sample after a quiet spell always wakes us.  A wakeup costs the
 * recorder about as much as harvesting a walk: at 999 Hz on one CPU, 8 ms
 * gives eight samples a wakeup instead of one, and walks them at most about
 * 8 ms late.  Against 4 ms: 31 instead of 45 us of recorder CPU per sample
 * (tests/lua/fixed_work.lua, and the walks themselves are cheaper in a
 * batch), with the Lua chains of report_gen.sh's 20 ms generations within
 * a point of 4 ms's (97-98% with -joff, 95% with the JIT) and as many
 * complete walks in record_fast.sh. */
#define RECORD_POLL_LJ_MS	8
#define RECORD_POLL_MS		20
#define RECORD_LJ_BUSY_NS	(2 * LJS_LJ_WAKE_NS)
/* The loop's housekeeping (the command's end, re-inspection, the rate) runs
 * at most this often. */
#define RECORD_HOUSEKEEP_NS	10000000ull

/* Monotonic clock in ns (the clock of bpf_ktime_get_ns). */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Start the command stopped on a pipe; it execs once we release it. */
static int start_child(struct recorder *rc, int *release_fd)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (pid == 0) {
		char c;

		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(127);	/* the recorder failed before releasing us */
		execvp(rc->o.cmd[0], rc->o.cmd);
		fprintf(stderr, "ljsnap %s: cannot run '%s': %s\n", record__cmd(rc), rc->o.cmd[0],
			strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	rc->child = pid;
	*release_fd = fds[1];
	return 0;
}

/*
 * Walk a LuaJIT sample now, while the process is alive, so that every byte
 * the walk needs beyond the sample (bytecode, protos, names, line info) is
 * harvested into the capture file.  A sample the recorder reaches more than
 * RECORD_WALK_MAX_LAG_NS after it was taken is not walked: its process has
 * moved on (it may be freeing everything in lua_close), and report reads
 * the bytes harvested for the samples around it.  That also lets a recorder
 * that fell behind (more samples than one CPU walks) catch up.
 */
static void harvest_sample(struct recorder *rc, const struct proc *p, const struct ljs_sample *s)
{
	struct ljw_opts wo = { .vm_lo = p->vm_lo, .vm_hi = p->vm_hi };
	struct ljw_stack st;
	struct livemem lm;
	struct memsrc sm, live;
	uint64_t t0 = now_ns();
	int err;

	if (t0 > s->time_ns + RECORD_WALK_MAX_LAG_NS) {
		rc->walk_skipped++;
		return;
	}
	/* A batch: samples all taken before its first read (harvest.h). */
	if (s->time_ns > rc->batch_ns)
		rc->batch_ns = t0 > s->time_ns ? t0 : s->time_ns;
	livemem__init(&live, &lm, (int)s->pid, NULL);
	memsrc__init_sample(&sm, s, harvest__source(rc->hv, s->pid, s->time_ns, t0, &live));
	harvest__batch(rc->hv, rc->batch_ns);
	rr_batch__prefetch(rc->rr, rc->hv, (pid_t)s->pid);
	if (ljw__walk(rc->walker, &p->layout, s, &sm, &wo, &st) == 0) {
		rc->walked++;
		rc->walked_complete += st.complete && !st.nunknown;
	}
	err = harvest__error(rc->hv);
	if (err && !rc->werr)
		rc->werr = err;
	rc->walk_ns += now_ns() - t0;
}

/*
 * Tell BPF about a global_State this process uses: threads whose r14 is not
 * DISPATCH (non-GC64 traces, C code) and that have no cached g yet try it
 * (validated) before giving up.  Bounded: a process with several VMs that
 * alternate republishes at most once a second.
 */
static void set_g_hint(struct recorder *rc, struct proc *p, uint64_t g)
{
	struct ljs_proc_cfg cfg;
	uint64_t now = now_ns();
	int err;

	if (p->g_hint && now - p->g_hint_ns < 1000000000ull)
		return;
	p->g_hint = g;
	p->g_hint_ns = now;
	proctab__cfg(p, rc->o.lstack_bytes, &cfg);
	err = bpfload__set_cfg(&rc->bl, p->pid, &cfg);
	if (err)
		record__map_failed(rc, p->pid, "publish its global_State to BPF", err);
}

/* Count a failed BPF map update; say the first one. */
void record__map_failed(struct recorder *rc, uint32_t pid, const char *what, int err)
{
	if (!rc->map_failures++ && !rc->o.quiet)
		fprintf(stderr, "ljsnap: pid %u: cannot %s: %s%s\n", pid, what, strerror(-err),
			err == -E2BIG || err == -ENOMEM ?
			" (the BPF map is full: record with a larger --max-procs)" : "");
}

/* Sample pid from now on (counted when the target map refuses it). */
static void target_add(struct recorder *rc, uint32_t pid)
{
	int err = bpfload__add_target(&rc->bl, pid);

	if (err)
		record__map_failed(rc, pid, "add it to the BPF target map", err);
}

/* Remember the kernel IPs of a sample, for the KSYMS records at the end. */
static void note_kernel_ips(struct recorder *rc, const struct ljs_sample *s)
{
	const struct ljs_section *k = ljs_sample__section(s, LJS_SEC_KSTACK, -1);
	uint32_t i;

	for (i = 0; k && rc->kips && i + 8 <= k->len; i += 8) {
		uint64_t ip;

		memcpy(&ip, k->data + i, 8);
		if (ksym_ipset__add(rc->kips, ip))
			break;
	}
}

/* One sample or task event. */
static int handle_event(void *ctx, void *data, size_t size)
{
	struct recorder *rc = ctx;
	const struct ljs_task_event *te = data;
	struct ljs_sample s;
	struct proc *p;
	uint64_t g;
	int err;

	if (size < 8) {
		rc->bad_records++;
		return 0;
	}
	switch (te->type) {
	case LJS_REC_SAMPLE:
		rc->sample_records++;
		if (ljs_sample__parse_raw(&s, data, size)) {
			rc->bad_records++;
			rc->samples_bad++;
			return 0;
		}
		p = proctab__get(&rc->pt, s.pid);
		if (p) {
			p->samples++;
			p->last_sample_ns = s.time_ns;
			if (p->state == PROC_NEW) {
				memcpy(p->comm, s.comm, sizeof(p->comm));
				inspect__process(rc, p, s.time_ns);
			} else {
				inspect__again(rc, p, &s, s.time_ns);
			}
		}
		note_kernel_ips(rc, &s);
		err = rc->w ? snapfile_writer__sample(rc->w, &s) : 0;
		if (err && !rc->werr)
			rc->werr = err;
		if (!err) {
			rc->samples++;
			rc->sample_bytes += size;
		} else {
			rc->samples_write_failed++;
		}
		if (p && p->has_luajit)
			inspect__sample(rc, p, &s);
		if (p && p->has_luajit && s.g) {
			rc->lj_last_ns = s.time_ns;
			if (s.g != p->g_hint)
				set_g_hint(rc, p, s.g);
			if (rc->hv)
				harvest_sample(rc, p, &s);
		} else if ((g = inspect__find_g(p, &s)) != 0) {
			rc->g_found_saved++;
			set_g_hint(rc, p, g);
		}
		if (rc->hooks && rc->hooks->sample)
			rc->hooks->sample(rc->hook_arg, p, &s);
		return 0;
	case LJS_REC_FORK:
	case LJS_REC_EXEC:
	case LJS_REC_EXIT:
		if (size < sizeof(*te)) {
			rc->bad_records++;
			return 0;
		}
		rc->task_events++;
		p = proctab__get(&rc->pt, te->pid);
		if (!p)
			return 0;
		if (te->type == LJS_REC_FORK) {
			p->ppid = te->ppid;
			memcpy(p->comm, te->comm, sizeof(p->comm));
			if (p->state == PROC_GONE)
				proctab__reset(p);	/* pid reused */
			if (!rc->o.all)
				rc->live_targets++;
		} else if (te->type == LJS_REC_EXEC) {
			/* A new image: forget the old layout, inspect at the next sample. */
			memcpy(p->comm, te->comm, sizeof(p->comm));
			bpfload__del_cfg(&rc->bl, p->pid);
			if (rc->hv)
				harvest__forget(rc->hv, p->pid);
			proctab__reset(p);
		} else {
			bpfload__del_cfg(&rc->bl, p->pid);
			if (!rc->o.all)
				bpfload__del_target(&rc->bl, p->pid);
			if (rc->hv)
				harvest__forget(rc->hv, p->pid);
			if (p->state != PROC_GONE) {
				inspect__exited(rc, p, te->time_ns);
				p->state = PROC_GONE;
				if (!rc->o.all && rc->live_targets > 0)
					rc->live_targets--;
			}
		}
		return 0;
	default:
		rc->bad_records++;
		return 0;
	}
}

/* Records handled before the loop gets control back: libbpf's consume
 * returns only once the ring buffer is empty, which it never is while the
 * BPF program fills it faster than we drain it; the loop must still see the
 * duration, the command's end and the cost of sampling (record_rate.c). */
#define RECORD_BATCH_MAX	4096

/* Ring-buffer callback: handle a record; -EAGAIN ends a long batch (the
 * record is consumed, libbpf stops after it). */
static int on_event(void *ctx, void *data, size_t size)
{
	struct recorder *rc = ctx;

	handle_event(ctx, data, size);
	return ++rc->batch >= RECORD_BATCH_MAX ? -EAGAIN : 0;
}

/* Add the processes pid forked before recording started (nginx workers
 * of a master given with -p), and theirs, recursively (bounded). */
static void add_descendants(struct recorder *rc, uint32_t pid, int depth)
{
	char path[80], buf[4096], *tok, *save = NULL;
	uint64_t now = now_ns();
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = depth < 8 ? opendir(path) : NULL;
	if (!d)
		return;
	while ((de = readdir(d))) {
		int fd;
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%.16s/children", pid, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
			uint32_t c = (uint32_t)strtoul(tok, NULL, 10);

			if (!c || proctab__find(&rc->pt, c))
				continue;	/* known already */
			target_add(rc, c);
			rc->live_targets++;
			inspect__process(rc, proctab__get(&rc->pt, c), now);
			add_descendants(rc, c, depth + 1);
		}
	}
	closedir(d);
}

/* Look again at the sampled processes whose mappings may have changed
 * (libraries get dlopen'ed, an exec was under way at the first look). */
static void reinspect(struct recorder *rc, uint64_t now)
{
	uint32_t it = 0;
	struct proc *p;

	while ((p = proctab__next(&rc->pt, &it)))
		inspect__again(rc, p, NULL, now);
}

/* The recorder's own CPU time so far (user + sys, ns; not its command's). */
static uint64_t self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

/* Write the statistics record and print the summary. */
static void finish(struct recorder *rc, int quiet)
{
	static const char *names[] = LJS_ERR_NAMES;
	static const struct harvest_stats none;
	const struct harvest_stats *hs = rc->hv ? harvest__stats(rc->hv) : &none;
	struct snapfile_stat st[LJS_ERR__MAX + 48];
	uint64_t end_ns = now_ns();
	uint64_t ctr[LJS_ERR__MAX] = { 0 }, run_ns = 0, run_cnt = 0, undrained;
	uint32_t it = 0, nlj = 0, nproc = 0, k;
	size_t n = 0;
	struct proc *p;
	int err;

	bpfload__counters(&rc->bl, ctr);
	bpfload__prog_stats(&rc->bl, &run_ns, &run_cnt);
	/* Emitted but never taken off the ring buffer: the final drain is
	 * bounded (record_stop). */
	undrained = ctr[LJS_ERR_EMITTED] > rc->sample_records ?
		    ctr[LJS_ERR_EMITTED] - rc->sample_records : 0;
	while ((p = proctab__next(&rc->pt, &it))) {
		nproc++;
		nlj += !!p->has_luajit;
	}
	st[n++] = (struct snapfile_stat){ "samples_written", rc->samples };
	st[n++] = (struct snapfile_stat){ "samples_lost", ctr[LJS_ERR_RINGBUF_FULL] };
	st[n++] = (struct snapfile_stat){ "bad_records", rc->bad_records };
	/* emitted = samples_written + each of these (ring-buffer losses are
	 * never emitted): docs/capture-format.md */
	st[n++] = (struct snapfile_stat){ "samples_bad", rc->samples_bad };
	st[n++] = (struct snapfile_stat){ "samples_write_failed", rc->samples_write_failed };
	st[n++] = (struct snapfile_stat){ "samples_undrained", undrained };
	st[n++] = (struct snapfile_stat){ "processes_seen", nproc };
	st[n++] = (struct snapfile_stat){ "processes_luajit", nlj };
	st[n++] = (struct snapfile_stat){ "g_found_saved", rc->g_found_saved };
	st[n++] = (struct snapfile_stat){ "ksyms_cached", (uint64_t)rc->ksyms_cached };
	st[n++] = (struct snapfile_stat){ "bpf_run_ns", run_ns };
	st[n++] = (struct snapfile_stat){ "bpf_run_cnt", run_cnt };
	st[n++] = (struct snapfile_stat){ "walked", rc->walked };
	st[n++] = (struct snapfile_stat){ "walked_complete", rc->walked_complete };
	st[n++] = (struct snapfile_stat){ "walk_ns", rc->walk_ns };
	st[n++] = (struct snapfile_stat){ "walk_skipped_lag", rc->walk_skipped };
	st[n++] = (struct snapfile_stat){ "recorder_cpu_ns", self_cpu_ns() };
	st[n++] = (struct snapfile_stat){ "recorder_loop_cpu_ns", rc->cpu_loop_ns };
	st[n++] = (struct snapfile_stat){ "bpf_map_failures", rc->map_failures };
	st[n++] = (struct snapfile_stat){ "harvest_records", hs->records };
	st[n++] = (struct snapfile_stat){ "harvest_bytes", hs->bytes };
	st[n++] = (struct snapfile_stat){ "harvest_live_reads", hs->live_reads };
	st[n++] = (struct snapfile_stat){ "harvest_generations", hs->generations };
	st[n++] = (struct snapfile_stat){ "harvest_reconfirmed", hs->reconfirmed };
	st[n++] = (struct snapfile_stat){ "harvest_late_changes", hs->late_changes };
	st[n++] = (struct snapfile_stat){ "embedded_objects", rc->emb.objects };
	st[n++] = (struct snapfile_stat){ "embedded_failed", rc->emb.failed };
	st[n++] = (struct snapfile_stat){ "embedded_raw_bytes", rc->emb.raw };
	st[n++] = (struct snapfile_stat){ "embedded_bytes", rc->emb.packed };
	st[n++] = (struct snapfile_stat){ "embed_ns", rc->emb.ns };
	st[n++] = (struct snapfile_stat){ "embedded_cached", rc->emb.cached };
	st[n++] = (struct snapfile_stat){ "harvest_prefetch_calls", hs->prefetch_calls };
	st[n++] = (struct snapfile_stat){ "harvest_prefetched", hs->prefetched };
	n += record_rate__stats(rc, end_ns, st + n);
	for (k = 0; k < LJS_ERR__MAX; k++)
		st[n++] = (struct snapfile_stat){ names[k], ctr[k] };
	if (!rc->w)
		return;	/* a live view: it said what it saw */
	snapfile_writer__stats(rc->w, st, n);
	/* Everything but the END record is in the file now: bytes_written
	 * counts only what was flushed, not the records still buffered. */
	err = snapfile_writer__flush(rc->w);
	if (err && !rc->werr)
		rc->werr = err;

	if (quiet)
		return;
	fprintf(stderr, "ljsnap: %llu samples written to %s",
		(unsigned long long)rc->samples, rc->o.output);
	if (rc->samples)
		fprintf(stderr, " (%.0f bytes per sample in the file, everything included; "
			"%.0f in the ring buffer)",
			(double)snapfile_writer__bytes_written(rc->w) / rc->samples,
			(double)rc->sample_bytes / rc->samples);
	fprintf(stderr, "\nljsnap: %llu samples lost (ring buffer full%s)\n",
		(unsigned long long)ctr[LJS_ERR_RINGBUF_FULL],
		ctr[LJS_ERR_RINGBUF_FULL] ? "; raise --ringbuf-mb or lower -F" : "");
	if (rc->samples_bad || rc->samples_write_failed || undrained)
		fprintf(stderr, "ljsnap: %llu samples emitted but not written: %llu malformed, "
			"%llu refused by the writer, %llu left in the ring buffer\n",
			(unsigned long long)(rc->samples_bad + rc->samples_write_failed + undrained),
			(unsigned long long)rc->samples_bad,
			(unsigned long long)rc->samples_write_failed, (unsigned long long)undrained);
	if (rc->map_failures || ctr[LJS_ERR_TARGET_FULL])
		fprintf(stderr, "ljsnap: %llu processes were not sampled or not configured: the BPF "
			"maps were full (record with a larger --max-procs)\n",
			(unsigned long long)(rc->map_failures + ctr[LJS_ERR_TARGET_FULL]));
	fprintf(stderr, "ljsnap: BPF counters:");
	for (k = 0; k < LJS_ERR__MAX; k++)
		if (ctr[k])
			fprintf(stderr, " %s=%llu", names[k], (unsigned long long)ctr[k]);
	fprintf(stderr, "\n");
	if (run_cnt)
		fprintf(stderr, "ljsnap: BPF program: %.0f ns per run over %llu runs\n",
			(double)run_ns / run_cnt, (unsigned long long)run_cnt);
	record_rate__summary(rc, end_ns);
	if (rc->walked)
		fprintf(stderr, "ljsnap: %llu LuaJIT samples walked while recording, %.1f%% to the "
			"bottom with no unknown frame; %.1f us per sample walking and harvesting; "
			"%llu memory ranges (%llu bytes) kept\n",
			(unsigned long long)rc->walked, 100.0 * rc->walked_complete / rc->walked,
			rc->walk_ns / 1000.0 / rc->walked, (unsigned long long)hs->records,
			(unsigned long long)hs->bytes);
	if (rc->walk_skipped)
		fprintf(stderr, "ljsnap: %llu LuaJIT samples not walked: the recorder was more than "
			"%.1f s behind them (their Lua frames use the memory kept for the others)\n",
			(unsigned long long)rc->walk_skipped, RECORD_WALK_MAX_LAG_NS / 1e9);
	if (rc->emb.objects || rc->emb.failed)
		fprintf(stderr, "ljsnap: %llu mapped files copied into the capture (%llu bytes of "
			"sections, %llu in the file, %llu of them function names, %.1f ms)%s\n",
			(unsigned long long)rc->emb.objects, (unsigned long long)rc->emb.raw,
			(unsigned long long)rc->emb.packed, (unsigned long long)rc->emb.names,
			rc->emb.ns / 1e6,
			rc->emb.failed ? "; some could not be read" : "");
	fprintf(stderr, "ljsnap: %u processes seen, %u running LuaJIT\n", nproc, nlj);
	it = 0;
	while ((p = proctab__next(&rc->pt, &it))) {
		if (!p->has_luajit && !(p->samples && nproc <= 8))
			continue;
		fprintf(stderr, "ljsnap:   pid %u (%s): %llu samples, %s\n", p->pid, p->comm,
			(unsigned long long)p->samples, p->has_luajit ? p->build : "no LuaJIT found");
	}
}

/* Load the BPF program for the options; 0, or -1 (reported). */
static int load_bpf(struct recorder *rc)
{
	struct bpfload_opts bo;
	char errbuf[512];

	memset(&bo, 0, sizeof(bo));
	bo.filter_all = rc->o.all;
	bo.self_pid = getpid();
	bo.freq_hz = record_rate__first(&rc->o);
	bo.ustack_bytes = rc->o.stack_bytes;
	bo.ringbuf_bytes = rc->o.ringbuf_mb << 20;
	bo.max_procs = rc->o.max_procs;
	bo.timing = rc->o.bpf_timing;
	bo.run_stats = 1;	/* record_rate.c measures the cost of sampling */
	if (bpfload__init(&rc->bl, &bo, errbuf, sizeof(errbuf))) {
		fprintf(stderr, "ljsnap %s: %s\n", record__cmd(rc), errbuf);
		return -1;
	}
	return 0;
}

/* The target as the header and the messages name it: "-a", "-p PID,...",
 * or the command line. */
static void describe_target(const struct record_opts *o, char *target, size_t size)
{
	size_t off = 0;
	int i;

	if (o->all) {
		snprintf(target, size, "-a");
	} else if (o->npids) {
		off = snprintf(target, size, "-p ");
		for (i = 0; i < o->npids && off < size; i++)
			off += snprintf(target + off, size - off, "%s%u", i ? "," : "", o->pids[i]);
	} else {
		target[0] = 0;
		for (i = 0; o->cmd[i] && off < size; i++)
			off += snprintf(target + off, size - off, "%s%s", i ? " " : "", o->cmd[i]);
	}
}

/* Create the capture file: its header, then the vdso image; 0, or -1
 * (reported). */
static int open_file(struct recorder *rc, const char *target)
{
	struct snapfile_header h;
	int err;

	if (!rc->o.output) {
		if (!rc->vdso.data)
			vdso__self(&rc->vdso);	/* names [vdso] frames in a live view */
		return 0;
	}
	memset(&h, 0, sizeof(h));
	h.freq_hz = rc->o.freq;
	h.stack_bytes = rc->o.stack_bytes;
	h.lstack_bytes = rc->o.lstack_bytes;
	h.target = target;
	h.features = SNAPFILE_F_TASK_EVENTS | SNAPFILE_F_MEMORY |
		     (rc->o.all ? SNAPFILE_F_SYSTEM_WIDE : 0);
	rc->w = snapfile_writer__open(rc->o.output, &h, &err);
	if (!rc->w) {
		fprintf(stderr, "ljsnap %s: cannot create %s: %s\n", record__cmd(rc), rc->o.output,
			snapfile__strerror(err));
		return -1;
	}
	if (rc->vdso.data || vdso__self(&rc->vdso) == 0) {
		struct snapfile_object ob = {
			.path = "[vdso]", .build_id = rc->vdso.build_id,
			.build_id_len = (uint32_t)rc->vdso.build_id_len,
			.data = rc->vdso.data, .len = (uint32_t)rc->vdso.len,
		};

		/* Before any PROCESS record; without it [vdso] frames stay unnamed. */
		snapfile_writer__object(rc->w, &ob);
	}
	return 0;
}

/* The parts the event loop uses: harvester, walker, kernel IP set and the
 * ring buffer; 0, or -1 (reported). */
static int open_parts(struct recorder *rc)
{
	rc->hv = rc->w ? harvest__new(rc->w, 256u << 20) : NULL;
	rc->walker = ljw__new();
	rc->kips = ksym_ipset__new();
	rc->rr = rr_batch__new();
	if ((rc->w && !rc->hv) || !rc->walker || !rc->kips || !rc->rr) {
		fprintf(stderr, "ljsnap %s: out of memory\n", record__cmd(rc));
		return -1;
	}
	rc->rb = ring_buffer__new(bpfload__ringbuf_fd(&rc->bl), on_event, rc, NULL);
	if (!rc->rb) {
		fprintf(stderr, "ljsnap %s: cannot open the ring buffer: %s\n", record__cmd(rc),
			strerror(errno));
		return -1;
	}
	return 0;
}

/* SIGINT, SIGTERM and SIGHUP stop the loop. */
static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Target the -p processes and their descendants, or start the command and
 * target it; 0, or -1 (reported). */
static int add_targets(struct recorder *rc)
{
	int err, release_fd = -1, i;

	for (i = 0; i < rc->o.npids; i++) {
		if (kill(rc->o.pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "ljsnap %s: no process %u\n", record__cmd(rc), rc->o.pids[i]);
			return -1;
		}
		target_add(rc, rc->o.pids[i]);
		rc->live_targets++;
		inspect__process(rc, proctab__get(&rc->pt, rc->o.pids[i]), now_ns());
	}
	for (i = 0; i < rc->o.npids; i++)
		add_descendants(rc, rc->o.pids[i], 0);
	if (!rc->o.cmd)
		return 0;
	err = start_child(rc, &release_fd);
	if (err) {
		fprintf(stderr, "ljsnap %s: cannot start the command: %s\n", record__cmd(rc),
			strerror(-err));
		return -1;
	}
	target_add(rc, rc->child);
	rc->live_targets++;
	proctab__get(&rc->pt, rc->child);
	if (write(release_fd, "x", 1) != 1)
		fprintf(stderr, "ljsnap %s: cannot release the command: %s\n", record__cmd(rc),
			strerror(errno));
	close(release_fd);
	return 0;
}

/* Consume the ring buffer until a signal, a write error, the end of the
 * command or of every -p target, or the duration. */
static void record_loop(struct recorder *rc)
{
	uint64_t t0, last_tick, last_house = 0, now;
	int err, timeout;

	t0 = last_tick = now_ns();
	while (!g_stop && !rc->rate.stop) {
		/* The BPF program wakes us only in batches and at the start of
		 * LuaJIT samples: drain on a timer too. */
		rc->batch = 0;
		now = now_ns();
		timeout = now - rc->lj_last_ns < RECORD_LJ_BUSY_NS ? RECORD_POLL_LJ_MS : RECORD_POLL_MS;
		if (rc->hooks && rc->hooks->tick_ms && rc->hooks->tick_ms < timeout)
			timeout = rc->hooks->tick_ms;
		err = ring_buffer__poll(rc->rb, timeout);
		if (err >= 0)
			err = ring_buffer__consume(rc->rb);
		if (err < 0 && err != -EINTR && err != -EAGAIN) {
			fprintf(stderr, "ljsnap %s: ring buffer: %s\n", record__cmd(rc), strerror(-err));
			break;
		}
		if (rc->werr) {
			fprintf(stderr, "ljsnap %s: writing %s failed: %s; stopping (the file is "
				"readable up to the last complete record)\n", record__cmd(rc), rc->o.output,
				snapfile__strerror(rc->werr));
			break;
		}
		now = now_ns();
		if (now - last_house < RECORD_HOUSEKEEP_NS)
			continue;
		last_house = now;
		if (rc->child && !rc->child_done &&
		    waitpid(rc->child, &rc->child_status, WNOHANG) == rc->child)
			rc->child_done = 1;
		if (rc->child_done)
			break;
		if (rc->o.npids && rc->live_targets <= 0)
			break;
		if (rc->o.duration && now - t0 >= (uint64_t)(rc->o.duration * 1e9))
			break;
		reinspect(rc, now);
		record_rate__check(rc, now);
		if (rc->hooks && rc->hooks->tick && rc->hooks->tick(rc->hook_arg, rc, now))
			break;
		if (rc->w && now - last_tick >= 1000000000ull) {
			last_tick = now;
			err = snapfile_writer__flush(rc->w);
			if (err && !rc->werr)
				rc->werr = err;
		}
	}
}

/* After the loop: drain the ring buffer, end the command if it still runs,
 * write the kernel symbols and print the statistics. */
static void record_stop(struct recorder *rc)
{
	int rounds = 0;

	/* Stop sampling first, so that the drain takes every sample emitted
	 * (emitted = written + the drops finish() names); bounded all the same. */
	bpfload__stop(&rc->bl);
	do
		rc->batch = 0;
	while (ring_buffer__consume(rc->rb) == -EAGAIN && ++rounds < 256);
	if (rc->child && !rc->child_done) {
		kill(rc->child, SIGTERM);
		waitpid(rc->child, &rc->child_status, 0);
		rc->child_done = 1;
	}
	record__write_ksyms(rc);
	finish(rc, rc->o.quiet);
}

/* Record; see record.h. */
int record__run(struct recorder *rcp)
{
	struct recorder rc = *rcp;
	char target[512];
	int err, ret = 1;

	/* Without a capture file (a live view) there is nothing to embed into. */
	embedder__init(&rc.emb, rc.o.no_embed || !rc.o.output, rc.o.debug_info);
	if (proctab__init(&rc.pt)) {
		fprintf(stderr, "ljsnap %s: out of memory\n", record__cmd(&rc));
		return 1;
	}
	if (load_bpf(&rc))
		goto out;
	describe_target(&rc.o, target, sizeof(target));
	if (open_file(&rc, target) || open_parts(&rc))
		goto out;
	catch_signals();
	record_rate__start(&rc, now_ns());
	if (add_targets(&rc))
		goto out;
	if (!rc.o.quiet)
		fprintf(stderr, "ljsnap: recording %s at %u Hz%s\n", target, rc.o.freq,
			rc.o.duration ? "" : "; Ctrl-C to stop");
	if (!rc.o.quiet && rc.rate.freq < rc.o.freq)
		fprintf(stderr, "ljsnap: starting at %u Hz, raised towards %u Hz while the cost of "
			"sampling allows (--max-cpu-percent %u)\n", rc.rate.freq, rc.o.freq,
			rc.o.max_cpu_pct);
	rc.cpu_loop_ns = self_cpu_ns();
	record_loop(&rc);
	rc.cpu_loop_ns = self_cpu_ns() - rc.cpu_loop_ns;
	record_stop(&rc);
	ret = rc.werr ? 1 : 0;
out:
	ring_buffer__free(rc.rb);
	ljw__delete(rc.walker);
	harvest__delete(rc.hv);
	ksym_ipset__delete(rc.kips);
	rr_batch__delete(rc.rr);
	if (rc.w) {
		err = snapfile_writer__close(rc.w);
		if (err) {
			fprintf(stderr, "ljsnap %s: closing %s: %s\n", record__cmd(&rc), rc.o.output,
				snapfile__strerror(err));
			ret = 1;
		}
	}
	bpfload__exit(&rc.bl);
	vdso__exit(&rc.vdso);
	embedder__exit(&rc.emb);
	lj_detect_cache__delete(rc.pt.detect_cache);
	proctab__exit(&rc.pt);
	if (ret == 0 && rc.child_done && WIFEXITED(rc.child_status) && WEXITSTATUS(rc.child_status))
		ret = WEXITSTATUS(rc.child_status);
	return ret;
}

/* `ljsnap record`. */
int cmd_record(int argc, char **argv)
{
	struct recorder rc;
	int err;

	memset(&rc, 0, sizeof(rc));
	err = record_opts__parse(&rc.o, argc, argv);
	if (err)
		return err > 0 ? 0 : 2;
	err = record__run(&rc);
	free(rc.o.pids);
	return err;
}
