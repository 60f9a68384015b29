/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dump.c -- `ljsnap dump PID`: the current stack of every LuaJIT thread of
 * a live process, printed as luaL_traceback would, with its VM state.
 *
 * How: the process is found and its LuaJIT detected from /proc and its
 * files (unwind/detect/ljdetect.h: never ptrace, the target is not
 * stopped); a burst of BPF samples of its threads (dump_live.c, at most
 * DUMP_SECONDS) gives each running thread's registers, stacks and VM state
 * as `record` takes them, and each sample is walked at once with the
 * pipeline (unwind/pipeline.h) and the process's live memory.  The newest
 * complete walk of each thread is printed.  A thread that did not run
 * during the burst (blocked in epoll_wait, say) has no registers to walk
 * from.  When it owns a VM, outside Lua code (in a C function called from
 * Lua, or not in Lua at all), the VM's g is found from memory
 * (dump_mem.c) and its cur_L, whose L->base and L->top are synced then
 * (lj_obj.h, lj_state.c), is walked from memory alone: printed as read
 * without registers.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include "daemon/cmds.h"
#include "daemon/dump.h"
#include "daemon/numarg.h"
#include "daemon/record.h"
#include "unwind/detect/livemem.h"
#include "formats/output/json.h"
#include "symtab/vec.h"

#define DUMP_SECONDS	0.6	/* the longest burst */
#define DUMP_FREQ	499	/* Hz while it lasts */
#define DUMP_VMS_MAX	16	/* VMs read from memory */

static volatile sig_atomic_t g_dump_stop;	/* SIGINT/SIGTERM: end the burst */

static void on_dump_signal(int sig)
{
	(void)sig;
	g_dump_stop = 1;
}

/* One thread's newest stack. */
struct dump_thread {
	uint32_t tid;
	char comm[LJS_COMM_LEN];
	int vm;			/* enum ljs_vm, -1 none */
	int complete;		/* the Lua walk reached the bottom with no unknown frame */
	char *lua;		/* luaL_traceback lines, '\n'-separated */
	char *mixed;		/* --native: "kind\tname" lines, innermost first */
	uint64_t samples;
	uint64_t g;		/* the walk's global_State */
	int from_mem;		/* walked from memory, no registers (tid 0: unknown) */
	int idle;		/* ... cur_L not inside Lua (L->cframe NULL) */
};

struct dump {
	uint32_t pid;
	int native, json;
	struct ljs_pipe *pipe;
	struct ljs_proc proc;
	struct ljs_pipe_out out;
	struct dump_thread *t;
	size_t nt, tcap;
	size_t ntasks;		/* threads of the process when the dump began */
	uint64_t samples, no_lua;
	int err;		/* -ENOMEM */
};

/* Append a formatted line to a malloc'ed text; -ENOMEM. */
static int text_add(char **text, const char *line)
{
	size_t old = *text ? strlen(*text) : 0, n = strlen(line);
	char *p = realloc(*text, old + n + 2);

	if (!p)
		return -ENOMEM;
	memcpy(p + old, line, n);
	p[old + n] = '\n';
	p[old + n + 1] = 0;
	*text = p;
	return 0;
}

/* The entry of tid (added when new; tid 0, a thread not known, is always
 * added), or NULL. */
static struct dump_thread *thread_of(struct dump *d, uint32_t tid)
{
	size_t i;

	for (i = 0; tid && i < d->nt; i++)
		if (d->t[i].tid == tid)
			return &d->t[i];
	if (VEC_GROW(d->t, &d->tcap, d->nt + 1))
		return NULL;
	memset(&d->t[d->nt], 0, sizeof(d->t[0]));
	d->t[d->nt].tid = tid;
	d->t[d->nt].vm = -1;
	return &d->t[d->nt++];
}

