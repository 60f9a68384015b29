/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.c -- `ljsnap report`: walk every sample of a capture file offline
 * and write folded stacks or a text summary.
 *
 * The file is read twice.  Pass 1 keeps the descriptions of each process
 * (daemon/report_proc.h) and loads every MEMORY record into a memory table (a record may
 * follow the samples that need it).  Pass 2 walks each sample as it is
 * read (the reader's pointers die at the next record) with the memory
 * source chain: the sample's own windows, then the memory table at the
 * sample's pid and time.  Nothing but the file is read: no /proc, no target
 * binaries, so a capture can be reported on any machine.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/cmds.h"
#include "daemon/embed.h"
#include "daemon/numarg.h"
#include "daemon/report_proc.h"
#include "daemon/report_mem.h"
#include "daemon/report_read.h"
#include "formats/capture/snapfile.h"
#include "formats/output/aggregate.h"
#include "formats/output/output.h"
#include "unwind/memtable.h"
#include "unwind/pipeline.h"

/* The recorder walks samples in ring-buffer order, which can trail the
 * sample clock slightly across CPUs: a sample may have used bytes first
 * recorded for a sample taken just after it.  Far above any such skew. */
#define REPORT_MEM_SLACK_NS	1000000000ull
#define REPORT_STREAM_BYTES	(256ull << 20)	/* --memory auto streams larger captures */
#define REPORT_MAX_NOTES	20

struct report_opts {
	const struct output_format *fmt;
	int lines;
	const char *output;
	const char *file;
	int has_pid, has_tid;
	uint32_t pid, tid;
	unsigned top;
	unsigned stack_flags;	/* LJS_PIPE_* */
	int by_trace;		/* text: a table of samples per JIT trace */
	int per_thread;		/* speedscope: a profile per thread */
	unsigned threads;	/* 2: samples read ahead by a thread (report_read.h) */
	enum { MEM_AUTO, MEM_LOAD, MEM_STREAM } mem;	/* --memory (report_mem.h) */
	struct buildid_opts files;	/* where the recorded files are looked up */
};

struct notes {
	char *v[REPORT_MAX_NOTES];
	size_t n;
	uint64_t more;
};

/* Print the usage of `report`. */
static void usage(FILE *out)
{
	const struct output_format *f;
	size_t i, n;

	fprintf(out,
		"usage: ljsnap report [-f FORMAT] [-o OUT] [--pid PID] [--tid TID] [--lines]\n"
		"                     [--top N] [--lua-only | --native-only] [--no-kernel]\n"
		"                     [--by-trace] [--per-thread] [--callsite-names]\n"
		"                     [--sysroot DIR] [--debug-dir DIRS] [--threads N]\n"
		"                     [--memory MODE] FILE\n"
		"\n"
		"Rebuild the stacks of every sample in a capture file and write them as a text\n"
		"summary (top functions, VM states, how completely the stacks were unwound),\n"
		"an interactive html flame graph, a pprof or speedscope profile, or folded\n"
		"stacks.  Only the file is read, so it can be reported on any machine.\n"
		"\n"
		"  -f, --format FORMAT  the output format (default text; see below)\n"
		"  -o, --output OUT     write here instead of standard output\n"
		"      --pid PID        only samples of this process\n"
		"      --tid TID        only samples of this thread\n"
		"      --lines          Lua frames by current line ('f x.lua:17') instead of by\n"
		"                       function ('f x.lua:12', the line where f is defined),\n"
		"                       native frames with file:line where DWARF tells\n"
		"      --top N          rows in each top list of the text summary (default 25)\n"
		"      --lua-only       only Lua frames and VM-state pseudo frames\n"
		"      --native-only    native frames only (the VM shows as its C symbols)\n"
		"      --no-kernel      leave out kernel frames\n"
		"      --by-trace       text: also samples per JIT trace (TRACE_<n>::chunk:line,\n"
		"                       its root trace and the function it started in)\n"
		"      --per-thread     speedscope: one profile per thread (default: per process)\n"
		"      --callsite-names Lua functions by what their caller calls them (LuaJIT's\n"
		"                       traceback names: a tail-called function shows its\n"
		"                       caller's name) instead of where they are defined\n"
		"      --sysroot DIR    look the recorded files up under DIR (a copy of the\n"
		"                       recording machine's files) instead of under /\n"
		"      --debug-dir DIRS colon-separated debug file roots (default /usr/lib/debug,\n"
		"                       under the sysroot)\n"
		"      --threads N      1: read the file in the same thread as the stacks are\n"
		"                       rebuilt; 2: read ahead in a second thread (default 2\n"
		"                       with more than one CPU online); the output is the same\n"
		"      --memory MODE    the harvested memory: 'load' it all before the walk\n"
		"                       (fastest), or 'stream' it just ahead of the samples and\n"
		"                       drop what no later sample can use (report's memory then\n"
		"                       follows what is current, not the capture's length; about\n"
		"                       6%% more CPU); 'auto' (default): stream captures over\n"
		"                       256 MiB.  The output is the same\n"
		"  -h, --help           this help\n"
		"\n"
		"Stacks run from the process name (the root) through native frames (unwound\n"
		"with the DWARF CFI of the files the process mapped, looked up on this machine\n"
		"by path and build id) and the Lua frames spliced in where the VM runs them,\n"
		"to kernel frames ('name_[k]').  Lua frames read 'name chunk:line', the main\n"
		"chunk 'main chunk', builtins by library name ('string.gsub'); frames running\n"
		"in a JIT trace end in '_[j]', frames inlined into a trace in '_[i]', and so\n"
		"do C functions the compiler inlined (where the binary has DWARF).\n"
		"\n"
		"formats:\n");
	f = output__formats(&n);
	for (i = 0; i < n; i++)
		fprintf(out, "  %-11s %s\n", f[i].name, f[i].summary);
	fprintf(out,
		"\n"
		"examples:\n"
		"  ljsnap report app.ljsnap | less\n"
		"  ljsnap report -o app.html app.ljsnap           # open app.html in a browser\n"
		"  ljsnap report -o app.pb.gz app.ljsnap && go tool pprof -top app.pb.gz\n"
		"  ljsnap report -f folded -o app.folded app.ljsnap && flamegraph.pl app.folded > app.svg\n"
		"  ljsnap report -f folded --pid 4242 --lines nginx.ljsnap | inferno-flamegraph > w.svg\n");
}

/* Parse the command line: 0, 1 (help printed), or -EINVAL. */
static int parse_opts(int argc, char **argv, struct report_opts *o)
{
	static const struct option lo[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 1 },
		{ "tid", required_argument, NULL, 2 },
		{ "lines", no_argument, NULL, 3 },
		{ "top", required_argument, NULL, 4 },
		{ "lua-only", no_argument, NULL, 5 },
		{ "native-only", no_argument, NULL, 6 },
		{ "no-kernel", no_argument, NULL, 7 },
		{ "by-trace", no_argument, NULL, 8 },
		{ "sysroot", required_argument, NULL, 9 },
		{ "debug-dir", required_argument, NULL, 10 },
		{ "per-thread", no_argument, NULL, 11 },
		{ "callsite-names", no_argument, NULL, 12 },
		{ "threads", required_argument, NULL, 13 },
		{ "memory", required_argument, NULL, 14 },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const struct output_format *fmts;
	size_t nfmts, i;
	struct stat sb;
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->threads = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->fmt = output__find(optarg);
			if (o->fmt)
				break;
			fprintf(stderr, "ljsnap report: unknown format '%s' (use", optarg);
			fmts = output__formats(&nfmts);
			for (i = 0; i < nfmts; i++)
				fprintf(stderr, "%s '%s'", i ? (i + 1 == nfmts ? " or" : ",") : "",
					fmts[i].name);
			fprintf(stderr, ")\n");
			return -EINVAL;
		case 'o':
			o->output = optarg;
			break;
		case 1:
		case 2:
			if (numarg__u64(optarg, 0, UINT32_MAX, &v)) {
				fprintf(stderr, "ljsnap report: --%s wants a number, 0..%u, got '%s'\n",
					c == 1 ? "pid" : "tid", UINT32_MAX, optarg);
				return -EINVAL;
			}
			if (c == 1) {
				o->has_pid = 1;
				o->pid = (uint32_t)v;
			} else {
				o->has_tid = 1;
				o->tid = (uint32_t)v;
			}
			break;
		case 3:
			o->lines = 1;
			o->stack_flags |= LJS_PIPE_LINES;
			break;
		case 4:
			if (numarg__u64(optarg, 1, 100000, &v)) {
				fprintf(stderr, "ljsnap report: --top wants 1..100000, got '%s'\n", optarg);
				return -EINVAL;
			}
			o->top = (unsigned)v;
			break;
		case 5:
			o->stack_flags |= LJS_PIPE_LUA_ONLY;
			break;
		case 6:
			o->stack_flags |= LJS_PIPE_NATIVE_ONLY;
			break;
		case 7:
			o->stack_flags |= LJS_PIPE_NO_KERNEL;
			break;
		case 8:
			o->by_trace = 1;
			break;
		case 9:
			if (stat(optarg, &sb) || !S_ISDIR(sb.st_mode)) {
				fprintf(stderr, "ljsnap report: --sysroot %s: not a directory\n", optarg);
				return -EINVAL;
			}
			o->files.sysroot = optarg;
			break;
		case 10:
			o->files.debug_dirs = optarg;
			break;
		case 11:
			o->per_thread = 1;
			break;
		case 12:
			o->stack_flags |= LJS_PIPE_CALLSITE;
			break;
		case 13:
			if (numarg__u64(optarg, 1, 2, &v)) {
				fprintf(stderr, "ljsnap report: --threads wants 1 or 2, got '%s'\n",
					optarg);
				return -EINVAL;
			}
			o->threads = (unsigned)v;
			break;
		case 14:
			if (!strcmp(optarg, "auto") || !strcmp(optarg, "load") ||
			    !strcmp(optarg, "stream")) {
				o->mem = optarg[0] == 'a' ? MEM_AUTO : optarg[0] == 'l' ? MEM_LOAD :
					 MEM_STREAM;
				break;
			}
			fprintf(stderr, "ljsnap report: --memory wants auto, load or stream, got '%s'\n",
				optarg);
			return -EINVAL;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if ((o->stack_flags & LJS_PIPE_LUA_ONLY) && (o->stack_flags & LJS_PIPE_NATIVE_ONLY)) {
		fprintf(stderr, "ljsnap report: --lua-only and --native-only exclude each other\n");
		return -EINVAL;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "ljsnap report: give exactly one capture file\n\n");
		usage(stderr);
		return -EINVAL;
	}
	o->file = argv[optind];
	/* No -f: the output file's name says, else the text summary. */
	if (!o->fmt)
		o->fmt = output__for_file(o->output);
	if (!o->fmt)
		o->fmt = output__find("text");
	if (o->fmt->needs & OUTPUT_NEEDS_SRC)
		o->stack_flags |= LJS_PIPE_DETAILS;
	/* Lua walks remembered across samples (unwind/ljwalk_memo.c); the
	 * output is the same without (LJSNAP_REPORT_NO_MEMO=1, for tests and
	 * benchmarks that compare the two). */
	if (!getenv("LJSNAP_REPORT_NO_MEMO"))
		o->stack_flags |= LJS_PIPE_MEMO;
	return 0;
}

