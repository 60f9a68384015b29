/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inspect.c -- look at a live process: identity from /proc, LuaJIT
 * detection over its mappings, the BPF configuration, the PROCESS record.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "formats/capture/harvest.h"
#include "unwind/detect/livemem.h"
#include "unwind/detect/ljdetect.h"
#include "unwind/native.h"
#include "daemon/record.h"

#define INSPECT_LIVE_TRIES	8		/* live calibration attempts per process */
#define INSPECT_LIVE_GAP_NS	100000000ull	/* between two attempts */
/* A process is looked at again INSPECT_AGAIN_MIN_NS after its mappings
 * changed (exec, dlopen), then ever less often up to INSPECT_AGAIN_MAX_NS
 * while they stay the same; only while it has samples (record.c). */
#define INSPECT_AGAIN_MIN_NS	20000000ull
#define INSPECT_AGAIN_MAX_NS	4000000000ull
/* /proc shows another image this long without an exec event: take it. */
#define INSPECT_NEW_IMAGE_NS	1000000000ull

/* Read a small /proc file into buf (NUL-terminated); bytes read or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

/* ppid and start time (clock ticks since boot -> ns) from /proc/PID/stat. */
static void read_stat(uint32_t pid, uint32_t *ppid, uint64_t *start_ns)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	int pp = 0;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return;
	p = strrchr(buf, ')');	/* comm may hold spaces and parentheses */
	if (!p)
		return;
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
	 * utime stime cutime cstime priority nice threads itrealvalue starttime */
	if (sscanf(p + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
		   "%*d %*d %llu", &pp, &start) == 2) {
		*ppid = pp;
		*start_ns = start * (1000000000ull / sysconf(_SC_CLK_TCK));
	}
}

/* The command line with NULs turned into spaces. */
static void read_cmdline(uint32_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n, i;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	n = read_small(path, buf, len);
	for (i = 0; i < n - 1; i++)
		if (!buf[i])
			buf[i] = ' ';
	if (n <= 0)
		buf[0] = 0;
}

/* The executable mappings of a detection result, as lj_detect__xmaps
 * gives them (malloc'ed, *n entries; NULL: none, or no memory). */
static struct lj_xmap *xmaps_of(const struct lj_proc_detect *pd, size_t *n)
{
	struct lj_xmap *v = calloc(pd->nmaps ? pd->nmaps : 1, sizeof(*v));
	size_t i;

	*n = 0;
	for (i = 0; v && i < pd->nmaps; i++) {
		const struct lj_mapping *m = &pd->maps[i];

		if (m->prot & PROT_EXEC)
			v[(*n)++] = (struct lj_xmap){ m->start, m->end, m->inode, m->path != NULL };
	}
	return v;
}

/* A signature of the executable mappings: file-backed ones (dlopen) and
 * anonymous ones (LuaJIT's machine-code areas, mapped when traces are
 * compiled: report names a frame there [JIT code] only when a PROCESS
 * record has the mapping). */
static uint64_t maps_signature(const struct lj_xmap *x, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h = (h ^ x[i].start) * 1099511628211ull;
		h = (h ^ (x[i].named ? x[i].inode : x[i].end)) * 1099511628211ull;
	}
	return h;
}

/* What tells this image of a process from the next one after an exec: the
 * inode and address of the executable's first mapping (0 if not mapped). */
static uint64_t image_key(const struct lj_proc_detect *pd, const char *exe)
{
	size_t i;

	for (i = 0; i < pd->nmaps; i++)
		if (pd->maps[i].path && !strcmp(pd->maps[i].path, exe))
			return (pd->maps[i].inode * 1099511628211ull) ^ pd->maps[i].start;
	return 0;
}