/* Keep the walk the pipeline just made as tid's stack. */
static int keep(struct dump *d, struct dump_thread *t, const struct ljs_sample *s)
{
	const struct ljw_stack *st = d->out.lua;
	const struct ljs_stack *ms = &d->out.stack;
	char line[LJS_NAME_MAX + 64];
	size_t i;
	int err = 0;

	free(t->lua);
	free(t->mixed);
	t->lua = t->mixed = NULL;
	memcpy(t->comm, s->comm, sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = 0;
	t->vm = d->out.vm;
	t->g = st->g;
	t->complete = st->complete && !st->nunknown;
	for (i = 0; !err && i < st->nframes; i++) {
		ljw_frame__format(&st->frames[i], line, sizeof(line));
		err = text_add(&t->lua, line);
	}
	/* the pipeline's stack is root (the comm) first: print it innermost first */
	for (i = ms->n; d->native && !err && i-- > 1;) {
		snprintf(line, sizeof(line), "%s\t%s", ljs_fkind__name(ms->f[i].kind),
			 ms->text + ms->f[i].off);
		err = text_add(&t->mixed, line);
	}
	return err;
}

/* Burst callback: walk each sample of the process now; stop once every
 * thread has a complete stack. */
static int on_sample(void *arg, const struct ljs_sample *s)
{
	struct dump *d = arg;
	struct dump_thread *t;
	size_t i, done = 0;

	d->samples++;
	if (g_dump_stop)
		return 1;
	if (!s->g) {
		d->no_lua++;
		return 0;
	}
	t = thread_of(d, s->tid);
	if (!t) {
		d->err = -ENOMEM;
		return 1;
	}
	t->samples++;
	if (live__sample(d->pipe, &d->proc, s, "", &d->out) || !d->out.lua)
		return 0;
	if (t->complete && !(d->out.lua->complete && !d->out.lua->nunknown))
		return 0;	/* keep the newest complete one */
	if (keep(d, t, s)) {
		d->err = -ENOMEM;
		return 1;
	}
	for (i = 0; i < d->nt; i++)
		done += d->t[i].complete;
	return d->ntasks && done >= d->ntasks;
}

/* Walk one VM found in memory (no registers: the walker starts from
 * cur_L's L->base and the SAVE_PC of its C frame) as its thread's stack. */
static int walk_memory(struct dump *d, const struct live_vm *vm, const char *comm)
{
	struct dump_thread *t;
	struct ljs_sample s;
	struct livemem lm;
	struct memsrc live;
	char path[64];
	FILE *f;

	memset(&s, 0, sizeof(s));
	s.pid = d->pid;
	s.tid = vm->tid;
	s.flags = LJS_SAMPLE_F_LUAJIT;
	s.g = vm->g;
	snprintf(s.comm, sizeof(s.comm), "%s", comm);
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", d->pid, vm->tid);
	f = vm->tid ? fopen(path, "r") : NULL;
	if (f) {
		if (fgets(s.comm, sizeof(s.comm), f))
			s.comm[strcspn(s.comm, "\n")] = 0;
		fclose(f);
	}
	livemem__init(&live, &lm, (int)d->pid, NULL);
	if (ljs_pipe__sample(d->pipe, &d->proc, &s, &live, "", &d->out) || !d->out.lua)
		return 0;
	t = thread_of(d, vm->tid);
	if (!t || keep(d, t, &s))
		return -ENOMEM;
	t->from_mem = 1;
	t->idle = !vm->cframe || d->out.lua->end == LJW_END_NOT_IN_LUA;
	return 0;
}

/*
 * The VMs of the process whose thread has no complete stack from the burst
 * (it ran no Lua: blocked in a C function called from Lua, or idle): found
 * from memory (dump_mem.c, from the g's the samples and the detection
 * carried, else from the blocked threads' stacks) and walked from memory.
 */
static int dump_memory(struct dump *d, const struct lj_proc_detect *pd, const char *comm)
{
	uint64_t known[DUMP_VMS_MAX];
	struct live_vm vm[DUMP_VMS_MAX];
	size_t nk = 0, nvm = 0, i, j;
	int err;

	known[nk++] = pd->g;
	for (i = 0; i < d->nt && nk < DUMP_VMS_MAX; i++)
		if (d->t[i].g)
			known[nk++] = d->t[i].g;
	err = live__vms(pd, &d->proc.layout, known, nk, vm, DUMP_VMS_MAX, &nvm);
	if (err)
		return err == -ENOMEM ? err : 0;	/* no threads to list: it exited */
	for (i = 0; i < nvm; i++) {
		for (j = 0; j < d->nt; j++)
			if (d->t[j].complete && (d->t[j].g == vm[i].g ||
						 (vm[i].tid && d->t[j].tid == vm[i].tid)))
				break;
		if (j < d->nt)
			continue;	/* its thread was sampled in Lua */
		err = walk_memory(d, &vm[i], comm);
		if (err)
			return err;
	}
	return 0;
}

/* How many threads pid has now. */
static size_t count_tasks(uint32_t pid)
{
	char path[64];
	struct dirent *de;
	size_t n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dir = opendir(path);
	while (dir && (de = readdir(dir)))
		n += de->d_name[0] != '.';
	if (dir)
		closedir(dir);
	return n;
}

/* A thread's VM state in words. */
static const char *vm_text(const struct dump_thread *t)
{
	if (t->from_mem && t->idle)
		return "idle (not in Lua)";
	if (t->from_mem && t->vm == LJS_VM_C)
		return "C code (not running Lua)";
	return t->vm >= 0 ? ljs_vm__name((enum ljs_vm)t->vm) : "none";
}

/* The plain-text dump. */
static void print_text(const struct dump *d, const char *comm, const char *build)
{
	size_t i, nmem = 0;

	for (i = 0; i < d->nt; i++)
		nmem += d->t[i].from_mem && !d->t[i].samples;
	printf("pid %u (%s): %s; %zu of %zu threads ran Lua during the dump", d->pid, comm, build,
	       d->nt - nmem, d->ntasks);
	if (nmem)
		printf(", %zu VM%s read from memory", nmem, nmem > 1 ? "s" : "");
	printf("\n");
	for (i = 0; i < d->nt; i++) {
		const struct dump_thread *t = &d->t[i];
		const char *p;

		if (t->tid)
			printf("\nthread %u (%s): ", t->tid, t->comm);
		else
			printf("\nthread unknown: ");
		printf("VM state: %s%s%s\n", vm_text(t),
		       t->lua || t->idle ? (t->complete || t->idle ? "" : " (stack incomplete)")
					 : " (no stack walked)",
		       t->from_mem ? "; read from memory, without registers" : "");
		if (t->lua || !t->idle)
			printf("stack traceback:\n");
		for (p = t->lua; p && *p;) {
			size_t n = strcspn(p, "\n");

			printf("\t%.*s\n", (int)n, p);
			p += n + (p[n] == '\n');
		}
		if (!d->native || !t->mixed)
			continue;
		printf("native and Lua frames, innermost first:\n");
		for (p = t->mixed; *p;) {
			size_t n = strcspn(p, "\n");
			const char *tab = memchr(p, '\t', n);

			if (tab)
				printf("\t%-14.*s %.*s\n", (int)(tab - p), p, (int)(n - (tab - p) - 1), tab + 1);
			p += n + (p[n] == '\n');
		}
	}
	if (!d->nt)
		printf("\nno thread ran Lua code during the dump (%llu samples, %llu outside the VM): "
		       "the process is idle or blocked; try again under load\n",
		       (unsigned long long)d->samples, (unsigned long long)d->no_lua);
}

/* The lines of text as a JSON array of strings, or of {kind, name}. */
static void json_lines(const char *text, int kinds)
{
	const char *p;
	int first = 1;

	printf("[");
	for (p = text; p && *p; first = 0) {
		size_t n = strcspn(p, "\n");
		const char *tab = kinds ? memchr(p, '\t', n) : NULL;

		printf("%s", first ? "" : ",");
		if (tab) {
			printf("{\"kind\":");
			json__str(stdout, p, (size_t)(tab - p), 0);
			printf(",\"name\":");
			json__str(stdout, tab + 1, n - (size_t)(tab - p) - 1, 0);
			printf("}");
		} else {
			json__str(stdout, p, n, 0);
		}
		p += n + (p[n] == '\n');
	}
	printf("]");
}

/* The same for machines: one JSON object. */
static void print_json(const struct dump *d, const char *comm, const char *build)
{
	size_t i;

	printf("{\"pid\":%u,\"comm\":", d->pid);
	json__str(stdout, comm, strlen(comm), 0);
	printf(",\"luajit\":");
	json__str(stdout, build, strlen(build), 0);
	printf(",\"threads_total\":%zu,\"samples\":%llu,\"threads\":[", d->ntasks,
	       (unsigned long long)d->samples);
	for (i = 0; i < d->nt; i++) {
		const struct dump_thread *t = &d->t[i];

		if (t->tid)
			printf("%s{\"tid\":%u,\"comm\":", i ? "," : "", t->tid);
		else
			printf("%s{\"tid\":null,\"comm\":", i ? "," : "");
		json__str(stdout, t->comm, strlen(t->comm), 0);
		printf(",\"vm\":");
		if (t->vm >= 0 || t->from_mem) {
			const char *vm = vm_text(t);

			json__str(stdout, vm, strlen(vm), 0);
		} else {
			printf("null");
		}
		printf(",\"from_memory\":%s,\"complete\":%s,\"traceback\":",
		       t->from_mem ? "true" : "false", t->complete ? "true" : "false");
		json_lines(t->lua, 0);
		if (d->native) {
			printf(",\"frames\":");
			json_lines(t->mixed, 1);
		}
		printf("}");
	}
	printf("]}\n");
}

/* Print the usage of `dump`. */
static void dump_usage(FILE *out)
{
	fprintf(out,
		"usage: ljsnap dump [--native] [--json] PID\n"
		"\n"
		"Print the current stack of every thread of PID that runs Lua code, the way\n"
		"luaL_traceback (debug.traceback) prints it, with the VM state of each\n"
		"(interpreter, JIT-compiled, C code, garbage collector, JIT compiler), and exit\n"
		"within about a second.  The target is not stopped: a burst of BPF samples of\n"
		"its threads (at most %.1f s at %d Hz) is walked with its live memory.  Cheap\n"
		"enough to run in a loop on a production host.  A VM whose thread does not run\n"
		"Lua during the burst (blocked in a C function called from Lua: io.read, a\n"
		"socket, os.execute, an FFI call; or idle) is read from memory alone, without\n"
		"registers: its Lua stack is printed with the VM state read from it (\"C code\n"
		"(not running Lua)\", \"idle (not in Lua)\"), marked \"read from memory\", for\n"
		"the thread whose stack holds the VM's C frame (\"thread unknown\" when none\n"
		"can be told).  Other threads that do not run are counted, not shown.\n"
		"\n"
		"      --native   add the native frames: the whole stack, innermost first,\n"
		"                 each frame with its kind (lua, c, builtin, native, ...);\n"
		"                 a stack read from memory has its Lua frames only\n"
		"      --json     print one JSON object (pid, comm, luajit, threads: tid (null:\n"
		"                 unknown), comm, vm, from_memory, complete, traceback[, frames])\n"
		"  -h, --help     this help\n"
		"\n"
		"examples:\n"
		"  ljsnap dump $(pgrep -n nginx)\n"
		"  ljsnap dump --native 1234\n"
		"  while sleep 1; do ljsnap dump --json 1234; done > stacks.jsonl\n"
		"\n"
		"Needs root, or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE.\n", DUMP_SECONDS, DUMP_FREQ);
}

/* Say why pid cannot be dumped, in one line. */
static void say_no_pid(uint32_t pid, int err)
{
	if (err == -ENOENT || err == -ESRCH)
		fprintf(stderr, "ljsnap dump: no process %u\n", pid);
	else if (err == -EACCES || err == -EPERM)
		fprintf(stderr, "ljsnap dump: pid %u: permission denied (run as root, or with "
			"CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE)\n", pid);
	else
		fprintf(stderr, "ljsnap dump: cannot inspect pid %u: %s\n", pid, strerror(-err));
}

/* Parse the command line: 0, 1 (help printed) or 2 (usage error). */
static int dump_opts(struct dump *d, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "native", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			d->native = 1;
			break;
		case 'j':
			d->json = 1;
			break;
		case 'h':
			dump_usage(stdout);
			return 1;
		default:
			dump_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		dump_usage(stderr);
		return 2;
	}
	if (numarg__u64(argv[optind], 1, RECORD_PID_MAX, &v)) {
		fprintf(stderr, "ljsnap dump: PID wants 1..%d, got '%s'\n", RECORD_PID_MAX, argv[optind]);
		return 2;
	}
	d->pid = (uint32_t)v;
	return 0;
}

