/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record_opts.c -- `ljsnap record`'s command line: usage and options.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/numarg.h"
#include "daemon/record.h"
#include "symtab/vec.h"
#include "unwind/sample.h"

/* Print the usage of `record`. */
static void usage(FILE *out)
{
	fprintf(out,
		"usage: ljsnap record [-p PID[,PID...] | -a] [-F HZ] [-d SECONDS] [-o FILE]\n"
		"                     [--stack-bytes N] [--lua-stack-bytes N] [--ringbuf-mb N]\n"
		"                     [--max-procs N] [--max-cpu-percent P] [--debug-info]\n"
		"                     [--no-embed] [--bpf-timing] [-- COMMAND [ARGS...]]\n"
		"\n"
		"Sample processes with a BPF program and write a capture file.  Samples of\n"
		"LuaJIT processes carry the raw VM state needed to rebuild Lua stacks offline.\n"
		"\n"
		"  -p, --pid PID[,PID]     record these processes and the children they fork\n"
		"  -a, --all               record every process on the machine\n"
		"  -F, --freq HZ           samples per second per CPU (default 99, at most\n"
		"                          kernel.perf_event_max_sample_rate)\n"
		"  -d, --duration SECONDS  stop after this long (default: Ctrl-C, or when the\n"
		"                          command or every -p process has exited)\n"
		"  -o, --output FILE       capture file (default ljsnap.data), mode 0600\n"
		"      --stack-bytes N     user stack bytes copied per sample (default 16384,\n"
		"                          max 65536)\n"
		"      --lua-stack-bytes N Lua stack bytes copied per sample (default 65536,\n"
		"                          max 131072); the newest frames are kept\n"
		"      --ringbuf-mb N      BPF ring buffer size in MiB (default 32, a power of 2,\n"
		"                          at most 1024)\n"
		"      --max-procs N       processes the BPF maps hold at once (default 65536\n"
		"                          sampled, 16384 of them running LuaJIT)\n"
		"      --max-cpu-percent P lower -F while sampling costs a sampled CPU more than\n"
		"                          P%% of its time (1..100, default %d)\n"
		"      --debug-info        also copy each mapped file's line tables and inline\n"
		"                          information into the capture (for report --lines)\n"
		"      --no-embed          do not copy the mapped files' unwind tables and symbols\n"
		"                          into the capture (report then needs the same files)\n"
		"      --bpf-timing        time the parts of each sample in BPF (head and kernel\n"
		"                          stack, user stack, LuaJIT state; 4-5 clock reads per\n"
		"                          sample): `ljsnap info` shows bpf_*_ns\n"
		"  -q, --quiet             print only errors\n"
		"  -h, --help              this help\n"
		"\n"
		"examples:\n"
		"  ljsnap record -o run.ljsnap -- luajit app.lua\n"
		"  ljsnap record -p $(pgrep -o nginx) -F 499 -d 30     # master and its workers\n"
		"  ljsnap record -a -d 10\n"
		"\n"
		"Needs root, or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE.\n", RECORD_CPU_PCT_DEFAULT);
}

/*
 * Refuse a rate above kernel.perf_event_max_sample_rate here, in one line,
 * rather than let perf_event_open fail with EINVAL after the BPF program is
 * loaded.  The kernel may have lowered the sysctl itself because sampling
 * interrupts took too long; that is a reason to sample less, not to raise
 * it.  0, or -EINVAL (reported).
 */
static int check_max_rate(const struct record_opts *o, const char *cmd)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	unsigned long max = 0;
	int n;

	if (!f)
		return 0;	/* the kernel checks it again when the events open */
	n = fscanf(f, "%lu", &max);
	fclose(f);
	if (n != 1 || o->freq <= max)
		return 0;
	fprintf(stderr, "ljsnap %s: -F %u is above kernel.perf_event_max_sample_rate (%lu): "
		"sample at %lu Hz or less\n", cmd, o->freq, max, max);
	return -EINVAL;
}

/* Parse a byte count (k/K suffix allowed) in 8..max, rounded up to 8. */
static int parse_bytes(const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v;
	int err = numarg__size(s, 8, max, &v);

	if (err)
		return err;
	*out = (uint32_t)((v + 7) & ~7ull);
	return 0;
}

/* Parse -p PID[,PID...] into o->pids; see record.h. */
int record_opts__pids(struct record_opts *o, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if ((err = numarg__u64(tok, 1, RECORD_PID_MAX, &v)) != 0)
			goto out;
		if ((err = VEC_GROW(o->pids, &o->pidcap, (size_t)o->npids + 1)) != 0)
			goto out;
		o->pids[o->npids++] = (uint32_t)v;
	}
out:
	free(copy);
	return err;
}

/* The defaults of every option but -o; see record.h. */
void record_opts__defaults(struct record_opts *o)
{
	o->freq = 99;
	o->stack_bytes = LJS_USTACK_DEFAULT;
	o->lstack_bytes = LJS_LSTACK_DEFAULT;
	o->ringbuf_mb = 32;
	o->max_cpu_pct = RECORD_CPU_PCT_DEFAULT;
}