/* -- Notes ----------------------------------------------------------------- */

/* Keep a note for the report (the first REPORT_MAX_NOTES, then a count). */
static void __attribute__((format(printf, 2, 3))) notes__add(struct notes *nt, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	if (nt->n >= REPORT_MAX_NOTES) {
		nt->more++;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s)
		nt->v[nt->n++] = s;
}

/* Free the notes. */
static void notes__exit(struct notes *nt)
{
	size_t i;

	for (i = 0; i < nt->n; i++)
		free(nt->v[i]);
}

/* -- Processes --------------------------------------------------------------- */

/* -- Pass 1: processes and memory -------------------------------------------------- */

/* What the recorder's last STATS record says. */
struct recstats {
	uint64_t lost;			/* samples the ring buffer had no room for */
	uint64_t unsampled;		/* processes the BPF maps had no room for */
};

/* Read every record but the samples' bodies: processes, kernel symbols,
 * embedded files and stats are kept; when samples and MEMORY records come
 * goes into the plan for walk_all (report_mem.h).  0 or negative errno
 * (message printed). */
static int load(const char *path, struct ptab *pt, struct ljs_pipe *pipe,
		struct report_mem_plan *pl, struct notes *nt, struct recstats *rs)
{
	struct snapfile_reader *r;
	struct snapfile_rec rec;
	char msg[512] = "";
	uint64_t bad_mem = 0;
	size_t i;
	int err = 0, ret;

