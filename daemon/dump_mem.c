/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dump_mem.c -- the LuaJIT VMs of a live process found from memory alone,
 * for `ljsnap dump`'s threads that ran no Lua during the burst (blocked in
 * a C function called from Lua, or idle).
 *
 * Outside Lua code the VM has synced L->base and L->top of g->cur_L
 * (lj_obj.h; BC_FUNCC in vm_x64.dasc stores them before the C call), so
 * its frames can be walked from memory, with no registers.  What is
 * needed is g: the caller's (tarantool_L, a sample's), else one found on a
 * blocked thread's stack: its C frames hold lua_State pointers (SAVE_L of
 * the VM's C frame, lj_frame.h; the arguments of lua_pcall), and a
 * lua_State's glref leads to g (lj_obj.h), checked against GG_State's
 * self-references.  A blocked thread's SP is in /proc/PID/task/TID/syscall;
 * reading it, like process_vm_readv, does not stop the target.  The thread
 * that owns the VM is the one whose stack holds cur_L's C frame
 * (L->cframe, lj_frame.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "daemon/dump.h"
#include "unwind/detect/livemem.h"

#define MEM_THREADS	256		/* threads looked at */
#define MEM_SCAN_BYTES	(512u << 10)	/* of each stack, from its SP up */
#define MEM_REJECT_MAX	64		/* g candidates that failed, remembered */
#define MEM_PROBES_MAX	20000		/* lua_State candidates read, per process */
#define CFRAME_RAWMASK	(~(uint64_t)3)	/* lj_frame.h: CFRAME_RESUME | CFRAME_UNWIND_FF */
#define GCT_THREAD	6		/* gct of a lua_State: ~LJ_TTHREAD (lj_obj.h) */

struct mem_thread {
	uint32_t tid;
	uint64_t sp, lo, hi;	/* SP (0: unknown) and its stack mapping */
};

struct mem_scan {
	const struct lj_proc_detect *pd;
	const struct lj_layout *lay;
	struct memsrc ms;
	struct livemem lm;
	struct mem_thread *t;
	size_t nt;
	uint64_t rejected[MEM_REJECT_MAX];
	size_t nrejected, probes;
	struct live_vm *out;
	size_t max, n;
};

/* The mapping of pd that holds addr, or NULL. */
static const struct lj_mapping *map_of(const struct lj_proc_detect *pd, uint64_t addr)
{
	size_t i;

	for (i = 0; i < pd->nmaps; i++)
		if (addr >= pd->maps[i].start && addr < pd->maps[i].end)
			return &pd->maps[i];
	return NULL;
}

/* A GCRef / MRef: 8 bytes in GC64, else 4 (lj_obj.h). */
static int read_ref(const struct mem_scan *m, uint64_t addr, uint64_t *v)
{
	uint32_t v32;

	if (m->lay->flags & LJ_LAYOUT_F_GC64)
		return memsrc__u64(&m->ms, addr, v);
	if (memsrc__u32(&m->ms, addr, &v32))
		return -EFAULT;
	*v = v32;
	return 0;
}

/* A thread's SP from /proc/PID/task/TID/syscall ("nr a1..a6 sp pc" while it
 * is blocked in a system call; "running" or "-1 sp pc" otherwise). */
static uint64_t thread_sp(uint32_t pid, uint32_t tid)
{
	char path[64], line[512], *p, *end;
	unsigned long long v = 0;
	int i, nf;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (!p || !strncmp(line, "running", 7))
		return 0;
	nf = !strncmp(line, "-1 ", 3) ? 2 : 8;	/* the SP is the next to last field */
	for (i = 0; i < nf; i++) {
		v = strtoull(p, &end, 0);
		if (end == p)
			return 0;
		p = end;
	}
	return (uint64_t)v;
}

/* The threads of the process, with the stack mapping of each blocked one. */
static int list_threads(struct mem_scan *m)
{
	char path[64];
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", m->pd->pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	m->t = calloc(MEM_THREADS, sizeof(*m->t));
	while (m->t && m->nt < MEM_THREADS && (de = readdir(dir))) {
		struct mem_thread *t = &m->t[m->nt];
		const struct lj_mapping *mp;

		if (de->d_name[0] == '.')
			continue;
		t->tid = (uint32_t)strtoul(de->d_name, NULL, 10);
		t->sp = thread_sp((uint32_t)m->pd->pid, t->tid);
		mp = t->sp ? map_of(m->pd, t->sp) : NULL;
		if (!mp && t->tid == (uint32_t)m->pd->pid) {
			size_t i;

			/* The main thread (running, or syscall unreadable): [stack]. */
			for (i = 0; i < m->pd->nmaps && !mp; i++)
				if (m->pd->maps[i].path && !strcmp(m->pd->maps[i].path, "[stack]"))
					mp = &m->pd->maps[i];
			t->sp = 0;
		}
		if (mp) {
			t->lo = mp->start;
			t->hi = mp->end;
		}
		m->nt++;
	}
	closedir(dir);
	return m->t ? 0 : -ENOMEM;
}

/* The thread whose stack holds cframe: its tid, or 0 (a process with one
 * thread: that one). */
static uint32_t owner_of(const struct mem_scan *m, uint64_t cframe)
{
	size_t i;

	for (i = 0; cframe && i < m->nt; i++)
		if (cframe >= m->t[i].lo && cframe < m->t[i].hi)
			return m->t[i].tid;
	return m->nt == 1 ? m->t[0].tid : 0;
}

/* Take g (once) if it validates: read its vmstate, cur_L and cur_L's C frame.
 * 1 when it is (now) among the results, else 0. */
static int take_g(struct mem_scan *m, uint64_t g)
{
	struct live_vm *v;
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->out[i].g == g)
			return 1;
	for (i = 0; i < m->nrejected; i++)
		if (m->rejected[i] == g)
			return 0;
	if (m->n >= m->max)
		return 0;
	v = &m->out[m->n];
	memset(v, 0, sizeof(*v));
	v->g = g;
	if (lj_detect__validate_g(m->lay, &m->ms, g) ||
	    memsrc__read(&m->ms, g + m->lay->g_vmstate, &v->vmstate, 4) ||
	    read_ref(m, g + m->lay->g_cur_L, &v->L) || !v->L ||
	    memsrc__u64(&m->ms, v->L + m->lay->l_cframe, &v->cframe)) {
		if (m->nrejected < MEM_REJECT_MAX)
			m->rejected[m->nrejected++] = g;
		return 0;
	}
	v->cframe &= CFRAME_RAWMASK;
	v->tid = owner_of(m, v->cframe);
	m->n++;
	return 1;
}

