// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ljsnap.bpf.c -- the sampling program.  It copies, it never walks.
 *
 * Per cpu-clock sample of a target task it emits one ring-buffer record:
 * the user registers, the kernel stack, a page-bounded copy of the user
 * stack, and for a thread of a registered LuaJIT process raw windows of
 * global_State, the running lua_State, its used Lua stack slots, the
 * resumer threads of coroutines and the current trace header.  Offsets come
 * from userspace (proc_cfg); memory stays O(processes + threads).
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpf/ljsnap.h"
#include "bpf/ljsnap_kern.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* -- Configuration (rodata, set before load) ------------------------------ */

const volatile __u32 cfg_filter_all = 0;	/* -a: every process */
const volatile __u32 cfg_self_pid = 0;		/* never sample the recorder */
const volatile __u32 cfg_ustack_bytes = LJS_USTACK_DEFAULT;
const volatile __u32 cfg_timing = 0;		/* record --bpf-timing: time the parts */

/* -- Maps ------------------------------------------------------------------ */

struct ljs_scratch {
	__u8 b[LJS_SCRATCH_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 32 << 20);		/* resized by userspace */
} events SEC(".maps");

/* One scratch record per CPU (a plain array: per-CPU values are capped at 32 KiB). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);			/* set to the number of CPUs */
	__type(key, __u32);
	__type(value, struct ljs_scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);			/* tgid */
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);			/* tgid */
	__type(value, struct ljs_proc_cfg);
} proc_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);			/* tid */
	__type(value, __u64);			/* validated global_State */
} tid_g SEC(".maps");

/* When this CPU last woke the reader for a LuaJIT sample (see ljsnap_sample). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lj_wake SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LJS_ERR__MAX);
	__type(key, __u32);
	__type(value, __u64);
} errs SEC(".maps");

/* -- Small helpers ----------------------------------------------------------- */

/* Add d to one per-reason counter (the --bpf-timing sums). */
static __always_inline void err_add(__u32 reason, __u64 d)
{
	__u64 *v = bpf_map_lookup_elem(&errs, &reason);

	if (v)
		*v += d;
}

/* Bump one per-reason counter. */
static __always_inline void err_inc(__u32 reason)
{
	err_add(reason, 1);
}