	r = snapfile_reader__open_msg(path, &err, msg, sizeof(msg));
	if (!r) {
		fprintf(stderr, "ljsnap report: %s: %s\n", path, msg[0] ? msg : snapfile__strerror(err));
		return err;
	}
	/* Samples are checked by the second pass; this one notes when they come
	 * when memory is streamed (report_mem.h). */
	snapfile_reader__skip_kinds(r, 1u << SNAPFILE_REC_SAMPLE);
	snapfile_reader__sample_heads(r, pl->load == NULL);
	while ((ret = snapfile_reader__next(r, &rec)) != 0) {
		if (ret < 0) {
			notes__add(nt, "%s", snapfile_reader__error(r));
			continue;
		}
		/* MEMORY records are loaded now or by walk_all */
		bad_mem += report_mem_plan__record(pl, &rec) == -EINVAL;
		switch (rec.kind) {
		case SNAPFILE_REC_PROCESS:
			err = ptab__process(pt, pipe, &rec.proc, rec.offset);
			break;
		case SNAPFILE_REC_KSYMS:
			err = ljs_pipe__ksyms(pipe, rec.ksyms.syms, rec.ksyms.n) == -ENOMEM ? -ENOMEM : 0;
			break;
		case SNAPFILE_REC_OBJECT:
			err = ljs_pipe__image(pipe, rec.object.path, rec.object.build_id,
					      rec.object.build_id_len, rec.object.data,
					      rec.object.len) == -ENOMEM ? -ENOMEM : 0;
			break;
		case SNAPFILE_REC_EMBED:
			err = embed__load(pipe, &rec.embed);
			if (err == -EBADMSG)
				notes__add(nt, "the copy of %s at byte offset %" PRIu64 " does not "
					   "decompress: ignored", rec.embed.path, rec.offset);
			err = err == -ENOMEM ? -ENOMEM : 0;
			break;
		case SNAPFILE_REC_STATS:
			/* the last record wins: totals since the start */
			rs->unsampled = 0;
			for (i = 0; i < rec.stats.n; i++) {
				if (!strcmp(rec.stats.v[i].name, "samples_lost"))
					rs->lost = rec.stats.v[i].value;
				if (!strcmp(rec.stats.v[i].name, "bpf_map_failures") ||
				    !strcmp(rec.stats.v[i].name, "target_full"))
					rs->unsampled += rec.stats.v[i].value;
			}
			break;
		default:
			break;
		}
		if (!err)
			err = pl->err;
		if (err) {
			fprintf(stderr, "ljsnap report: out of memory loading %s\n", path);
			goto out;
		}
	}
	ljs_pipe__ksyms_done(pipe);
	{
		const struct snapfile_reader_stats *st = snapfile_reader__stats(r);
		const char *note = snapfile_reader__note(r);

		if (note)
			notes__add(nt, "%s", note);
		if (st->stopped)
			notes__add(nt, "reading stopped at an implausible record length at offset %" PRIu64
				   ": the rest of the file is not used", st->offset);
		if (!st->clean_end)
			notes__add(nt, "no END record: the recording did not finish cleanly (killed, "
				   "out of space, or still running)");
	}
	if (bad_mem)
		notes__add(nt, "%" PRIu64 " malformed memory records ignored", bad_mem);
out:
	snapfile_reader__close(r);
	return err;
}