/* Remember the executable mappings of p (to notice when they change). */
static void keep_xranges(struct proc *p, const struct lj_xmap *x, size_t n)
{
	uint64_t *v = calloc(n ? n * 2 : 1, sizeof(*v));
	size_t i;

	for (i = 0; v && i < n; i++) {
		v[2 * i] = x[i].start;	/* /proc/PID/maps is sorted */
		v[2 * i + 1] = x[i].end;
	}
	proctab__set_xranges(p, v, (uint32_t)n);	/* no memory: no ranges, every IP looks new */
}

/* Nothing new since the last inspection: look again later, less and less
 * often. */
static void back_off(struct proc *p)
{
	p->reinspect_gap_ns = p->reinspect_gap_ns * 2 > INSPECT_AGAIN_MAX_NS ?
		INSPECT_AGAIN_MAX_NS : p->reinspect_gap_ns * 2;
}

/*
 * A look again at a process described already: when its executable
 * mappings are those of its last description, nothing else it could show
 * (identity, files, LuaJIT) is read; 1 then, else 0 (inspect the whole
 * process).  One read of /proc/PID/maps, no file stat'ed or opened.
 */
static int unchanged(struct proc *p, uint64_t now_ns)
{
	struct lj_xmap *x;
	size_t n;

	if (!p->reported || !p->maps_sig || p->other_image_ns || lj_detect__xmaps(p->pid, &x, &n))
		return 0;
	if (maps_signature(x, n) != p->maps_sig) {
		free(x);
		return 0;
	}
	p->inspected_ns = now_ns;
	keep_xranges(p, x, n);
	back_off(p);
	free(x);
	return 1;
}

/* Describe a detected build for humans. */
static void describe(const struct lj_proc_detect *pd, char *buf, size_t len)
{
	const struct lj_mapping *m = pd->vm_map < pd->nmaps ? &pd->maps[pd->vm_map] : NULL;

	snprintf(buf, len, "%s %s%s in %s", lj_layout__family_name(pd->layout.family),
		 (pd->layout.flags & LJ_LAYOUT_F_GC64) ? "GC64" : "non-GC64",
		 pd->nvm > 1 ? " (several VM copies mapped)" : "",
		 m && m->path ? m->path : "?");
}

/* The mappings of a detection result as the pipeline and the PROCESS
 * record take them; see record.h. */
struct procmap_desc *inspect__maps(const struct lj_proc_detect *pd, const struct vdso_image *vdso,
				   uint32_t pid, size_t *n)
{
	struct procmap_desc *maps;
	size_t i;

	*n = 0;
	maps = pd->nmaps ? calloc(pd->nmaps, sizeof(*maps)) : NULL;
	for (i = 0; maps && i < pd->nmaps; i++) {
		const struct lj_mapping *m = &pd->maps[i];
		struct procmap_desc *o = &maps[(*n)++];

		o->start = m->start;
		o->end = m->end;
		o->offset = m->offset;
		o->prot = ((m->prot & PROT_READ) ? PROCMAP_PROT_READ : 0) |
			  ((m->prot & PROT_WRITE) ? PROCMAP_PROT_WRITE : 0) |
			  ((m->prot & PROT_EXEC) ? PROCMAP_PROT_EXEC : 0) |
			  ((m->flags & LJ_MAP_F_SHARED) ? PROCMAP_PROT_SHARED : 0);
		o->path = m->path ? m->path : "";
		o->build_id = m->build_id;
		o->build_id_len = m->build_id_len;
		if (m->path && !strcmp(m->path, "[vdso]") && vdso && vdso->build_id_len &&
		    vdso__same(vdso, (int)pid, m->start, m->end)) {
			/* the image the file carries (OBJECT record) */
			o->build_id = vdso->build_id;
			o->build_id_len = (uint32_t)vdso->build_id_len;
		}
	}
	return maps;
}

