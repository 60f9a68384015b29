/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ljsnap.h -- the one header shared by the BPF program and userspace.
 *
 * Everything that crosses the kernel/user boundary is defined here: the
 * ring-buffer record layout, the per-process LuaJIT configuration that
 * userspace pushes into a pid-keyed map, and the per-reason error counters.
 * The BPF side knows offsets, never frame semantics.
 */
#ifndef LJSNAP_BPF_H
#define LJSNAP_BPF_H

#ifndef __bpf__
#include <linux/types.h>	/* __u32 and friends, as the BPF side sees them */
#endif

/* -- Limits -------------------------------------------------------------- */

#define LJS_COMM_LEN		16
#define LJS_KSTACK_MAX		127	/* kernel frames (perf_event_max_stack default) */
#define LJS_USTACK_MAX		(64 * 1024)	/* --stack-bytes upper bound */
#define LJS_USTACK_DEFAULT	(16 * 1024)
#define LJS_LSTACK_MAX		(128 * 1024)	/* --lua-stack-bytes upper bound */
#define LJS_LSTACK_DEFAULT	(64 * 1024)
#define LJS_G_WIN_MAX		1024	/* bytes of global_State copied */
#define LJS_L_WIN_MAX		128	/* bytes of lua_State copied */
#define LJS_TRACE_WIN_MAX	128	/* bytes of GCtrace header copied */
#define LJS_RESUMERS_MAX	4	/* coroutine resumers followed per sample */
#define LJS_CFRAME_CHAIN_MAX	16	/* SAVE_CFRAME links followed per thread */
#define LJS_LSTACK_SLACK	2048	/* bytes copied above the highest base (framesize <= 255 slots) */
#define LJS_RES_LSTACK_MAX	(8 * 1024)	/* Lua stack bytes per resumer (newest kept) */
#define LJS_USTACK_TOP_SLACK	64	/* bytes copied above mm->start_stack (argc, argv[0]...) */
#define LJS_PAGE_SIZE		4096
#define LJS_WAKEUP_BYTES	(256 * 1024)	/* wake the reader once this much is queued */
#define LJS_LJ_WAKE_NS		(50 * 1000 * 1000)	/* LuaJIT samples wake the reader at most this often per CPU */

/* The largest record the program emits.  Every write into the per-CPU
 * scratch record goes to (offset & LJS_REC_OFF_MASK) and is at most one page
 * (or one kernel stack), so the scratch value is LJS_REC_MAX plus that slack
 * and the verifier can bound every access with a mask. */
#define LJS_REC_MAX		(256 * 1024)
#define LJS_REC_OFF_MASK	(LJS_REC_MAX - 1)
#define LJS_REC_SLACK		(8 * 1024)
#define LJS_SCRATCH_SIZE	(LJS_REC_MAX + LJS_REC_SLACK)

/* -- Ring-buffer record -------------------------------------------------- */

enum ljs_rec_type {
	LJS_REC_SAMPLE = 1,	/* struct ljs_sample_hdr + sections */
	LJS_REC_FORK = 2,	/* struct ljs_task_event */
	LJS_REC_EXEC = 3,
	LJS_REC_EXIT = 4,
};

/* Registers kept per sample: exactly the x86_64 struct pt_regs layout, so
 * the kernel-mode path can copy the task's saved user registers in one read. */
struct ljs_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	__u64 ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

#define LJS_SAMPLE_F_KERNEL_MODE	0x1	/* sample hit kernel mode; regs from task pt_regs */
#define LJS_SAMPLE_F_LUAJIT		0x2	/* pid has a LuaJIT configuration */
#define LJS_SAMPLE_F_G_FROM_REG		0x4	/* g derived from r14 and validated */
#define LJS_SAMPLE_F_G_FROM_CACHE	0x8	/* g taken from the tid -> g cache */
#define LJS_SAMPLE_F_REGS_VALID		0x10	/* user registers are present */
#define LJS_SAMPLE_F_G_FROM_HINT	0x20	/* g from the process's g_hint */