/* -- Pass 2: samples ------------------------------------------------------------- */

/* State of the sample pass. */
struct walkctx {
	const struct report_opts *o;
	struct ptab *pt;
	struct memtable *mt;
	const struct report_mem_plan *plan;	/* from load() */
	struct agg *agg;
	struct ljs_pipe *pipe;
	struct ljs_pipe_out po;
	uint64_t unknown_pid;		/* samples of pids never described */
	uint64_t first_ns, last_ns;	/* sample times seen (monotonic) */
};

/* Walk one sample and add its stack (kernel, native and Lua frames). */
static int sample__add(struct walkctx *c, const struct ljs_sample *s, uint64_t offset)
{
	struct rproc *p = ptab__get(c->pt, s->pid);
	const struct rdesc *d = p ? rproc__desc_at(p, offset) : NULL;
	static const struct ljs_proc none;
	const struct ljs_proc *rp = &none;
	struct memtable_src msrc;
	struct memsrc_sample sm;
	const char *comm;
	int err;

	if (!p)
		return -ENOMEM;
	p->samples++;
	if (!d) {
		if (!p->comm[0])
			memcpy(p->comm, s->comm, sizeof(p->comm));
		p->comm[sizeof(p->comm) - 1] = '\0';
		c->unknown_pid += p->samples == 1;
	} else {
		rp = &d->proc;
	}
	comm = d && d->comm[0] ? d->comm : p->comm[0] ? p->comm : "?";
	if (!c->first_ns || s->time_ns < c->first_ns)
		c->first_ns = s->time_ns;
	if (s->time_ns > c->last_ns)
		c->last_ns = s->time_ns;
	memtable__memsrc(&msrc, c->mt, s->pid, s->time_ns, NULL);
	memsrc__init_sample_list(&sm, s, &msrc.ms);
	err = ljs_pipe__sample(c->pipe, rp, s, &sm.ms, comm, &c->po);
	if (!err && c->po.has_trace)
		err = agg__trace(c->agg, &c->po.trace);
	if (!err) {
		struct agg_labels l = { .pid = s->pid, .tid = s->tid, .vm = c->po.vm };

		err = agg__add_stack(c->agg, &c->po.stack,
				     (c->o->fmt->needs & OUTPUT_NEEDS_LABELS) ? &l : NULL, 1);
	}
	return err;
}