/* Take the burst and print; the exit status. */
static int dump_run(struct dump *d, const struct lj_proc_detect *pd, const char *comm)
{
	struct live_lj lj = { .layout = pd->layout, .vm_lo = pd->vm_lo, .vm_hi = pd->vm_hi };
	struct vdso_image vdso = { 0 };
	struct sigaction sa;
	char build[256], errbuf[512];
	int err;

	snprintf(build, sizeof(build), "%s %s in %s", lj_layout__family_name(pd->layout.family),
		 (pd->layout.flags & LJ_LAYOUT_F_GC64) ? "GC64" : "non-GC64",
		 pd->maps[pd->vm_map].path ? pd->maps[pd->vm_map].path : "?");
	d->pipe = ljs_pipe__new((d->native ? 0 : LJS_PIPE_LUA_ONLY) | LJS_PIPE_NO_KERNEL, NULL);
	if (!d->pipe)
		return -ENOMEM;
	if (d->native && vdso__self(&vdso) == 0)
		live__vdso(d->pipe, &vdso);
	err = live__proc(d->pipe, d->native ? pd : NULL, &vdso, &lj, &d->proc);
	vdso__exit(&vdso);
	if (err)
		return err;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_dump_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	d->ntasks = count_tasks(d->pid);
	err = live__burst(d->pid, &lj, DUMP_FREQ, DUMP_SECONDS, on_sample, d, errbuf, sizeof(errbuf));
	if (err) {
		fprintf(stderr, "ljsnap dump: %s\n", errbuf);
		return 1;
	}
	if (d->err)
		return d->err;
	if (g_dump_stop)
		return 130;
	if (kill((pid_t)d->pid, 0) && errno == ESRCH) {
		fprintf(stderr, "ljsnap dump: pid %u (%s) exited during the dump\n", d->pid, comm);
		return 1;
	}
	err = dump_memory(d, pd, comm);
	if (err)
		return err;
	if (d->json)
		print_json(d, comm, build);
	else
		print_text(d, comm, build);
	return 0;
}

