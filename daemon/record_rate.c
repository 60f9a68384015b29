/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record_rate.c -- keep the cost of sampling under --max-cpu-percent.
 *
 * The kernel protects a host from hardware sampling interrupts that take too
 * long (kernel.perf_cpu_time_max_percent lowers
 * kernel.perf_event_max_sample_rate from the NMI handler), but not from the
 * cpu-clock events record uses: they are hrtimers, bounded only by the
 * number of samples per tick, whatever each one costs.  Ours run the BPF
 * program, which copies up to --stack-bytes plus --lua-stack-bytes per
 * sample, so at -F 100000 a CPU-bound target can spend nearly all its time
 * being sampled; and in a virtual machine the timer interrupt alone can
 * take most of a 10 us period.  record therefore bounds the rate itself:
 *
 *  - it never starts above RECORD_FREQ_START: the events are opened there
 *    and the rate doubles towards -F at each measurement that allows it,
 *    so a rate too costly for the host is seen before it is reached (a
 *    measurement needs the recorder to run, which a sampling storm on every
 *    CPU would prevent);
 *  - every RATE_CHECK_NS it measures the cost: the BPF program's run time
 *    (bpf_prog_info run_time_ns, with the run-time statistics held on while
 *    recording, bpfload.c) per sample of a target (the BPF counter
 *    "samples").  A CPU that runs a sampled thread all the time spends
 *    cost x rate of its time in the program: above --max-cpu-percent the
 *    rate is lowered on every CPU (bpfload__set_freq) to 3/4 of what the
 *    bound allows, so that noise does not lower it again at once; it is
 *    raised only while the next rate would stay under the bound;
 *  - it also counts the program's runs against the timer periods: when
 *    fewer than half of them ran, the interrupts take longer than their
 *    period (the hrtimer skips what it missed) and the rate is halved; the
 *    rate is raised only while at least 80% of them run.  Without -a the
 *    events skip the idle task (bpfload.c), so a CPU has periods only while
 *    it is busy: the runs are counted against the sampled CPUs' busy time
 *    (/proc/stat: user, nice, system, irq, softirq), not against the wall
 *    clock, which would hold a target that is idle half of the time at
 *    RECORD_FREQ_START.  Busy time comes in clock ticks (USER_HZ, 10 ms):
 *    an interval with fewer than RATE_MIN_BUSY_TICKS of them does not tell
 *    (a storm of interrupts keeps its CPU busy, so it is always told);
 *  - the first limitation is said; each is counted, and so is the time
 *    spent below -F since the first (STATS rate_limited, rate_limited_ns,
 *    freq_final_hz, sample_cost_ns).
 *
 * What it does not see: the interrupt's own cost when the interrupts still
 * keep up, and the cost of the runs that end at the target filter (charged
 * to the target samples, which only errs towards a lower rate).  Without
 * run-time statistics it opens the events at -F and says that the rate is
 * not bounded; the kernel's maximum still is (record_opts.c checks -F
 * against kernel.perf_event_max_sample_rate).  If the rate cannot be
 * changed, the recording stops rather than go on at a rate it cannot bound.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "daemon/record.h"

/* How often the cost is measured, and the fewest target samples a
 * measurement of the cost per sample needs. */
#define RATE_CHECK_NS		100000000ull
#define RATE_MIN_SAMPLES	16
/* The fewest busy clock ticks an interval needs to tell how many of its
 * periods ran (a tick more or less is then 10% at most). */
#define RATE_MIN_BUSY_TICKS	10

/* The BPF program's run time and runs, and the target samples so far; 0 or -1. */
static int rate_read(struct recorder *rc, uint64_t *run_ns, uint64_t *runs, uint64_t *samples)
{
	if (bpfload__prog_stats(&rc->bl, run_ns, runs) ||
	    bpfload__counter(&rc->bl, LJS_ERR_SAMPLES, samples))
		return -1;
	return 0;
}

/* The busy clock ticks of the CPUs with an event (/proc/stat "cpuN" lines:
 * user, nice, system, irq and softirq; not idle, iowait or steal, when the
 * CPU ran nothing or the hypervisor ran something else), or -1. */