/* ljs_pipe__missing callback: one note per unusable file. */
static void note_missing(void *arg, const char *line)
{
	notes__add(arg, "native frames: %s", line);
}

/* Walk every selected sample, loading harvested memory just ahead of them
 * (report_mem.h).  0 or negative errno (message printed). */
static int walk_all(struct walkctx *c, struct notes *nt)
{
	struct report_reader *r;
	struct report_mem *rm;
	const struct ljs_sample *s;
	const char *msg;
	uint64_t offset;
	int err = 0, ret;

	rm = report_mem__open(c->o->file, c->mt, REPORT_MEM_SLACK_NS, c->plan,
			      c->o->has_pid ? &c->o->pid : NULL, &err);
	if (!rm) {
		fprintf(stderr, "ljsnap report: %s: %s\n", c->o->file, snapfile__strerror(err));
		return err;
	}
	r = report_reader__open(c->o->file, c->o->threads, &err);
	if (!r) {
		fprintf(stderr, "ljsnap report: %s: %s\n", c->o->file, snapfile__strerror(err));
		report_mem__close(rm);
		return err;
	}
	while ((ret = report_reader__next(r, &s, &offset, &msg)) != 0) {
		if (ret == -1) {
			notes__add(nt, "%s", msg);
			continue;
		}
		if (ret < 0)
			err = ret;
		else
			err = report_mem__before(rm, s->time_ns, offset);
		if (!err && !((c->o->has_pid && s->pid != c->o->pid) ||
			      (c->o->has_tid && s->tid != c->o->tid)))
			err = sample__add(c, s, offset);
		if (err) {
			fprintf(stderr, "ljsnap report: out of memory after %" PRIu64 " samples\n",
				agg__total(c->agg));
			break;
		}
	}
	report_mem__close(rm);
	if (c->unknown_pid)
		notes__add(nt, "%" PRIu64 " processes had samples but no description in the file "
			   "(their stacks show [native])", c->unknown_pid);
	{
		const struct ljs_pipe_stats *ps = ljs_pipe__stats(c->pipe);

		if (ps->native)
			notes__add(nt, "native stacks: %" PRIu64 " samples unwound, %" PRIu64 " (%.1f%%) "
				   "to the outermost frame; %" PRIu64 " with Lua frames spliced in",
				   ps->native, ps->native_complete,
				   100.0 * ps->native_complete / ps->native, ps->spliced);
		if (ps->lua_unplaced)
			notes__add(nt, "%" PRIu64 " samples had Lua frames below where the native unwind "
				   "stopped (kept at the bottom of the stack)", ps->lua_unplaced);
		if (ps->ksym_missing)
			notes__add(nt, "%" PRIu64 " kernel frames had no symbol in the file",
				   ps->ksym_missing);
		/* Not a note: the output is the same with and without the memo. */
		if (getenv("LJSNAP_REPORT_MEMO_STATS"))
			fprintf(stderr, "ljsnap report: %" PRIu64 " of %" PRIu64 " Lua walks "
				"remembered\n", ps->lua_remembered, ps->lua_walks);
		ljs_pipe__missing(c->pipe, note_missing, nt);
	}
	if (report_reader__refs_lost(r))
		notes__add(nt, "%" PRIu64 " stack sections were cut: they referred to the bytes of a "
			   "sample that was lost (corrupt)", report_reader__refs_lost(r));
	agg__set_walk(c->agg, ljs_pipe__walk_stats(c->pipe));
	{
		const struct snapfile_header *h = report_reader__header(r);
		struct agg_time t = {
			.start_ns = snapfile_header__wall_ns(h, c->first_ns ? c->first_ns : h->mono_ns),
			.duration_ns = c->last_ns - c->first_ns,
			.freq_hz = h->freq_hz,
		};

		agg__set_time(c->agg, &t);
	}
	report_reader__close(r);
	return err;
}

