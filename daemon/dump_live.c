/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dump_live.c -- the pipeline (unwind/pipeline.h) on live processes, for
 * the live views (`ljsnap dump`, `ljsnap top`): a process described from
 * its detection result, a sample walked with its live memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "daemon/bpfload.h"
#include "daemon/dump.h"
#include "daemon/proctab.h"
#include "daemon/record.h"
#include "unwind/detect/livemem.h"

/* Describe a live process for the pipeline; see dump.h. */
int live__proc(struct ljs_pipe *pipe, const struct lj_proc_detect *pd, const struct vdso_image *vdso,
	       const struct live_lj *lj, struct ljs_proc *out)
{
	struct procmap_desc *maps;
	size_t n = 0;
	int err;

	memset(out, 0, sizeof(*out));
	maps = pd ? inspect__maps(pd, vdso, (uint32_t)pd->pid, &n) : NULL;
	if (pd && pd->nmaps && !maps)
		return -ENOMEM;
	err = n ? ljs_pipe__proc(pipe, maps, n, out) : 0;
	free(maps);
	if (lj) {
		out->has_luajit = 1;
		out->layout = lj->layout;
		out->vm_lo = lj->vm_lo;
		out->vm_hi = lj->vm_hi;
	}
	return err == -ENOMEM ? err : 0;
}

/* Name the vDSO's frames; see dump.h. */
void live__vdso(struct ljs_pipe *pipe, const struct vdso_image *vdso)
{
	if (vdso && vdso->data)
		ljs_pipe__image(pipe, "[vdso]", vdso->build_id, (size_t)vdso->build_id_len, vdso->data,
				vdso->len);
}

/* Walk a sample with the live memory of its process; see dump.h. */
int live__sample(struct ljs_pipe *pipe, const struct ljs_proc *proc, const struct ljs_sample *s,
		 const char *comm, struct ljs_pipe_out *out)
{
	struct livemem lm;
	struct memsrc live, sm;

	/* The sample's own windows (registers, stacks, the VM state BPF copied)
	 * first, then what the process holds now (bytecode, protos, names). */
	livemem__init(&live, &lm, (int)s->pid, NULL);
	memsrc__init_sample(&sm, s, &live);
	return ljs_pipe__sample(pipe, proc, s, &sm, comm, out);
}

struct burst {
	uint32_t pid;
	int (*cb)(void *arg, const struct ljs_sample *s);
	void *arg;
	int done;
};

/* Ring-buffer callback: a sample of the process goes to the caller. */
static int on_burst(void *ctx, void *data, size_t size)
{
	struct burst *b = ctx;
	struct ljs_sample s;

	if (b->done || ljs_sample__parse_raw(&s, data, size) || s.pid != b->pid)
		return 0;
	if (b->cb(b->arg, &s))
		b->done = 1;
	return 0;
}

/* Seconds since t0 (CLOCK_MONOTONIC). */
static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* A burst of samples of one process; see dump.h. */
int live__burst(uint32_t pid, const struct live_lj *lj, uint32_t freq_hz, double seconds,
		int (*cb)(void *arg, const struct ljs_sample *s), void *arg, char *errbuf,
		size_t errlen)
{
	struct bpfload_opts bo = { .self_pid = getpid(), .freq_hz = freq_hz,
				   .ustack_bytes = LJS_USTACK_DEFAULT, .ringbuf_bytes = 8 << 20 };
	struct burst b = { .pid = pid, .cb = cb, .arg = arg };
	struct ring_buffer *rb = NULL;
	struct ljs_proc_cfg cfg;
	struct timespec t0;
	struct bpfload bl;
	struct proc p;
	int err;

	memset(&p, 0, sizeof(p));
	p.pid = pid;
	p.layout = lj->layout;
	p.vm_lo = lj->vm_lo;
	p.vm_hi = lj->vm_hi;
	p.cfg_gen = 1;
	proctab__cfg(&p, LJS_LSTACK_DEFAULT, &cfg);
	err = bpfload__init(&bl, &bo, errbuf, errlen);
	if (err)
		return err;
	err = bpfload__add_target(&bl, pid);
	if (!err)
		err = bpfload__set_cfg(&bl, pid, &cfg);
	if (err) {
		snprintf(errbuf, errlen, "cannot put pid %u in the BPF maps: %s", pid, strerror(-err));
		goto out;
	}
	rb = ring_buffer__new(bpfload__ringbuf_fd(&bl), on_burst, &b, NULL);
	if (!rb) {
		err = -errno;
		snprintf(errbuf, errlen, "cannot open the ring buffer: %s", strerror(-err));
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!b.done && since(&t0) < seconds) {
		ring_buffer__poll(rb, 20);
		ring_buffer__consume(rb);
	}
out:
	ring_buffer__free(rb);
	bpfload__exit(&bl);	/* nothing stays attached */
	return err;
}