/* Is this process one we sample? */
static __always_inline int is_target(__u32 tgid)
{
	if (tgid == 0 || tgid == cfg_self_pid)
		return 0;
	if (cfg_filter_all)
		return 1;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/* Read a u64 of the target; 0 on fault (0 is never a valid pointer). */
static __always_inline __u64 rd64(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		return 0;
	return v;
}

/* Read a u32 of the target; 0 on fault. */
static __always_inline __u32 rd32(__u64 addr)
{
	__u32 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		return 0;
	return v;
}

/* Read a GCRef/MRef (8 bytes in GC64, 4 otherwise); 0 on fault. */
static __always_inline __u64 rdref(__u64 addr, __u32 gc64)
{
	return gc64 ? rd64(addr) : rd32(addr);
}

/* -- Record building ----------------------------------------------------------- */

enum { REC_W_USTACK, REC_W_G, REC_W_L, REC_W_N };

struct rec {
	__u32 cpu;		/* scratch key */
	__u32 off;		/* bytes used so far */
	__u32 nsec;
	__u32 depth;		/* resumer depth for RES_* sections */
	__u32 tgid;
	__u32 gc64;
	__u64 cf;		/* cframe being followed by res_step() */
	/* what res_step() needs of the process's configuration on the way
	 * (it looks the configuration up only at a resumer) */
	__u64 vm_lo, vm_hi;
	__u32 cf_prev, cf_size;
	/* Windows this record holds whole (REC_W_*): [wa, wa + wl) of the
	 * target at record offset wd; reads inside one come from the record
	 * (rec_rd) instead of another bpf_probe_read_user. */
	__u64 wa[REC_W_N];
	__u32 wd[REC_W_N], wl[REC_W_N];
	/* the next section to emit (BPF functions take at most five arguments) */
	__u64 q_addr;
	__u32 q_kind, q_want, q_full, q_aux, q_cut;
	__u32 q_end;		/* the window ends where the stack does */
};

struct copy_ctx {
	__u64 src;
	__u32 cpu;
	__u32 off;		/* where the next byte goes in the record */
	__u32 left;		/* bytes still wanted */
	__u32 done;		/* bytes copied */
	__u32 fault;
};

/* bpf_loop callback: copy the next chunk, never crossing a source page. */
static long copy_chunk(__u32 i, void *data)
{
	struct copy_ctx *c = data;
	__u32 key = c->cpu;
	__u8 *buf;
	__u32 n, pg_left;

	if (c->left == 0)
		return 1;
	buf = bpf_map_lookup_elem(&scratch, &key);
	if (!buf) {
		c->fault = 1;
		return 1;
	}
	pg_left = LJS_PAGE_SIZE - (__u32)(c->src & (LJS_PAGE_SIZE - 1));
	n = c->left < pg_left ? c->left : pg_left;
	barrier_var(n);
	if (n > LJS_PAGE_SIZE)
		n = LJS_PAGE_SIZE;
	if (bpf_probe_read_user(buf + (c->off & LJS_REC_OFF_MASK), n, (const void *)c->src)) {
		c->fault = 1;
		return 1;
	}
	c->src += n;
	c->off += n;
	c->left -= n;
	c->done += n;
	return 0;
}

/* Remember a section's bytes as window slot of its kind (REC_W_*). */
static __always_inline void rec_keep(struct rec *r, __u32 kind, __u64 addr, __u32 data, __u32 len)
{
	__u32 w = kind == LJS_SEC_USTACK ? REC_W_USTACK : kind == LJS_SEC_G ? REC_W_G :
		  kind == LJS_SEC_L || kind == LJS_SEC_RES_L ? REC_W_L : REC_W_N;

	if (w >= REC_W_N)
		return;
	r->wa[w] = addr;
	r->wd[w] = data;
	r->wl[w] = len;
}

/* The n (4 or 8) bytes at addr from window w of the record into *v: 0, or
 * -1 when the window does not hold them. */
static __always_inline int rec_win(const struct rec *r, __u32 w, __u64 addr, __u32 n, __u64 *v)
{
	__u64 off;
	__u8 *buf;

	if (w >= REC_W_N || addr < r->wa[w] || r->wl[w] < n || (off = addr - r->wa[w]) > r->wl[w] - n)
		return -1;
	buf = bpf_map_lookup_elem(&scratch, &r->cpu);
	if (!buf)
		return -1;
	off = (r->wd[w] + off) & LJS_REC_OFF_MASK;
	*v = n == 8 ? *(__u64 *)(buf + off) : *(__u32 *)(buf + off);
	return 0;
}

/* rd64/rd32 through the windows the record holds (the same bytes the
 * offline walk reads there), else from the target. */
static __always_inline __u64 rec_rd(const struct rec *r, __u64 addr, __u32 n)
{
	__u64 v;

	if (rec_win(r, REC_W_G, addr, n, &v) == 0 || rec_win(r, REC_W_L, addr, n, &v) == 0 ||
	    rec_win(r, REC_W_USTACK, addr, n, &v) == 0)
		return v;
	return n == 8 ? rd64(addr) : rd32(addr);
}

static __always_inline __u64 rec_rdref(const struct rec *r, __u64 addr, __u32 gc64)
{
	return rec_rd(r, addr, gc64 ? 8 : 4);
}

/*
 * (Global functions: the verifier checks each once, not once per call.)
 *
 * Append the section described by r->q_*: header, then up to q_want bytes
 * from q_addr, copied page by page so a fault keeps what came before it.
 * q_cut says the caller already shortened the window to the budget (q_full
 * is what was wanted before that).  Returns bytes copied.
 */
__noinline __u32 emit_section(struct rec *r)
{
	struct copy_ctx c = {};
	struct ljs_sec_hdr *h;
	__u32 hoff, room, want, cut;
	__u8 *buf;

	if (!r)
		return 0;
	hoff = r->off;
	want = r->q_want;
	cut = r->q_cut;
	if (hoff + sizeof(*h) >= LJS_REC_MAX) {
		err_inc(LJS_ERR_REC_FULL);
		return 0;
	}
	room = LJS_REC_MAX - hoff - sizeof(*h);
	if (want > room) {
		want = room;
		err_inc(LJS_ERR_REC_FULL);
		cut = 1;
	}
	c.src = r->q_addr;
	c.cpu = r->cpu;
	c.off = hoff + sizeof(*h);
	c.left = want;
	bpf_loop(LJS_REC_MAX / LJS_PAGE_SIZE + 1, copy_chunk, &c, 0);

	buf = bpf_map_lookup_elem(&scratch, &r->cpu);
	if (!buf)
		return 0;
	h = (void *)(buf + (hoff & LJS_REC_OFF_MASK));
	h->kind = r->q_kind;
	h->status = c.fault ? (c.done ? LJS_ST_PARTIAL : LJS_ST_FAULT)
			    : cut ? LJS_ST_TRUNCATED : r->q_end ? LJS_ST_PARTIAL : LJS_ST_OK;
	h->len = c.done;
	h->addr = r->q_addr;
	h->want = r->q_full;
	h->aux = r->q_aux;
	rec_keep(r, r->q_kind, r->q_addr, hoff + sizeof(*h), c.done);
	r->off = hoff + sizeof(*h) + ((c.done + 7) & ~7U);
	r->nsec++;
	return c.done;
}

/* Emit a whole window of `len` bytes at addr. */
static __always_inline __u32 emit_window(struct rec *r, __u32 kind, __u64 addr, __u32 len, __u32 aux)
{
	r->q_kind = kind;
	r->q_addr = addr;
	r->q_want = len;
	r->q_full = len;
	r->q_aux = aux;
	r->q_cut = 0;
	r->q_end = 0;
	return emit_section(r);
}

/*
 * Append the Lua stack window of thread L: [stack, hi) where hi is the
 * highest frame base seen plus room for one frame, cut to `budget` bytes
 * keeping the newest (highest) slots.
 */
__noinline int emit_lstack(struct rec *r, const struct ljs_proc_cfg *c, __u64 L,
			    __u64 extra_base, __u32 resumer)
{
	__u32 budget = resumer ? LJS_RES_LSTACK_MAX : c ? c->lstack_bytes : 0;
	__u32 err_fault = resumer ? LJS_ERR_RESUMER_FAULT : LJS_ERR_LSTACK_FAULT;
	__u64 stack, send, base, top, hi, lo;
	__u32 want, full, got;

	if (!r || !c)
		return 0;
	stack = rec_rdref(r, L + c->l_stack, c->flags & LJS_CFG_F_GC64);
	send = stack + rec_rd(r, L + c->l_stacksize, 4) * 8;
	if (!stack || send <= stack) {
		err_inc(err_fault);
		return 0;
	}
	base = rec_rd(r, L + c->l_base, 8);
	top = rec_rd(r, L + c->l_top, 8);
	hi = base > top ? base : top;
	if (extra_base >= stack && extra_base < send && extra_base > hi)
		hi = extra_base;
	if (hi < stack)
		hi = stack;
	hi += LJS_LSTACK_SLACK;
	if (hi > send)
		hi = send;
	full = (__u32)(hi - stack);
	lo = stack;
	want = full;
	if (want > budget) {
		want = budget;
		lo = hi - want;
		err_inc(LJS_ERR_LSTACK_TRUNC);
	}
	r->q_kind = resumer ? LJS_SEC_RES_LSTACK : LJS_SEC_LSTACK;
	r->q_addr = lo;
	r->q_want = want;
	r->q_full = full;
	r->q_aux = resumer ? r->depth : 0;
	r->q_cut = want < full;
	r->q_end = 0;
	got = emit_section(r);
	if (got < want)
		err_inc(err_fault);
	return got;
}

/*
 * Take candidate g: emit its G window, then validate g through the
 * GG_State self-references (g->mainthref is the GG_State's own lua_State,
 * whose glref is g; lj_state.c lua_newstate), the first one read from the
 * window just copied instead of with another bpf_probe_read_user.  1, or 0
 * with the record as it was (a g whose window a fault cut counts as g_fault).
 */
static __always_inline int g_take(struct rec *r, const struct ljs_proc_cfg *c, __u64 g)
{
	__u32 off = r->off, nsec = r->nsec, gc64 = c->flags & LJS_CFG_F_GC64, got;
	__u64 mt;

	if (g < LJS_PAGE_SIZE)
		return 0;
	got = emit_window(r, LJS_SEC_G, g, c->g_win, 0);
	mt = got ? rec_rdref(r, g + c->g_mainthref, gc64) : 0;
	if (mt && mt == g - c->gg_ofs_g) {
		if (got < c->g_win)
			err_inc(LJS_ERR_G_FAULT);	/* a g, but its window is cut */
		else if (rdref(mt + c->l_glref, gc64) == g)
			return 1;
	}
	r->off = off;
	r->nsec = nsec;
	r->wl[REC_W_G] = 0;
	return 0;
}

/*
 * bpf_loop callback, one C frame per step.  Follow SAVE_CFRAME to the
 * thread's outermost C frame; if its return address is inside the VM, a
 * coroutine.resume fast function called lj_vm_resume from the resumer's
 * frame, whose C frame sits right above (vm_x64.dasc lj_vm_resume and the
 * CFRAME_* layout; lib_base.c coroutine.resume): copy that
 * resumer and continue from its C frame.
 */
static long res_step(__u32 i, void *data)
{
	struct rec *r = data;
	const struct ljs_proc_cfg *c;
	__u64 prev, ret, rcf, RL;

	if (!r->cf)
		return 1;
	prev = rec_rd(r, r->cf + r->cf_prev, 8) & ~3ULL;
	if (prev) {
		r->cf = prev;
		return 0;
	}
	ret = rec_rd(r, r->cf + r->cf_size - 8, 8);
	if (ret < r->vm_lo || ret >= r->vm_hi)
		return 1;
	c = bpf_map_lookup_elem(&proc_cfg, &r->tgid);
	if (!c)
		return 1;
	rcf = r->cf + c->cf_size;
	RL = rec_rdref(r, rcf + c->cf_l, r->gc64);
	if (!RL) {
		err_inc(LJS_ERR_RESUMER_FAULT);
		return 1;
	}
	if (r->depth >= LJS_RESUMERS_MAX) {
		err_inc(LJS_ERR_RESUMERS_CUT);
		return 1;
	}
	r->depth++;
	if (emit_window(r, LJS_SEC_RES_L, RL, c->l_win, r->depth) < c->l_win) {
		err_inc(LJS_ERR_RESUMER_FAULT);
		return 1;
	}
	emit_lstack(r, c, RL, 0, 1);
	r->cf = rcf;
	return 0;
}

/* The LuaJIT part of a sample: g, cur_L, its stack, trace, resumers. */
static __always_inline void emit_luajit(struct rec *r, const struct ljs_proc_cfg *c,
					struct ljs_sample_hdr *hdr, __u32 tid)
{
	__u32 gc64 = c->flags & LJS_CFG_F_GC64;
	__u64 g = 0, r14 = hdr->regs.r14, rip = hdr->regs.ip, *cached;
	__u64 L, jit_base, extra = 0, t0 = cfg_timing ? bpf_ktime_get_ns() : 0;
	__s32 vmstate;

	if (!gc64)
		r14 &= 0xffffffffULL;
	cached = bpf_map_lookup_elem(&tid_g, &tid);
	/* Each candidate in turn leaves its G window when it validates. */
	if (hdr->flags & LJS_SAMPLE_F_REGS_VALID) {
		g = r14 + c->disp2g;
		if (g_take(r, c, g)) {
			hdr->flags |= LJS_SAMPLE_F_G_FROM_REG;
			/* An LRU update takes a lock: only when the thread's g changed. */
			if (!cached || *cached != g)
				bpf_map_update_elem(&tid_g, &tid, &g, BPF_ANY);
		} else {
			err_inc(LJS_ERR_G_REG_INVALID);
			g = 0;
		}
	}
	if (!g) {
		if (cached && g_take(r, c, *cached)) {
			g = *cached;
			hdr->flags |= LJS_SAMPLE_F_G_FROM_CACHE;
			err_inc(LJS_ERR_G_FROM_CACHE);
		}
	}
	if (!g && c->g_hint && g_take(r, c, c->g_hint)) {
		g = c->g_hint;
		hdr->flags |= LJS_SAMPLE_F_G_FROM_HINT;
		err_inc(LJS_ERR_G_FROM_HINT);
		bpf_map_update_elem(&tid_g, &tid, &g, BPF_ANY);
	}
	if (!g) {
		err_inc(LJS_ERR_NO_G);
		return;
	}
	hdr->g = g;
	if (cfg_timing)
		err_add(LJS_ERR_T_LUAJIT_G, bpf_ktime_get_ns() - t0);
	vmstate = (__s32)rec_rd(r, g + c->g_vmstate, 4);
	L = rec_rdref(r, g + c->g_cur_L, gc64);
	jit_base = rec_rdref(r, g + c->g_jit_base, gc64);
	if (!L || emit_window(r, LJS_SEC_L, L, c->l_win, 0) < c->l_win) {
		err_inc(LJS_ERR_L_FAULT);
		return;
	}
	/* The interpreter keeps BASE in rdx; a trace has its base in jit_base. */
	if (rip >= c->vm_lo && rip < c->vm_hi)
		extra = gc64 ? hdr->regs.dx : (hdr->regs.dx & 0xffffffffULL);
	if (jit_base > extra)
		extra = jit_base;
	emit_lstack(r, c, L, extra, 0);

	if (vmstate >= 0 && c->g2j) {
		__u64 J = g + c->g2j, tp, T = 0, jw[2];
		__u32 d = c->j_sizetrace - c->j_trace, size;

		/* J->trace (a GCRef *) and J->sizetrace (lj_jit.h) lie 12 bytes
		 * apart in every known layout: one read for both. */
		if (c->j_sizetrace >= c->j_trace && d <= 12 && !(d & 3) &&
		    !bpf_probe_read_user(jw, sizeof(jw), (const void *)(J + c->j_trace))) {
			tp = jw[0];
			size = d == 12 ? jw[1] >> 32 : d == 8 ? (__u32)jw[1] :
			       d == 4 ? jw[0] >> 32 : (__u32)jw[0];
		} else {
			tp = rec_rd(r, J + c->j_trace, 8);
			size = tp ? rec_rd(r, J + c->j_sizetrace, 4) : 0;
		}
		if (tp && (__u32)vmstate < size)
			T = rdref(tp + (__u64)vmstate * (gc64 ? 8 : 4), gc64);
		if (!T || emit_window(r, LJS_SEC_TRACE, T, c->t_win, 0) < c->t_win)
			err_inc(LJS_ERR_TRACE_FAULT);
	}

	/* Coroutine resumers: see res_step(). */
	r->cf = rec_rd(r, L + c->l_cframe, 8) & ~3ULL;
	r->depth = 0;
	r->gc64 = gc64;
	r->vm_lo = c->vm_lo;
	r->vm_hi = c->vm_hi;
	r->cf_prev = c->cf_prev;
	r->cf_size = c->cf_size;
	bpf_loop(LJS_CFRAME_CHAIN_MAX * (LJS_RESUMERS_MAX + 1), res_step, r, 0);
}

/* Copy the user registers of the interrupted task into the header. */
static __always_inline int get_user_regs(struct bpf_perf_event_data *ctx, struct ljs_regs *out,
					 __u32 *flags)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *tregs;

	if ((ctx->regs.cs & 3) == 3) {
		out->r15 = ctx->regs.r15;
		out->r14 = ctx->regs.r14;
		out->r13 = ctx->regs.r13;
		out->r12 = ctx->regs.r12;
		out->bp = ctx->regs.rbp;
		out->bx = ctx->regs.rbx;
		out->r11 = ctx->regs.r11;
		out->r10 = ctx->regs.r10;
		out->r9 = ctx->regs.r9;
		out->r8 = ctx->regs.r8;
		out->ax = ctx->regs.rax;
		out->cx = ctx->regs.rcx;
		out->dx = ctx->regs.rdx;
		out->si = ctx->regs.rsi;
		out->di = ctx->regs.rdi;
		out->orig_ax = ctx->regs.orig_rax;
		out->ip = ctx->regs.rip;
		out->cs = ctx->regs.cs;
		out->flags = ctx->regs.eflags;
		out->sp = ctx->regs.rsp;
		out->ss = ctx->regs.ss;
		return 0;
	}
	*flags |= LJS_SAMPLE_F_KERNEL_MODE;
	if (task->flags & LJS_PF_KTHREAD)
		return -1;
	tregs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!tregs || bpf_probe_read_kernel(out, sizeof(*out), tregs))
		return -1;
	return (out->cs & 3) == 3 ? 0 : -1;
}