/* -- Output ------------------------------------------------------------------------ */

/* qsort comparator for processes: by samples descending, then pid. */
static int proc__cmp(const void *x, const void *y)
{
	const struct agg_proc *a = x, *b = y;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* Tell the profile what the outputs print beside the stacks: the file, the
 * selection, the processes (by samples) and the notes. */
static int describe(struct walkctx *c, struct notes *nt)
{
	struct agg_proc *procs = calloc(c->pt->n ? c->pt->n : 1, sizeof(*procs));
	char sel[64] = "", more[64];
	size_t i, n = 0;
	int err;

	if (!procs)
		return -ENOMEM;
	for (i = 0; i < c->pt->n; i++) {
		const struct rproc *p = &c->pt->v[i];
		const struct rdesc *d = rproc__last(p);

		if (!p->samples)
			continue;
		procs[n].pid = p->pid;
		procs[n].comm = d && d->comm[0] ? d->comm : p->comm;
		procs[n].build = d && d->proc.has_luajit ? d->build : NULL;
		procs[n++].samples = p->samples;
	}
	qsort(procs, n, sizeof(*procs), proc__cmp);
	if (c->o->has_pid)
		snprintf(sel, sizeof(sel), "pid %" PRIu32, c->o->pid);
	if (c->o->has_tid)
		snprintf(sel + strlen(sel), sizeof(sel) - strlen(sel), "%stid %" PRIu32,
			 sel[0] ? ", " : "", c->o->tid);
	err = agg__set_source(c->agg, c->o->file, sel[0] ? sel : NULL);
	for (i = 0; !err && i < n; i++)
		err = agg__add_proc(c->agg, &procs[i]);
	for (i = 0; !err && i < nt->n; i++)
		err = agg__add_note(c->agg, nt->v[i]);
	if (!err && nt->more) {
		snprintf(more, sizeof(more), "... and %" PRIu64 " more", nt->more);
		err = agg__add_note(c->agg, more);
	}
	free(procs);
	return err;
}

/* `ljsnap report`. */
int cmd_report(int argc, char **argv)
{
	struct report_opts o;
	struct ptab pt = { 0 };
	struct notes nt = { .n = 0 };
	struct walkctx c;
	struct memtable *mt = NULL;
	FILE *out = stdout;
	struct recstats rst = { 0, 0 };
	struct report_mem_plan plan;
	size_t i;
	int ret = 1, err;

	memset(&c, 0, sizeof(c));
	report_mem_plan__init(&plan, NULL);
	err = parse_opts(argc, argv, &o);
	if (err)
		return err > 0 ? 0 : 2;
	mt = memtable__new();
	c.agg = agg__new((o.lines ? AGG_LINES : 0) | (o.by_trace ? AGG_TRACES : 0));
	c.pipe = ljs_pipe__new(o.stack_flags, &o.files);
	if (!mt || !c.agg || !c.pipe) {
		fprintf(stderr, "ljsnap report: out of memory\n");
		goto out;
	}
	memtable__set_slack(mt, REPORT_MEM_SLACK_NS);
	{
		struct stat sb;

		if (o.mem == MEM_LOAD || (o.mem == MEM_AUTO && !stat(o.file, &sb) &&
					  (uint64_t)sb.st_size <= REPORT_STREAM_BYTES))
			plan.load = mt;
	}
	if (o.output) {
		FILE *f = fopen(o.output, "w");

		if (!f) {
			fprintf(stderr, "ljsnap report: cannot create %s: %s\n", o.output,
				strerror(errno));
			goto out;
		}
		out = f;
	}
	if (load(o.file, &pt, c.pipe, &plan, &nt, &rst))
		goto out;
	for (i = 0; i < pt.n && plan.records == 0; i++)
		if (rproc__last(&pt.v[i]) && rproc__last(&pt.v[i])->proc.has_luajit) {
			notes__add(&nt, "the file holds no harvested memory: Lua frames beyond the "
				   "sampled windows cannot be named (record with a newer ljsnap)");
			break;
		}
	if (rst.lost)
		notes__add(&nt, "the recorder lost %" PRIu64 " samples (ring buffer full: record "
			   "with a lower -F or a larger --ringbuf-mb)", rst.lost);
	if (rst.unsampled)
		notes__add(&nt, "%" PRIu64 " processes were not sampled or not configured: the BPF "
			   "maps were full (record with a larger --max-procs)", rst.unsampled);
	c.o = &o;
	c.pt = &pt;
	c.mt = mt;
	c.plan = &plan;
	if (walk_all(&c, &nt))
		goto out;
	err = describe(&c, &nt);
	/* The output reads only the profile model: what the walk used goes
	 * first, so that its memory is free for the writer's. */
	ptab__exit(&pt);
	ljs_pipe__delete(c.pipe);
	c.pipe = NULL;
	memtable__delete(mt);
	mt = NULL;
	plan.load = NULL;
	if (!err) {
		struct output_opts oo = { .top = o.top, .by_trace = o.by_trace,
					  .per_thread = o.per_thread };

		err = o.fmt->write(c.agg, &oo, out);
	}
	if (!o.fmt->notes_inline) {
		for (i = 0; i < nt.n; i++)
			fprintf(stderr, "ljsnap report: note: %s\n", nt.v[i]);
		if (!agg__total(c.agg))
			fprintf(stderr, "ljsnap report: no samples%s\n",
				o.has_pid || o.has_tid ? " match the selection" : " in the file");
	}
	if (out != stdout && fclose(out) && !err)
		err = -EIO;
	out = stdout;
	if (err) {
		fprintf(stderr, "ljsnap report: cannot write the report: %s\n", strerror(-err));
		goto out;
	}
	if (o.output && o.fmt->view) {
		fprintf(stderr, "ljsnap report: wrote %s (%s); to look at it: ", o.output, o.fmt->name);
		output__print_view(o.fmt, o.output, stderr);
		fputc('\n', stderr);
	}
	ret = 0;
out:
	if (out != stdout)
		fclose(out);
	ljs_stack__exit(&c.po.stack);
	ptab__exit(&pt);
	ljs_pipe__delete(c.pipe);
	agg__delete(c.agg);
	memtable__delete(mt);
	report_mem_plan__exit(&plan);
	notes__exit(&nt);
	return ret;
}