/* Write the PROCESS record for p from a detection result. */
static void write_process(struct recorder *rc, const struct proc *p,
			  const struct lj_proc_detect *pd, const char *exe, const char *cmdline,
			  uint64_t start_ns)
{
	struct procmap_desc *maps = NULL;
	const char **prov = NULL;
	struct snapfile_process sp;
	size_t i, n = 0;
	int err;

	if (rc->hooks && rc->hooks->process && pd)
		rc->hooks->process(rc->hook_arg, p, pd);
	if (!rc->w)
		return;	/* a live view without a capture file */
	memset(&sp, 0, sizeof(sp));
	sp.pid = p->pid;
	sp.ppid = p->ppid;
	sp.image = p->image;
	memcpy(sp.comm, p->comm, sizeof(sp.comm));
	sp.exe = exe;
	sp.cmdline = cmdline;
	sp.start_ns = start_ns;
	if (pd && pd->nmaps) {
		maps = inspect__maps(pd, &rc->vdso, p->pid, &n);
		sp.maps = maps;
		sp.nmaps = maps ? n : 0;
	}
	if (p->has_luajit && pd) {
		sp.has_luajit = 1;
		sp.layout = p->layout;
		sp.lj_build = p->build;
		sp.vm_lo = p->vm_lo;
		sp.vm_hi = p->vm_hi;
		sp.vm_exit = p->vm_exit_ret;
		prov = calloc(pd->det.nnotes + pd->det.nwarnings + 1, sizeof(*prov));
		for (i = 0; prov && i < pd->det.nnotes; i++)
			prov[sp.nprov++] = pd->det.notes[i];
		for (i = 0; prov && i < pd->det.nwarnings; i++)
			prov[sp.nprov++] = pd->det.warnings[i];
		sp.prov = prov;
	}
	/* The copies of the files it maps come before the first description
	 * that maps them (docs/capture-format.md, EMBED). */
	err = pd ? embedder__mappings(&rc->emb, rc->w, p->pid, pd->maps, pd->nmaps) : 0;
	if (!err)
		err = snapfile_writer__process(rc->w, &sp);
	if (err && !rc->werr)
		rc->werr = err;
	free(maps);
	free(prov);
}

