/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * top.c -- `ljsnap top`: a live view of the hottest Lua and native
 * functions of running processes, refreshed every second (top.h says how;
 * top_view.c counts and prints).
 *
 * The recorder's loop (record.h: record__run with hooks) samples; each
 * sample is walked at once with the process's live memory; `-o FILE`
 * writes the capture at the same time.  The terminal is in raw mode (no
 * echo, no line buffering; Ctrl-C still signals) only once the loop runs,
 * and is restored on every way out: q, Ctrl-C, SIGTERM, the targets' end.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemon/cmds.h"
#include "daemon/dump.h"
#include "daemon/numarg.h"
#include "daemon/top.h"
#include "symtab/vec.h"
#include "unwind/detect/ljdetect.h"

#define TOP_TICK_MS		50
#define TOP_COUNTERS_NS		200000000ull	/* BPF counters read at most this often */
#define TOP_EMPTY_NS		250000000ull	/* refresh while no function was seen */

/* Print the usage of `top`. */
static void usage(FILE *out)
{
	fprintf(out,
		"usage: ljsnap top [-p PID[,PID...] | -a | -- COMMAND [ARGS...]] [-F HZ] [-o FILE]\n"
		"                  [-d SECONDS] [--once] [-i SECONDS]\n"
		"\n"
		"A live view of sampled processes, refreshed every second: the hottest Lua\n"
		"functions and native leaf functions by self and total share, over the last\n"
		"interval and since the start; each process (nginx worker) with its samples per\n"
		"second; the shares of the VM states (interpreter, JIT-compiled code, C code,\n"
		"garbage collector, JIT compiler, trace exits); samples per second and lost.\n"
		"Every sample goes through the same pipeline as `ljsnap report`.\n"
		"\n"
		"  -p, --pid PID[,PID]     these processes and the children they fork\n"
		"  -a, --all               every process on the machine\n"
		"  -F, --freq HZ           samples per second per CPU (default 99)\n"
		"  -o, --output FILE       also write a capture file, as `ljsnap record -o`\n"
		"  -d, --duration SECONDS  stop after this long (plain text: print then)\n"
		"  -i, --interval SECONDS  between two refreshes (default 1)\n"
		"      --once              print plain text once, after -d SECONDS or one\n"
		"                          interval, and exit (also when stdout is not a terminal)\n"
		"  -h, --help              this help\n"
		"\n"
		"keys: s sort by self share, t sort by total share, l Lua frames only / mixed\n"
		"native and Lua frames, p (or space) pause, q quit.  Fits an 80x24 terminal.\n"
		"\n"
		"examples:\n"
		"  ljsnap top -p $(pgrep -d, nginx)\n"
		"  ljsnap top -p 1234 -o hot.ljsnap          # look, and keep a capture\n"
		"  ljsnap top --once -d 5 -p 1234 > top.txt\n"
		"  ljsnap top -- luajit app.lua\n"
		"\n"
		"Needs root, or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE.\n");
}

/* The entry of pid (added when new), or NULL (no memory). */
static struct top_proc *proc_of(struct top *t, uint32_t pid)
{
	uint64_t *slot;
	int r = intmap__slot(&t->bypid, pid, &slot);

	if (r < 0)
		return NULL;
	if (r == 1)
		return &t->procs[*slot];
	if (VEC_GROW(t->procs, &t->pcap, t->nprocs + 1)) {
		intmap__del(&t->bypid, pid);
		return NULL;
	}
	*slot = t->nprocs;
	memset(&t->procs[t->nprocs], 0, sizeof(t->procs[0]));
	t->procs[t->nprocs].pid = pid;
	return &t->procs[t->nprocs++];
}

/* Hook: a process was inspected; describe it for the pipeline. */
static void on_process(void *arg, const struct proc *p, const struct lj_proc_detect *pd)
{
	struct top *t = arg;
	struct top_proc *tp = proc_of(t, p->pid);
	struct live_lj lj = { .layout = p->layout, .vm_lo = p->vm_lo, .vm_hi = p->vm_hi };

	if (!tp) {
		t->err = -ENOMEM;
		return;
	}
	if (tp->described)
		ljs_proc__exit(&tp->proc);
	memcpy(tp->comm, p->comm, sizeof(tp->comm));
	snprintf(tp->build, sizeof(tp->build), "%s", p->has_luajit ? p->build : "");
	if (live__proc(t->pipe, pd, &t->rc.vdso, p->has_luajit ? &lj : NULL, &tp->proc))
		t->err = -ENOMEM;
	tp->described = 1;
	tp->exited = 0;
}

/* Hook: a process exited; keep it on the list. */
static void on_exited(void *arg, const struct proc *p)
{
	struct top *t = arg;
	uint64_t idx;

	if (!intmap__get(&t->bypid, p->pid, &idx))
		return;
	t->procs[idx].exited = 1;
	if (t->procs[idx].described)
		ljs_proc__exit(&t->procs[idx].proc);
	t->procs[idx].described = 0;
}