/* `ljsnap dump`. */
int cmd_dump(int argc, char **argv)
{
	struct lj_detect_cache *cache = NULL;
	struct lj_proc_detect pd;
	struct dump d;
	char path[64], comm[64] = "?";
	size_t i;
	FILE *f;
	int err, ret;

	memset(&d, 0, sizeof(d));
	memset(&pd, 0, sizeof(pd));
	ret = dump_opts(&d, argc, argv);
	if (ret)
		return ret == 1 ? 0 : 2;
	ret = 1;
	snprintf(path, sizeof(path), "/proc/%u/comm", d.pid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	cache = lj_detect_cache__new();
	err = cache ? lj_detect__process((int)d.pid, cache, &pd) : -ENOMEM;
	if (err) {
		say_no_pid(d.pid, kill((pid_t)d.pid, 0) && errno == ESRCH ? -ESRCH : err);
		goto out;
	}
	if (!pd.found) {
		fprintf(stderr, "ljsnap dump: pid %u (%s): no LuaJIT in it (no mapped file has "
			"LuaJIT's interpreter)\n", d.pid, comm);
		goto out;
	}
	if (!pd.det.layout_ok) {
		fprintf(stderr, "ljsnap dump: pid %u (%s): LuaJIT found but its layout could not be "
			"calibrated (run 'ljsnap doctor %u')\n", d.pid, comm, d.pid);
		goto out;
	}
	err = dump_run(&d, &pd, comm);
	if (err < 0)
		fprintf(stderr, "ljsnap dump: %s\n", strerror(-err));
	ret = err < 0 ? 1 : err;
out:
	for (i = 0; i < d.nt; i++) {
		free(d.t[i].lua);
		free(d.t[i].mixed);
	}
	free(d.t);
	if (d.pipe) {
		ljs_stack__exit(&d.out.stack);
		ljs_proc__exit(&d.proc);
	}
	ljs_pipe__delete(d.pipe);
	lj_proc_detect__exit(&pd);
	lj_detect_cache__delete(cache);
	return ret;
}