static int64_t busy_ticks(const struct recorder *rc)
{
	FILE *f = fopen("/proc/stat", "r");
	unsigned long long v[7];
	char line[512];
	int64_t sum = 0;
	int cpu, found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
			continue;
		if (sscanf(line + 3, "%d %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6]) != 8)
			continue;
		if (cpu < 0 || cpu >= rc->bl.ncpus || rc->bl.pfd[cpu] < 0)
			continue;
		sum += (int64_t)(v[0] + v[1] + v[2] + v[5] + v[6]);
		found++;
	}
	fclose(f);
	return found ? sum : -1;
}

/* Are the run-time statistics on for everyone (kernel.bpf_stats_enabled)? */
static int stats_sysctl_on(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
	int on = 0;

	if (f) {
		on = fgetc(f) == '1';
		fclose(f);
	}
	return on;
}

/* The rate the perf events are opened at (record_rate__start raises it). */
uint32_t record_rate__first(const struct record_opts *o)
{
	return o->freq < RECORD_FREQ_START ? o->freq : RECORD_FREQ_START;
}

/* Set the rate; 0, or stop the recording (said) and -1. */
static int rate_set(struct recorder *rc, uint32_t hz)
{
	int err = bpfload__set_freq(&rc->bl, hz);

	if (err) {
		fprintf(stderr, "ljsnap %s: cannot change the sampling rate to %u Hz (%s): "
			"stopping\n", record__cmd(rc), hz, strerror(-err));
		rc->rate.stop = 1;
		return -1;
	}
	rc->rate.freq = hz;
	return 0;
}

/* Start measuring (the BPF program is attached at record_rate__first). */
void record_rate__start(struct recorder *rc, uint64_t now)
{
	struct record_rate *r = &rc->rate;
	int cpu;

	r->freq = record_rate__first(&rc->o);
	r->t_ns = now;
	for (cpu = 0; cpu < rc->bl.ncpus; cpu++)
		r->ncpus += rc->bl.pfd[cpu] >= 0;
	r->by_busy = !rc->o.all;	/* bpfload.c: exclude_idle without -a */
	r->busy = -1;		/* the first check starts the first interval */
	if ((rc->bl.stats_fd < 0 && !stats_sysctl_on()) ||
	    rate_read(rc, &r->run_ns, &r->runs, &r->samples)) {
		r->unmeasured = 1;
		if (!rc->o.quiet && rc->o.freq > RECORD_FREQ_START)
			fprintf(stderr, "ljsnap: cannot measure the cost of sampling (BPF run-time "
				"statistics: %s): -F %u is not bounded by --max-cpu-percent\n",
				strerror(rc->bl.stats_fd < 0 ? -rc->bl.stats_fd : EIO), rc->o.freq);
		if (r->freq != rc->o.freq)
			rate_set(rc, rc->o.freq);
	}
}

/* The cost keeps the rate below -F: count it (once per rate held), say
 * the first time, and lower the rate to hz if it is lower. */
static void rate_limit(struct recorder *rc, uint64_t now, uint32_t hz, const char *why)
{
	struct record_rate *r = &rc->rate;

	if (hz >= r->freq && r->held == r->freq)
		return;		/* held at this rate already */
	if (!r->limited++) {
		r->limited_at = now;
		if (!rc->o.quiet)
			fprintf(stderr, "ljsnap: sampling at %u Hz, not %u: %s (--max-cpu-percent %u)\n",
				hz < r->freq ? hz : r->freq, rc->o.freq, why, rc->o.max_cpu_pct);
	}
	if (hz < r->freq)
		rate_set(rc, hz);
	r->held = r->freq;
}

/*
 * Measure the cost since the last look; lower the rate when it is too high,
 * raise it towards -F (doubling) while the next rate would stay under the
 * bound and the timers deliver their samples.  Cheap when called more often
 * than RATE_CHECK_NS.
 */
void record_rate__check(struct recorder *rc, uint64_t now)
{
	struct record_rate *r = &rc->rate;
	double bound = rc->o.max_cpu_pct / 100.0, cost_ns = 0, delivered = -1;
	uint64_t run_ns, runs, samples, next;
	uint32_t freq = r->freq;
	int64_t busy = -1;
	long hz;
	char why[160];

	if (r->unmeasured || r->stop || now - r->t_ns < RATE_CHECK_NS)
		return;
	if (rate_read(rc, &run_ns, &runs, &samples))
		return;
	/* The share of the periods that ran, or -1 when the interval does not
	 * tell (see the top of the file).  By busy time, the runs and ticks
	 * add up over the checks at one rate until there are enough ticks; a
	 * rate up to RECORD_FREQ_START that is -F has no use for it, and then
	 * /proc/stat is not read. */
	if (!r->by_busy) {
		delivered = (double)(runs - r->runs) * 1e9 /
			    ((double)(now - r->t_ns) * r->freq * r->ncpus);
	} else if ((r->freq > RECORD_FREQ_START || r->freq < rc->o.freq) &&
		   (busy = busy_ticks(rc)) >= 0 && r->busy >= 0 &&
		   busy - r->busy >= RATE_MIN_BUSY_TICKS && (hz = sysconf(_SC_CLK_TCK)) > 0) {
		delivered = (double)(runs - r->busy_runs) * (double)hz /
			    ((double)(busy - r->busy) * r->freq);
	}
	if (samples - r->samples >= RATE_MIN_SAMPLES) {
		cost_ns = (double)(run_ns - r->run_ns) / (double)(samples - r->samples);
		r->cost_ns = (uint64_t)cost_ns;
	}
	r->run_ns = run_ns;
	r->runs = runs;
	r->samples = samples;
	r->t_ns = now;
	next = 2ull * r->freq < rc->o.freq ? 2ull * r->freq : rc->o.freq;
	if (cost_ns * r->freq / 1e9 > bound) {
		snprintf(why, sizeof(why), "the BPF program takes %.1f us per sample, %.0f%% of a "
			 "CPU at %u Hz", cost_ns / 1000, cost_ns * r->freq / 1e7, r->freq);
		rate_limit(rc, now, (uint32_t)(bound * 1e9 / cost_ns * 0.75) + 1, why);
	} else if (delivered >= 0 && delivered < 0.5 && r->freq > RECORD_FREQ_START) {
		snprintf(why, sizeof(why), "at %u Hz only %.0f%% of the sampling interrupts ran: "
			 "they take longer than their period", r->freq, delivered * 100);
		rate_limit(rc, now, r->freq / 2, why);
	} else if (r->freq < rc->o.freq) {
		if ((delivered < 0 || delivered >= 0.8) && cost_ns * next / 1e9 <= bound) {
			rate_set(rc, (uint32_t)next);
		} else {
			if (delivered >= 0 && delivered < 0.8)
				snprintf(why, sizeof(why), "at %u Hz only %.0f%% of the sampling "
					 "interrupts ran", r->freq, delivered * 100);
			else
				snprintf(why, sizeof(why), "the BPF program takes %.1f us per "
					 "sample, %.0f%% of a CPU at %u Hz", cost_ns / 1000,
					 cost_ns * next / 1e7, (uint32_t)next);
			rate_limit(rc, now, r->freq, why);
		}
	}
	/* A new interval of busy time starts once this one told, at a new
	 * rate, or without a start (or one above now: a CPU went offline). */
	if (r->by_busy && (delivered >= 0 || r->freq != freq || r->busy < 0 || busy < r->busy)) {
		r->busy = busy;
		r->busy_runs = runs;
	}
}

/* Append the rate's statistics to st (four entries). */
size_t record_rate__stats(struct recorder *rc, uint64_t now, struct snapfile_stat *st)
{
	struct record_rate *r = &rc->rate;
	size_t n = 0;

	st[n++] = (struct snapfile_stat){ "rate_limited", r->limited };
	st[n++] = (struct snapfile_stat){ "rate_limited_ns", r->limited ? now - r->limited_at : 0 };
	st[n++] = (struct snapfile_stat){ "freq_final_hz", r->freq };
	st[n++] = (struct snapfile_stat){ "sample_cost_ns", r->cost_ns };
	return n;
}

/* Say how often and for how long the cost kept the rate below -F. */
void record_rate__summary(struct recorder *rc, uint64_t now)
{
	struct record_rate *r = &rc->rate;

	if (r->limited)
		fprintf(stderr, "ljsnap: the sampling cost limited the rate %llu time%s, for the "
			"last %.1f s; it ended at %u Hz, not %u (the BPF program: %.1f us per "
			"sample; --max-cpu-percent %u)\n", (unsigned long long)r->limited,
			r->limited == 1 ? "" : "s", (now - r->limited_at) / 1e9, r->freq, rc->o.freq,
			r->cost_ns / 1000.0, rc->o.max_cpu_pct);
}