/* Hook: a sample; walk it now and count it. */
static void on_sample(void *arg, const struct proc *p, const struct ljs_sample *s)
{
	struct top *t = arg;
	struct top_proc *tp = proc_of(t, s->pid);
	struct agg_labels l = { .pid = s->pid, .tid = s->tid, .vm = -1 };

	(void)p;
	if (!tp) {
		t->err = -ENOMEM;
		return;
	}
	if (!tp->comm[0])
		memcpy(tp->comm, s->comm, sizeof(tp->comm));
	t->samples++;
	tp->all++;
	if (!tp->described || live__sample(t->pipe, &tp->proc, s, tp->comm, &t->out)) {
		t->vm[TOP_VM_NONE]++;
		return;
	}
	l.vm = t->out.vm;
	t->vm[t->out.vm >= 0 && t->out.vm < LJS_VM__MAX ? t->out.vm : TOP_VM_NONE]++;
	if (agg__add_stack(t->agg, &t->out.stack, &l, 1) == -ENOMEM)
		t->err = -ENOMEM;
}

/* Put the terminal back as it was. */
static void term_restore(struct top *t)
{
	if (!t->raw)
		return;
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &t->saved);
	t->raw = 0;
}

/* Raw mode: keys one at a time, no echo; signals stay (Ctrl-C); the
 * alternate screen, no cursor. */
static void term_raw(struct top *t)
{
	struct termios raw;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &t->saved))
		return;
	raw = t->saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw))
		return;
	t->raw = 1;
	fputs("\033[?1049h\033[?25l\033[2J", stdout);
}

/* Act on the keys typed since the last tick. */
static void read_keys(struct top *t)
{
	char buf[32];
	ssize_t n, i;

	if (!t->raw)
		return;
	n = read(STDIN_FILENO, buf, sizeof(buf));
	for (i = 0; i < n; i++) {
		switch (buf[i]) {
		case 'q': case 'Q':
			t->quit = 1;
			break;
		case 's':
			t->sort_total = 0;
			top_view__sort(t);
			break;
		case 't':
			t->sort_total = 1;
			top_view__sort(t);
			break;
		case 'l': case 'm':
			t->lua_only = !t->lua_only;
			break;
		case 'p': case ' ':
			t->paused = !t->paused;
			break;
		default:
			continue;
		}
		if (!t->quit)
			top_view__print(t, stdout, 1);
	}
}

/* Hook: keys, BPF counters and, every interval, a refresh. */
static int on_tick(void *arg, struct recorder *rc, uint64_t now)
{
	struct top *t = arg;
	uint64_t ctr[LJS_ERR__MAX];

	if (!t->start_ns) {
		t->start_ns = now;
		t->next_ns = now + TOP_EMPTY_NS;
		if (t->tty) {
			term_raw(t);
			top_view__print(t, stdout, 1);
		}
	}
	if (now >= t->counters_ns + TOP_COUNTERS_NS) {
		t->counters_ns = now;
		t->freq = rc->rate.freq;
		if (bpfload__counters(&rc->bl, ctr) == 0)
			t->lost = ctr[LJS_ERR_RINGBUF_FULL];
	}
	read_keys(t);
	if (t->tty && now >= t->next_ns) {
		/* an empty screen is refreshed soon: the first samples show at once */
		t->next_ns = now + (t->mode[0].nrows ? (uint64_t)(t->interval * 1e9) : TOP_EMPTY_NS);
		if (!t->paused) {
			if (top_view__refresh(t, now))
				t->err = -ENOMEM;
			top_view__print(t, stdout, 1);
		}
	}
	return t->quit || t->err;
}