/* Look for lua_State pointers on one blocked thread's stack. */
static void scan_stack(struct mem_scan *m, const struct mem_thread *t)
{
	uint64_t lo = t->sp ? t->sp & ~(uint64_t)7 : t->hi > MEM_SCAN_BYTES ? t->hi - MEM_SCAN_BYTES : 0;
	uint64_t hi = t->hi, *buf;
	size_t i, n;
	int gc64 = !!(m->lay->flags & LJ_LAYOUT_F_GC64);

	if (lo < t->lo)
		lo = t->lo;
	if (hi > lo + MEM_SCAN_BYTES)
		hi = lo + MEM_SCAN_BYTES;
	if (hi <= lo || !(buf = malloc((size_t)(hi - lo))))
		return;
	n = memsrc__read(&m->ms, lo, buf, (size_t)(hi - lo)) ? 0 : (size_t)(hi - lo) / 8;
	for (i = 0; i < n && m->probes < MEM_PROBES_MAX && m->n < m->max; i++) {
		const struct lj_mapping *mp;
		uint64_t w = buf[i], g;
		uint8_t gct;

		if (!w || (w & 7) || (!gc64 && w >> 32))
			continue;
		mp = map_of(m->pd, w);
		if (!mp || !(mp->prot & PROT_WRITE) || mp->path)
			continue;	/* GC objects live in anonymous memory (lj_alloc.c) */
		m->probes++;
		/* GCHeader (lj_obj.h): nextgc, marked, gct */
		if (memsrc__u8(&m->ms, w + (gc64 ? 9 : 5), &gct) || gct != GCT_THREAD ||
		    read_ref(m, w + m->lay->l_glref, &g) || !g || (g & 7))
			continue;
		take_g(m, g);
	}
	free(buf);
}

/* The VMs of a live process read from memory; see dump.h. */
int live__vms(const struct lj_proc_detect *pd, const struct lj_layout *lay, const uint64_t *known,
	      size_t nknown, struct live_vm *out, size_t max, size_t *n)
{
	struct mem_scan m;
	size_t i;
	int err;

	memset(&m, 0, sizeof(m));
	m.pd = pd;
	m.lay = lay;
	m.out = out;
	m.max = max;
	livemem__init(&m.ms, &m.lm, pd->pid, NULL);
	err = list_threads(&m);
	if (err)
		goto out;
	for (i = 0; i < nknown; i++)
		if (known[i])
			take_g(&m, known[i]);
	for (i = 0; i < m.nt; i++)
		if (m.t[i].hi)
			scan_stack(&m, &m.t[i]);
out:
	*n = m.n;
	free(m.t);
	return err;
}