/* The options record and the live views share; see record.h. */
int record_opts__target(struct record_opts *o, int c, const char *arg, const char *cmd)
{
	uint64_t v;

	switch (c) {
	case 'p':
		if (record_opts__pids(o, arg)) {
			fprintf(stderr, "ljsnap %s: -p wants pids 1..%d separated by commas, "
				"got '%s'\n", cmd, RECORD_PID_MAX, arg);
			return -EINVAL;
		}
		return 1;
	case 'a':
		o->all = 1;
		return 1;
	case 'F':
		if (numarg__u64(arg, 1, RECORD_FREQ_MAX, &v)) {
			fprintf(stderr, "ljsnap %s: -F wants 1..%d Hz, got '%s'\n", cmd,
				RECORD_FREQ_MAX, arg);
			return -EINVAL;
		}
		o->freq = (uint32_t)v;
		return 1;
	case 'd':
		if (numarg__seconds(arg, RECORD_DURATION_MAX, &o->duration)) {
			fprintf(stderr, "ljsnap %s: -d wants seconds, more than 0 and at most "
				"%d, got '%s'\n", cmd, RECORD_DURATION_MAX, arg);
			return -EINVAL;
		}
		return 1;
	case 'o':
		o->output = arg;
		return 1;
	}
	return 0;
}

/* After the options: the command, one kind of target, a rate the kernel
 * allows; see record.h. */
int record_opts__finish(struct record_opts *o, int argc, char **argv, const char *cmd,
			void (*print_usage)(FILE *))
{
	if (optind < argc)
		o->cmd = argv + optind;
	if (!!o->all + !!o->npids + !!o->cmd != 1) {
		fprintf(stderr, "ljsnap %s: give exactly one of -p PID, -a or -- COMMAND\n\n", cmd);
		print_usage(stderr);
		return -EINVAL;
	}
	return check_max_rate(o, cmd);
}

/* Parse the command line (see record.h). */
int record_opts__parse(struct record_opts *o, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "stack-bytes", required_argument, NULL, 1 },
		{ "lua-stack-bytes", required_argument, NULL, 2 },
		{ "ringbuf-mb", required_argument, NULL, 3 },
		{ "max-procs", required_argument, NULL, 4 },
		{ "max-cpu-percent", required_argument, NULL, 5 },
		{ "debug-info", no_argument, NULL, 6 },
		{ "no-embed", no_argument, NULL, 7 },
		{ "bpf-timing", no_argument, NULL, 8 },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	uint64_t v;
	int c, err;

	record_opts__defaults(o);
	o->output = "ljsnap.data";
	while ((c = getopt_long(argc, argv, "+p:aF:d:o:qh", lo, NULL)) != -1) {
		err = record_opts__target(o, c, optarg, "record");
		if (err < 0)
			return err;
		if (err)
			continue;
		switch (c) {
		case 1:
			if (parse_bytes(optarg, LJS_USTACK_MAX, &o->stack_bytes)) {
				fprintf(stderr, "ljsnap record: --stack-bytes wants 8..%d, got '%s'\n",
					LJS_USTACK_MAX, optarg);
				return -EINVAL;
			}
			break;
		case 2:
			if (parse_bytes(optarg, LJS_LSTACK_MAX, &o->lstack_bytes)) {
				fprintf(stderr, "ljsnap record: --lua-stack-bytes wants 8..%d, got '%s'\n",
					LJS_LSTACK_MAX, optarg);
				return -EINVAL;
			}
			break;
		case 3:
			if (numarg__u64(optarg, 1, RECORD_RINGBUF_MB_MAX, &v) || (v & (v - 1))) {
				fprintf(stderr, "ljsnap record: --ringbuf-mb wants a power of two, 1..%d, "
					"got '%s'\n", RECORD_RINGBUF_MB_MAX, optarg);
				return -EINVAL;
			}
			o->ringbuf_mb = (uint32_t)v;
			break;
		case 4:
			if (numarg__u64(optarg, 1, RECORD_PID_MAX, &v)) {
				fprintf(stderr, "ljsnap record: --max-procs wants 1..%d, got '%s'\n",
					RECORD_PID_MAX, optarg);
				return -EINVAL;
			}
			o->max_procs = (uint32_t)v;
			break;
		case 5:
			if (numarg__u64(optarg, 1, 100, &v)) {
				fprintf(stderr, "ljsnap record: --max-cpu-percent wants 1..100, got '%s'\n",
					optarg);
				return -EINVAL;
			}
			o->max_cpu_pct = (uint32_t)v;
			break;
		case 6:
			o->debug_info = 1;
			break;
		case 7:
			o->no_embed = 1;
			break;
		case 8:
			o->bpf_timing = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	return record_opts__finish(o, argc, argv, "record", usage);
}