/* exe, comm, ppid, start time and command line of p from /proc. */
static void read_identity(struct proc *p, char *exe, size_t exelen, char *cmdline, size_t cmdlen,
			  uint64_t *start_ns)
{
	char path[64], comm[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/exe", p->pid);
	n = readlink(path, exe, exelen - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/comm", p->pid);
	if (read_small(path, comm, sizeof(comm)) > 0) {
		comm[strcspn(comm, "\n")] = 0;
		comm[sizeof(p->comm) - 1] = 0;
		memcpy(p->comm, comm, sizeof(p->comm));
	}
	read_stat(p->pid, &p->ppid, start_ns);
	read_cmdline(p->pid, cmdline, cmdlen);
}

/* Push p's configuration to BPF under a new generation. */
static void publish(struct recorder *rc, struct proc *p)
{
	struct ljs_proc_cfg cfg;
	int err;

	p->cfg_gen = ++rc->cfg_gen;
	proctab__cfg(p, rc->o.lstack_bytes, &cfg);
	err = bpfload__set_cfg(&rc->bl, p->pid, &cfg);
	if (err)
		record__map_failed(rc, p->pid, "publish its LuaJIT layout to BPF", err);
}

/* Inspect a process; see record.h. */
void inspect__process(struct recorder *rc, struct proc *p, uint64_t now_ns)
{
	char exe[4096] = "", cmdline[4096];
	struct lj_proc_detect pd;
	uint64_t start_ns = 0, sig, key;
	struct lj_xmap *x;
	size_t nx;
	int err, was_lj;

	if (!p || (p->state == PROC_INSPECTED && unchanged(p, now_ns)))
		return;
	was_lj = p->has_luajit;
	p->inspected_ns = now_ns;
	p->state = PROC_INSPECTED;
	read_identity(p, exe, sizeof(exe), cmdline, sizeof(cmdline), &start_ns);

	if (!rc->pt.detect_cache)
		rc->pt.detect_cache = lj_detect_cache__new();
	memset(&pd, 0, sizeof(pd));
	err = lj_detect__process(p->pid, rc->pt.detect_cache, &pd);
	if (err || !pd.nmaps) {
		/* Gone already, or not readable, or exiting (a zombie maps
		 * nothing): keep what the samples carry and what was written. */
		if (!p->reported)
			write_process(rc, p, NULL, exe, cmdline, start_ns);
		p->reported = 1;
		p->reinspect_gap_ns = INSPECT_AGAIN_MAX_NS;
		lj_proc_detect__exit(&pd);
		return;
	}
	key = image_key(&pd, exe);
	if (p->image_key && key && key != p->image_key) {
		/* /proc already shows the image after an exec whose event is still
		 * in the ring buffer: describing it now would give the samples of
		 * the old image its mappings.  Look again after the event; if none
		 * comes (a lost task event, a reused pid whose exit was lost), it
		 * is a new image all the same. */
		if (!p->other_image_ns)
			p->other_image_ns = now_ns;
		if (now_ns - p->other_image_ns < INSPECT_NEW_IMAGE_NS) {
			p->reinspect_gap_ns = INSPECT_AGAIN_MIN_NS;
			lj_proc_detect__exit(&pd);
			return;
		}
		bpfload__del_cfg(&rc->bl, p->pid);
		if (rc->hv)
			harvest__forget(rc->hv, p->pid);
		proctab__reset(p);
		p->state = PROC_INSPECTED;
		was_lj = 0;
	}
	p->other_image_ns = 0;
	if (!p->image_key)
		p->image_key = key;
	x = xmaps_of(&pd, &nx);
	sig = maps_signature(x, nx);
	keep_xranges(p, x, nx);
	free(x);
	if (p->reported && sig == p->maps_sig) {
		back_off(p);
		lj_proc_detect__exit(&pd);
		return;
	}
	p->reinspect_gap_ns = INSPECT_AGAIN_MIN_NS;
	p->maps_sig = sig;
	p->has_luajit = pd.found && pd.det.layout_ok;
	if (p->has_luajit) {
		char old[sizeof(p->build)];

		if (p->live_done && was_lj && p->vm_lo == pd.vm_lo && p->vm_hi == pd.vm_hi) {
			/* Same VM as before: keep the layout calibrated from live memory. */
			pd.layout = p->layout;
		} else {
			p->layout = pd.layout;
			/* tarantool_L: lj_detect__process calibrated it already */
			p->live_done = pd.det.live_calibrated;
			p->live_tries = 0;
			p->live_next_ns = 0;
		}
		p->vm_lo = pd.vm_lo;
		p->vm_hi = pd.vm_hi;
		p->vm_exit_ret = pd.vm_exit_ret;
		if (pd.g && !p->g_hint)
			p->g_hint = pd.g;	/* e.g. through tarantool_L: see record.c set_g_hint */
		memcpy(old, p->build, sizeof(old));
		p->nvm = pd.nvm;
		describe(&pd, p->build, sizeof(p->build));
		was_lj = was_lj || !strcmp(old, p->build);
		publish(rc, p);
		if (!was_lj && !rc->o.quiet)
			fprintf(stderr, "ljsnap: pid %u (%s): %s\n", p->pid, p->comm, p->build);
	} else if (pd.found && !rc->o.quiet) {
		fprintf(stderr, "ljsnap: pid %u (%s): LuaJIT found but its layout could not be "
			"calibrated; Lua frames will be missing (run 'ljsnap doctor %u')\n",
			p->pid, p->comm, p->pid);
	}
	write_process(rc, p, &pd, exe, cmdline, start_ns);
	p->reported = 1;
	lj_proc_detect__exit(&pd);
}

/* Inspect p again if its mappings may have changed; see record.h. */
void inspect__again(struct recorder *rc, struct proc *p, const struct ljs_sample *s,
		    uint64_t now_ns)
{
	if (!p || p->state != PROC_INSPECTED || p->last_sample_ns <= p->inspected_ns)
		return;
	if (s && (s->flags & LJS_SAMPLE_F_REGS_VALID) && s->regs.ip &&
	    !proctab__in_xrange(p, s->regs.ip) && now_ns >= p->inspected_ns + INSPECT_AGAIN_MIN_NS)
		inspect__process(rc, p, now_ns);	/* it runs code we have not seen mapped */
	else if (now_ns >= p->inspected_ns + p->reinspect_gap_ns)
		inspect__process(rc, p, now_ns);
}

/* Write an exit note for a process; see record.h. */
void inspect__exited(struct recorder *rc, struct proc *p, uint64_t now_ns)
{
	struct snapfile_process sp;
	int err;

	memset(&sp, 0, sizeof(sp));
	sp.pid = p->pid;
	memcpy(sp.comm, p->comm, sizeof(sp.comm));
	sp.exited_ns = now_ns ? now_ns : 1;
	if (rc->hooks && rc->hooks->exited)
		rc->hooks->exited(rc->hook_arg, p);
	if (!rc->w)
		return;
	err = snapfile_writer__process(rc->w, &sp);
	if (err && !rc->werr)
		rc->werr = err;
}

/* A candidate DISPATCH value in s: r14 where the interpreter (or, in GC64,
 * a trace) keeps it; 0 if the sample cannot tell. */
static uint64_t sample_dispatch(const struct proc *p, const struct ljs_sample *s)
{
	uint64_t r14 = s->regs.r14;

	if (!(s->flags & LJS_SAMPLE_F_REGS_VALID) || !r14 || (r14 & 7))
		return 0;
	if (s->regs.ip >= p->vm_lo && s->regs.ip < p->vm_hi)
		return r14;
	if ((p->layout.flags & LJ_LAYOUT_F_GC64) && !(s->flags & LJS_SAMPLE_F_KERNEL_MODE))
		return r14;	/* GC64 traces keep DISPATCH in r14 too; checked below */
	return 0;
}

#define FIND_G_GAP_NS	5000000ull	/* between two searches of one process, at first */
#define FIND_G_GAP_MAX_NS 2000000000ull	/* ... doubling up to this while none is found */
#define FIND_G_READS	512		/* candidate checks per search */

/* A g from the words a sample saved; see record.h. */
uint64_t inspect__find_g(struct proc *p, const struct ljs_sample *s)
{
	const struct ljs_section *us;
	struct native_regs regs;
	struct livemem lm;
	struct memsrc ms;
	uint64_t *w, g = 0, gap;
	size_t n = 0, i;

	if (!p || !p->has_luajit || p->g_hint || s->g || !(s->flags & LJS_SAMPLE_F_LUAJIT) ||
	    s->cfg_gen != p->cfg_gen || s->time_ns < p->g_scan_next_ns)
		return 0;
	us = ljs_sample__section(s, LJS_SEC_USTACK, -1);
	w = malloc(((us ? us->len / 8 : 0) + NATIVE_NREGS) * sizeof(*w));
	if (!w)
		return 0;
	if (s->flags & LJS_SAMPLE_F_REGS_VALID) {
		native_regs__from_ljs(&regs, &s->regs);
		memcpy(w, regs.r, sizeof(regs.r));
		n = NATIVE_NREGS;
	}
	for (i = 0; us && us->data && i + 8 <= us->len; i += 8)
		memcpy(&w[n++], us->data + i, 8);
	livemem__init(&ms, &lm, p->pid, NULL);
	lj_detect__g_from_words(&p->layout, &ms, w, n, FIND_G_READS, &g);
	free(w);
	if (!g) {
		gap = FIND_G_GAP_NS << (p->g_scans < 9 ? p->g_scans : 9);
		p->g_scan_next_ns = s->time_ns + (gap < FIND_G_GAP_MAX_NS ? gap : FIND_G_GAP_MAX_NS);
	}
	p->g_scans++;
	return g;
}

/* Live calibration from a sample; see record.h. */
void inspect__sample(struct recorder *rc, struct proc *p, const struct ljs_sample *s)
{
	char exe[4096] = "", cmdline[4096];
	struct lj_proc_detect pd;
	struct livemem lm;
	struct memsrc ms;
	uint64_t g, dispatch = 0, start_ns = 0;
	int err;

	if (!p || !p->has_luajit || p->live_done || p->live_tries >= INSPECT_LIVE_TRIES ||
	    s->time_ns < p->live_next_ns)
		return;
	/* A sample taken before the configuration was published carries no g
	 * by construction: it says nothing about the layout. */
	if (!(s->flags & LJS_SAMPLE_F_LUAJIT) || s->cfg_gen != p->cfg_gen)
		return;
	/*
	 * BPF found and validated g with this layout (GG_State self-references
	 * in live memory): it works, leave it.  Recalibrating a working layout
	 * from the memory of a running process broke a stock luajit in one run
	 * of three.  Calibrate only when samples taken in the interpreter (r14
	 * is DISPATCH there) find no g: a build no table describes.
	 */
	if (s->g) {
		p->live_done = 1;
		return;
	}
	g = 0;
	dispatch = sample_dispatch(p, s);
	if (!dispatch)
		return;
	p->live_tries++;
	p->live_next_ns = s->time_ns + INSPECT_LIVE_GAP_NS;
	memset(&pd, 0, sizeof(pd));
	if (!rc->pt.detect_cache)
		rc->pt.detect_cache = lj_detect_cache__new();
	err = lj_detect__process(p->pid, rc->pt.detect_cache, &pd);
	if (err || !pd.found || !pd.det.layout_ok || pd.vm_lo != p->vm_lo || pd.vm_hi != p->vm_hi)
		goto out;	/* gone, or the mappings changed: the next inspection handles it */
	if (!pd.det.live_calibrated) {
		livemem__init(&ms, &lm, p->pid, NULL);
		err = g ? lj_detect__calibrate_live(&pd.det, &ms, g, pd.vm_lo, pd.vm_hi)
			: lj_detect__calibrate_dispatch(&pd.det, &ms, dispatch, pd.vm_lo, pd.vm_hi, &g);
		if (err) {
			if (p->live_tries >= INSPECT_LIVE_TRIES && !rc->o.quiet)
				fprintf(stderr, "ljsnap: pid %u (%s): the layout could not be checked "
					"against live memory; %s (run 'ljsnap doctor %u')\n", p->pid,
					p->comm, s->g ? "keeping the detected one" :
					"Lua frames will be missing", p->pid);
			goto out;
		}
		pd.layout = pd.det.layout;
	}
	/* The new layout must find this g itself: from DISPATCH, and through the
	 * GG_State self-references in live memory.  Otherwise keep the old one. */
	livemem__init(&ms, &lm, p->pid, NULL);
	if ((dispatch && dispatch + (int64_t)pd.layout.disp2g != g) ||
	    lj_detect__validate_g(&pd.layout, &ms, g) != 0)
		goto out;
	p->live_done = 1;
	if (!memcmp(&pd.layout, &p->layout, sizeof(p->layout)))
		goto out;	/* the detected layout was right */
	p->layout = pd.layout;
	if (!p->g_hint)
		p->g_hint = g;	/* BPF may try it where r14 is not DISPATCH */
	publish(rc, p);
	if (!rc->o.quiet)
		fprintf(stderr, "ljsnap: pid %u (%s): layout recalibrated from live memory "
			"(g %#llx%s): a build no built-in table describes\n", p->pid, p->comm,
			(unsigned long long)g, s->g ? "" : ", found from DISPATCH");
	read_identity(p, exe, sizeof(exe), cmdline, sizeof(cmdline), &start_ns);
	write_process(rc, p, &pd, exe, cmdline, start_ns);
out:
	lj_proc_detect__exit(&pd);
}