/* A sample record: header, then nsec sections, each 8-byte aligned. */
struct ljs_sample_hdr {
	__u32 type;		/* LJS_REC_SAMPLE */
	__u32 size;		/* total bytes of this record, header included */
	__u64 time_ns;		/* bpf_ktime_get_ns() (CLOCK_MONOTONIC) */
	__u32 pid, tid;
	__u32 cpu;
	__u32 flags;		/* LJS_SAMPLE_F_* */
	char comm[LJS_COMM_LEN];
	struct ljs_regs regs;
	__u64 g;		/* global_State address, 0 if none */
	__u32 cfg_gen;		/* generation of the config used (0 = none) */
	__u16 nsec;		/* number of sections that follow */
	__u16 nkstack;		/* kernel frames in the LJS_SEC_KSTACK section */
};

/* Section kinds. A section is a raw byte window of the target (or of the
 * kernel stack), tagged with the address it was copied from. */
enum ljs_sec_kind {
	LJS_SEC_KSTACK = 1,	/* u64 kernel IPs; addr = 0 */
	LJS_SEC_USTACK = 2,	/* user stack from regs.sp upward (on the main thread's
				 * stack, to mm->start_stack + LJS_USTACK_TOP_SLACK
				 * at most, status PARTIAL: its end) */
	LJS_SEC_G = 3,		/* window of global_State at g */
	LJS_SEC_L = 4,		/* window of the running lua_State (cur_L) */
	LJS_SEC_LSTACK = 5,	/* used Lua stack slots of cur_L (newest kept) */
	LJS_SEC_TRACE = 6,	/* GCtrace header of J->trace[vmstate] */
	LJS_SEC_RES_L = 7,	/* window of a resumer lua_State; aux = depth */
	LJS_SEC_RES_LSTACK = 8,	/* Lua stack slots of that resumer; aux = depth */
	LJS_SEC__MAX
};

/* Per-section status: what happened while copying it. */
enum ljs_sec_status {
	LJS_ST_OK = 0,		/* copied completely */
	LJS_ST_TRUNCATED = 1,	/* copied, but cut to the budget (newest part kept) */
	LJS_ST_FAULT = 2,	/* read fault: len is what was copied before it */
	LJS_ST_PARTIAL = 3,	/* stopped at the end of the stack (mapping end or start_stack) */
};

struct ljs_sec_hdr {
	__u16 kind;		/* enum ljs_sec_kind */
	__u16 status;		/* enum ljs_sec_status */
	__u32 len;		/* bytes of data that follow (before padding) */
	__u64 addr;		/* target address of data[0] */
	__u32 want;		/* bytes that were wanted (>= len) */
	__u32 aux;		/* kind-specific: resumer depth */
};

/* Fork/exec/exit notifications from tracepoints. */
struct ljs_task_event {
	__u32 type;		/* LJS_REC_FORK / EXEC / EXIT */
	__u32 size;
	__u64 time_ns;
	__u32 pid, tid;		/* the new/exec'd/exiting task */
	__u32 ppid;		/* parent tgid for FORK */
	__u32 exit_code;
	char comm[LJS_COMM_LEN];
};

/* -- Per-process LuaJIT configuration (pid-keyed map) --------------------- */

#define LJS_CFG_F_GC64		0x1	/* 64-bit GCRef/MRef and FR2 frames */
#define LJS_CFG_F_R14_IN_TRACE	0x2	/* r14 stays DISPATCH inside traces (GC64) */

struct ljs_proc_cfg {
	__u32 gen;		/* generation; echoed in samples */
	__u32 flags;		/* LJS_CFG_F_* */
	__s64 disp2g;		/* g = DISPATCH(r14) + disp2g */
	__u64 vm_lo, vm_hi;	/* interpreter code range [lo, hi) */
	__u32 gg_ofs_g;		/* g - mainthread, == sizeof(lua_State) */
	__u32 g_win;		/* bytes of g to copy (covers every field used) */
	__u32 g_vmstate;	/* offsets inside global_State */
	__u32 g_cur_L;
	__u32 g_jit_base;
	__u32 g_mainthref;
	__s32 g2j;		/* J = g + g2j */
	__u32 j_trace;		/* offset of J->trace (GCRef *) in jit_State */
	__u32 j_sizetrace;
	__u32 l_win;		/* bytes of lua_State to copy */
	__u32 l_glref;
	__u32 l_base;
	__u32 l_top;
	__u32 l_stack;
	__u32 l_stacksize;
	__u32 l_cframe;
	__u32 t_win;		/* bytes of GCtrace to copy */
	__u32 cf_size;		/* interpreter C frame size (80 or 96) */
	__u32 cf_l;		/* SAVE_L offset in the C frame */
	__u32 cf_prev;		/* SAVE_CFRAME offset */
	__u32 lstack_bytes;	/* Lua stack budget for cur_L */
	__u32 pad;
	__u64 g_hint;		/* a global_State of this process seen before (0 = none):
				 * tried, validated, when r14 is not DISPATCH (non-GC64
				 * traces, C code) and the thread has no cached g yet */
};