/*
 * The user stack from sp up.  On the main thread's stack, what lies above
 * the initial sp is argv, envp and auxv: no frame of it.  Copy up to it
 * (and a little, argc and the first pointers) instead of to the mapping's
 * end, which also ends the copy with a fault.
 */
static __always_inline void emit_ustack(struct rec *r, __u64 sp)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 top = BPF_CORE_READ(task, mm, start_stack);

	r->q_kind = LJS_SEC_USTACK;
	r->q_addr = sp;
	r->q_want = r->q_full = cfg_ustack_bytes;
	r->q_aux = r->q_cut = r->q_end = 0;
	if (top > sp && top - sp + LJS_USTACK_TOP_SLACK <= r->q_want) {
		r->q_want = r->q_full = (__u32)(top - sp) + LJS_USTACK_TOP_SLACK;
		r->q_end = 1;
	}
	if (emit_section(r) == 0)
		err_inc(LJS_ERR_USTACK_FAULT);
}

/*
 * The ring-buffer flags of a sample.  A LuaJIT sample must reach the
 * reader within a millisecond or two: it walks the sample against live
 * memory, and code that is loaded and dropped can be freed milliseconds
 * after it ran (with a 5 ms delay, report_gen.sh lost 20% of its chains).
 * But a wakeup from here is an irq_work, a self-IPI, and on a virtual
 * machine that costs more than the whole copy (6 of 9 us per sample,
 * measured with kernel.bpf_stats_enabled).  So the reader polls every
 * millisecond while LuaJIT samples come (daemon/record.c), and this
 * program wakes it only to start that: for the first LuaJIT sample after
 * LJS_LJ_WAKE_NS without a wakeup from this CPU (adaptive: only if it is
 * waiting).  Other samples wake it only once there is a batch.
 */