/* Parse the command line: 0, 1 (help printed) or 2 (usage error). */
static int top_opts(struct top *t, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "freq", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "once", no_argument, NULL, 1 },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct record_opts *o = &t->rc.o;
	int c, err;

	record_opts__defaults(o);
	t->interval = 1.0;
	while ((c = getopt_long(argc, argv, "+p:aF:o:d:i:h", lo, NULL)) != -1) {
		err = record_opts__target(o, c, optarg, "top");
		if (err < 0)
			return 2;
		if (err)
			continue;
		switch (c) {
		case 'i':
			if (numarg__seconds(optarg, RECORD_DURATION_MAX, &t->interval)) {
				fprintf(stderr, "ljsnap top: -i wants seconds, more than 0, got '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 1:
			t->once = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return 2;
		}
	}
	return record_opts__finish(o, argc, argv, "top", usage) ? 2 : 0;
}

/* Whether pid's main thread has children (they are sampled too). */
static int has_children(uint32_t pid)
{
	char path[64];
	int c = EOF;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/children", pid, pid);
	f = fopen(path, "r");
	if (f) {
		c = fgetc(f);
		fclose(f);
	}
	return c != EOF;
}

/* Each -p process exists, may be inspected and runs LuaJIT (or has
 * children, nginx's master with its workers); 0 or -1 (said in one line). */
static int check_pids(const struct record_opts *o)
{
	struct lj_detect_cache *cache = lj_detect_cache__new();
	int i, err = 0;

	for (i = 0; i < o->npids && !err; i++) {
		struct lj_proc_detect pd;
		uint32_t pid = o->pids[i];

		memset(&pd, 0, sizeof(pd));
		if (kill((pid_t)pid, 0) && errno == ESRCH) {
			fprintf(stderr, "ljsnap top: no process %u\n", pid);
			err = -1;
		} else if ((err = lj_detect__process((int)pid, cache, &pd)) != 0) {
			fprintf(stderr, "ljsnap top: pid %u: %s\n", pid, err == -EACCES || err == -EPERM ?
				"permission denied (run as root, or with CAP_BPF, CAP_PERFMON and "
				"CAP_SYS_PTRACE)" : strerror(-err));
			err = -1;
		} else if (!pd.found && !has_children(pid)) {
			fprintf(stderr, "ljsnap top: pid %u: no LuaJIT in it (no mapped file has "
				"LuaJIT's interpreter)\n", pid);
			err = -1;
		}
		lj_proc_detect__exit(&pd);
	}
	lj_detect_cache__delete(cache);
	return err;
}

/* Describe the target for the header, "-p 1,2", "-a" or the command. */
static void describe(struct top *t)
{
	const struct record_opts *o = &t->rc.o;
	size_t off = 0;
	int i;

	if (o->all) {
		snprintf(t->target, sizeof(t->target), "all processes");
		return;
	}
	for (i = 0; o->cmd && o->cmd[i] && off < sizeof(t->target); i++)
		off += (size_t)snprintf(t->target + off, sizeof(t->target) - off, "%s%s", i ? " " : "",
					o->cmd[i]);
	for (i = 0; i < o->npids && off < sizeof(t->target); i++)
		off += (size_t)snprintf(t->target + off, sizeof(t->target) - off, "%s%u",
					i ? "," : "pid ", o->pids[i]);
}

/* `ljsnap top`. */
int cmd_top(int argc, char **argv)
{
	struct top t;
	size_t i, gone;
	int ret;

	memset(&t, 0, sizeof(t));
	ret = top_opts(&t, argc, argv);
	if (ret)
		return ret == 1 ? 0 : 2;
	ret = 1;
	if (check_pids(&t.rc.o))
		goto out;
	t.tty = !t.once && isatty(STDOUT_FILENO);
	if (!t.tty && !t.rc.o.duration)
		t.rc.o.duration = t.interval;	/* plain text after one interval */
	t.rc.o.quiet = 1;
	t.rc.cmd = "top";
	t.freq = t.rc.o.freq;
	describe(&t);
	t.pipe = ljs_pipe__new(LJS_PIPE_NO_KERNEL, NULL);
	t.agg = agg__new(0);
	if (!t.pipe || !t.agg) {
		fprintf(stderr, "ljsnap top: out of memory\n");
		goto out;
	}
	t.hooks = (struct record_hooks){ .sample = on_sample, .process = on_process,
					 .exited = on_exited, .tick = on_tick, .tick_ms = TOP_TICK_MS };
	t.rc.hooks = &t.hooks;
	t.rc.hook_arg = &t;
	/* the recorder's vDSO copy names [vdso] frames: taken before it runs */
	if (vdso__self(&t.rc.vdso) == 0)
		live__vdso(t.pipe, &t.rc.vdso);
	ret = record__run(&t.rc);
	term_restore(&t);
	if (t.err)
		fprintf(stderr, "ljsnap top: out of memory\n");
	if (!t.tty && !t.err && t.start_ns) {	/* the loop ran */
		top_view__refresh(&t, t.last_refresh_ns > t.start_ns ? t.last_refresh_ns :
				  t.start_ns + (uint64_t)(t.rc.o.duration * 1e9));
		top_view__print(&t, stdout, 0);
	}
	for (i = 0; i < t.nprocs; i++)
		if (t.procs[i].exited && !t.tty)
			printf("pid %u (%s) exited while sampled\n", t.procs[i].pid, t.procs[i].comm);
	for (i = 0, gone = 0; i < t.nprocs; i++)
		gone += t.procs[i].exited;
	if (t.tty && !t.quit && !t.err && gone && gone == t.nprocs)
		fprintf(stderr, "ljsnap top: the targets exited\n");
	if (ret == 0 && t.err)
		ret = 1;
out:
	term_restore(&t);
	for (i = 0; i < t.nprocs; i++)
		if (t.procs[i].described)
			ljs_proc__exit(&t.procs[i].proc);
	free(t.procs);
	intmap__exit(&t.bypid);
	for (i = 0; i < 2; i++) {
		free(t.mode[i].rows);
		free(t.mode[i].self_prev);
		free(t.mode[i].total_prev);
	}
	if (t.pipe)
		ljs_stack__exit(&t.out.stack);
	ljs_pipe__delete(t.pipe);
	agg__delete(t.agg);
	free(t.rc.o.pids);
	return ret;
}