/* -- Error counters (per-CPU array, one slot per reason) ------------------ */

/* One entry per reason, in slot order: _(enum suffix, name in STATS and in
 * the recorder's summary).  The enum and LJS_ERR_NAMES are both made from
 * this list, as LuaJIT's lj_errmsg.h ERRDEF list makes its ErrMsg enum and
 * its messages. */
#define LJS_ERRDEF(_) \
	_(SAMPLES, "samples")		/* programs run on a target task */ \
	_(EMITTED, "emitted")		/* sample records submitted */ \
	_(RINGBUF_FULL, "ringbuf_full")	/* ring buffer reserve/output failed */ \
	_(NO_SCRATCH, "no_scratch")	/* per-CPU scratch lookup failed */ \
	_(NO_USER_REGS, "no_user_regs")	/* no user registers (kernel thread) */ \
	_(USTACK_FAULT, "ustack_fault")	/* user stack copy stopped by a fault */ \
	_(KSTACK_FAIL, "kstack_fail")	/* bpf_get_stack failed for the kernel stack */ \
	_(G_REG_INVALID, "g_reg_invalid") /* r14 candidate failed validation */ \
	_(G_FROM_CACHE, "g_from_cache")	/* g taken from the tid cache */ \
	_(NO_G, "no_g")			/* LuaJIT process, but no g for this thread yet */ \
	_(G_FAULT, "g_fault")		/* g window unreadable */ \
	_(L_FAULT, "l_fault")		/* cur_L window unreadable */ \
	_(LSTACK_TRUNC, "lstack_truncated") /* Lua stack cut to budget */ \
	_(LSTACK_FAULT, "lstack_fault")	/* Lua stack unreadable */ \
	_(TRACE_FAULT, "trace_fault")	/* trace header unreadable */ \
	_(RESUMER_FAULT, "resumer_fault") /* resumer chain read failed */ \
	_(RESUMERS_CUT, "resumers_cut")	/* more resumers than LJS_RESUMERS_MAX */ \
	_(REC_FULL, "record_full")	/* a section did not fit the record */ \
	_(TASK_EVENTS, "task_events")	/* fork/exec/exit events submitted */ \
	_(TASK_EVENT_LOST, "task_event_lost") /* fork/exec/exit events lost */ \
	_(G_FROM_HINT, "g_from_hint")	/* g taken from the process's g_hint */ \
	_(TARGET_FULL, "target_full")	/* a forked child did not fit the target map */ \
	/* record --bpf-timing only (bpf_ktime_get_ns around the parts of a sample): */ \
	_(T_KSAMPLES, "bpf_kernel_samples") /* samples taken in kernel mode */ \
	_(T_HEAD, "bpf_head_ns")	/* header, registers and kernel stack */ \
	_(T_USTACK, "bpf_ustack_ns")	/* the user stack copy */ \
	_(T_LUAJIT, "bpf_luajit_ns")	/* the LuaJIT part (g, L, Lua stack, trace, resumers) */ \
	_(T_LUAJIT_G, "bpf_luajit_g_ns") /* of it: finding g (each candidate's G window) */

enum ljs_err {
#define LJS_ERR__ENUM(id, name)	LJS_ERR_##id,
	LJS_ERRDEF(LJS_ERR__ENUM)
#undef LJS_ERR__ENUM
	LJS_ERR__MAX
};

/* Initializer of a const char *[LJS_ERR__MAX]: the names, by slot. */
#define LJS_ERR__NAME(id, name)	name,
#define LJS_ERR_NAMES { LJS_ERRDEF(LJS_ERR__NAME) }

#endif /* LJSNAP_BPF_H */