static __always_inline __u64 wake_flags(const struct ljs_sample_hdr *hdr)
{
	__u64 wake = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= LJS_WAKEUP_BYTES ?
		BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	__u32 zero = 0;
	__u64 *last;

	if (!hdr->g || wake != BPF_RB_NO_WAKEUP)
		return wake;
	last = bpf_map_lookup_elem(&lj_wake, &zero);
	if (last && hdr->time_ns - *last >= LJS_LJ_WAKE_NS) {
		*last = hdr->time_ns;
		wake = 0;
	}
	return wake;
}

SEC("perf_event")
int ljsnap_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct ljs_sample_hdr *hdr;
	struct ljs_proc_cfg *c;
	struct rec r = {};
	__u64 wake, len, t = 0;
	__u8 *buf;
	long kn;

	if (!is_target(tgid))
		return 0;
	r.tgid = tgid;
	err_inc(LJS_ERR_SAMPLES);
	r.cpu = bpf_get_smp_processor_id();
	buf = bpf_map_lookup_elem(&scratch, &r.cpu);
	if (!buf) {
		err_inc(LJS_ERR_NO_SCRATCH);
		return 0;
	}
	hdr = (void *)buf;
	__builtin_memset(hdr, 0, sizeof(*hdr));
	hdr->type = LJS_REC_SAMPLE;
	hdr->time_ns = bpf_ktime_get_ns();
	hdr->pid = tgid;
	hdr->tid = tid;
	hdr->cpu = r.cpu;
	bpf_get_current_comm(hdr->comm, sizeof(hdr->comm));
	if (get_user_regs(ctx, &hdr->regs, &hdr->flags) == 0)
		hdr->flags |= LJS_SAMPLE_F_REGS_VALID;
	else
		err_inc(LJS_ERR_NO_USER_REGS);
	r.off = sizeof(*hdr);

	if (hdr->flags & LJS_SAMPLE_F_KERNEL_MODE) {
		struct ljs_sec_hdr *h = (void *)(buf + r.off);

		kn = bpf_get_stack(ctx, buf + r.off + sizeof(*h), LJS_KSTACK_MAX * 8, 0);
		if (kn > 0) {
			h->kind = LJS_SEC_KSTACK;
			h->status = LJS_ST_OK;
			h->len = kn;
			h->want = kn;
			h->addr = 0;
			h->aux = 0;
			hdr->nkstack = kn / 8;
			r.off += sizeof(*h) + ((kn + 7) & ~7);
			r.nsec++;
		} else {
			err_inc(LJS_ERR_KSTACK_FAIL);
		}
	}

	/* --bpf-timing: the head is timed from hdr->time_ns (a register
	 * there would be spilled around bpf_get_stack and lose its bounds). */
	if (cfg_timing) {
		t = bpf_ktime_get_ns();
		err_add(LJS_ERR_T_HEAD, t - hdr->time_ns);
		if (hdr->flags & LJS_SAMPLE_F_KERNEL_MODE)
			err_inc(LJS_ERR_T_KSAMPLES);
	}

	if (hdr->flags & LJS_SAMPLE_F_REGS_VALID)
		emit_ustack(&r, hdr->regs.sp);
	if (cfg_timing) {
		err_add(LJS_ERR_T_USTACK, bpf_ktime_get_ns() - t);
		t = bpf_ktime_get_ns();
	}

	c = bpf_map_lookup_elem(&proc_cfg, &tgid);
	if (c) {
		hdr->flags |= LJS_SAMPLE_F_LUAJIT;
		hdr->cfg_gen = c->gen;
		emit_luajit(&r, c, hdr, tid);
		if (cfg_timing)
			err_add(LJS_ERR_T_LUAJIT, bpf_ktime_get_ns() - t);
	}

	/* The scratch pointer is still valid: map values do not move. */
	hdr->nsec = r.nsec;
	hdr->size = r.off;
	wake = wake_flags(hdr);
	len = r.off;
	if (len > LJS_REC_MAX)
		len = LJS_REC_MAX;
	if (bpf_ringbuf_output(&events, buf, len, wake)) {
		err_inc(LJS_ERR_RINGBUF_FULL);
		return 0;
	}
	err_inc(LJS_ERR_EMITTED);
	return 0;
}

/* -- Process lifecycle ----------------------------------------------------- */

/* Emit a fork/exec/exit note for the daemon. */
static __always_inline void task_event(__u32 type, struct task_struct *p, __u32 ppid)
{
	struct ljs_task_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		err_inc(LJS_ERR_TASK_EVENT_LOST);
		return;
	}
	e->type = type;
	e->size = sizeof(*e);
	e->time_ns = bpf_ktime_get_ns();
	e->pid = BPF_CORE_READ(p, tgid);
	e->tid = BPF_CORE_READ(p, pid);
	e->ppid = ppid;
	e->exit_code = BPF_CORE_READ(p, exit_code);
	BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
	bpf_ringbuf_submit(e, 0);
	err_inc(LJS_ERR_TASK_EVENTS);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(ljsnap_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (child->pid != ctgid || !is_target(ptgid))
		return 0;
	if (!cfg_filter_all && bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY))
		err_inc(LJS_ERR_TARGET_FULL);	/* the map is full: said by record */
	task_event(LJS_REC_FORK, child, ptgid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(ljsnap_exec, struct task_struct *p)
{
	if (is_target(p->tgid))
		task_event(LJS_REC_EXEC, p, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(ljsnap_exit, struct task_struct *p)
{
	__u32 tid = p->pid, tgid = p->tgid;

	bpf_map_delete_elem(&tid_g, &tid);
	if (tid == tgid && is_target(tgid))
		task_event(LJS_REC_EXIT, p, 0);
	return 0;
}
