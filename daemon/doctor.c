/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * doctor.c -- `ljsnap doctor PID`: what ljsnap sees in a live process.
 *
 * Answers "why are my Lua frames missing?": which LuaJIT builds are mapped,
 * GC64/FR2, the VM range, every calibrated offset and how it was obtained,
 * and whether a real BPF sample of the process decodes right now (walked
 * with its live memory, printed like luaL_traceback).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "daemon/bpfload.h"
#include "daemon/cmds.h"
#include "daemon/dump.h"
#include "daemon/numarg.h"
#include "daemon/record.h"
#include "unwind/detect/ljdetect.h"
#include "unwind/detect/livemem.h"
#include "daemon/proctab.h"
#include "unwind/ljwalk.h"
#include "unwind/pipeline.h"
#include "unwind/memsrc.h"
#include "unwind/sample.h"

#define DOCTOR_MAX_WALKS	50	/* samples decoded per probe */

struct doctor_probe {
	uint32_t pid;
	unsigned samples, with_lj, g_reg, g_cache, in_vm;
	uint64_t g;
	uint64_t vm_lo, vm_hi;
	uint64_t dispatch;	/* r14 of a sample whose IP is in the interpreter */
	uint64_t r14_any;	/* r14 of any sample (DISPATCH in GC64 traces too) */
	int32_t vmstate;
	int have_vmstate;
	uint32_t g_vmstate;
	/* decoding the samples with the live memory */
	struct ljs_pipe *pipe;		/* Lua frames only: no mappings are resolved */
	struct ljs_pipe_out out;
	const struct lj_layout *layout;
	unsigned walked, complete;
	char trace[2048];	/* the last complete stack, like luaL_traceback */
};

/* Walk one sample now (its windows, then live memory); keep the frames of
 * the last one that reaches the bottom with no unknown frame. */
static void probe_walk(struct doctor_probe *dp, const struct ljs_sample *s)
{
	struct ljs_proc proc = { .has_luajit = 1, .vm_lo = dp->vm_lo, .vm_hi = dp->vm_hi };
	const struct ljw_stack *st;
	struct livemem lm;
	struct memsrc live, sm;
	size_t i, off = 0;

	if (!dp->pipe || dp->walked >= DOCTOR_MAX_WALKS)
		return;
	proc.layout = *dp->layout;	/* live calibration may have changed it */
	livemem__init(&live, &lm, (int)dp->pid, NULL);
	memsrc__init_sample(&sm, s, &live);
	if (ljs_pipe__sample(dp->pipe, &proc, s, &sm, "", &dp->out) != 0 || !dp->out.lua)
		return;
	st = dp->out.lua;
	dp->walked++;
	if (!st->complete || st->nunknown)
		return;
	dp->complete++;
	for (i = 0; i < st->nframes && off + 8 < sizeof(dp->trace); i++) {
		off += snprintf(dp->trace + off, sizeof(dp->trace) - off, "        ");
		if (off < sizeof(dp->trace))
			off += ljw_frame__format(&st->frames[i], dp->trace + off, sizeof(dp->trace) - off);
		if (off < sizeof(dp->trace))
			off += snprintf(dp->trace + off, sizeof(dp->trace) - off, "\n");
	}
}

/* Burst callback: tally the samples of the probed process (enough: 20
 * with the VM state). */
static int on_probe(void *ctx, const struct ljs_sample *sp)
{
	struct doctor_probe *dp = ctx;
	const struct ljs_section *gs;
	struct ljs_sample s = *sp;

	dp->samples++;
	if ((s.flags & LJS_SAMPLE_F_REGS_VALID) && s.regs.ip >= dp->vm_lo && s.regs.ip < dp->vm_hi) {
		dp->in_vm++;
		dp->dispatch = s.regs.r14;
	}
	if ((s.flags & LJS_SAMPLE_F_REGS_VALID) && !(s.flags & LJS_SAMPLE_F_KERNEL_MODE) &&
	    s.regs.r14 && !(s.regs.r14 & 7))
		dp->r14_any = s.regs.r14;
	if (!s.g)
		return 0;
	dp->with_lj++;
	dp->g = s.g;
	dp->g_reg += !!(s.flags & LJS_SAMPLE_F_G_FROM_REG);
	dp->g_cache += !!(s.flags & LJS_SAMPLE_F_G_FROM_CACHE);
	gs = ljs_sample__section(&s, LJS_SEC_G, -1);
	if (gs && gs->len >= dp->g_vmstate + 4) {
		memcpy(&dp->vmstate, gs->data + dp->g_vmstate, 4);
		dp->have_vmstate = 1;
	}
	probe_walk(dp, &s);
	return dp->with_lj >= 20;
}

/* Sample the process for up to `seconds` with the real BPF program
 * (dump_live.c). */
static int probe(const struct lj_proc_detect *pd, uint32_t pid, double seconds,
		 struct doctor_probe *dp)
{
	struct live_lj lj = { .layout = pd->layout, .vm_lo = pd->vm_lo, .vm_hi = pd->vm_hi };
	char err[512];
	int rc;

	dp->vm_lo = pd->vm_lo;
	dp->vm_hi = pd->vm_hi;
	rc = live__burst(pid, &lj, 499, seconds, on_probe, dp, err, sizeof(err));
	if (rc)
		printf("  live check:  not possible: %s\n", err);
	return rc;
}

/* Names of the layout fields that differ between a and b, comma-separated. */
static unsigned layout_diff(const struct lj_layout *a, const struct lj_layout *b, char *buf,
			    size_t len)
{
	unsigned n = 0;
	size_t i, off = 0;

	buf[0] = 0;
	for (i = 0; i < lj_layout__nfields; i++) {
		uint32_t va, vb;

		memcpy(&va, (const char *)a + lj_layout__fields[i].offset, 4);
		memcpy(&vb, (const char *)b + lj_layout__fields[i].offset, 4);
		if (va == vb)
			continue;
		n++;
		if (off + 48 < len)
			off += snprintf(buf + off, len - off, "%s%s %d->%d", n > 1 ? ", " : "",
					lj_layout__fields[i].name, (int32_t)va, (int32_t)vb);
	}
	return n;
}

/*
 * Calibrate the layout from the live process: from the g a sample carried,
 * else from the DISPATCH register of a sample taken in the interpreter (a
 * build no table describes: the table's disp2g found no g).  Prints the
 * result; updates pd->layout.  Returns 1 if the layout changed, 0 if it
 * was confirmed or could not be checked, -1 if the calibration failed.
 */
static int live_calibrate(struct lj_proc_detect *pd, uint32_t pid, const struct doctor_probe *dp)
{
	struct lj_detect *d = &pd->det;
	unsigned nn = d->nnotes, nw = d->nwarnings, i, ndiff;
	struct lj_layout before = pd->layout;
	struct livemem lm;
	struct memsrc ms;
	uint64_t g = dp->g;
	char diff[512];
	int err;

	livemem__init(&ms, &lm, pid, NULL);
	if (d->live_calibrated) {
		printf("  live calibration: done during detection (g %#llx from tarantool_L)\n",
		       (unsigned long long)pd->g);
		return 0;
	}
	if (g) {
		err = lj_detect__calibrate_live(d, &ms, g, pd->vm_lo, pd->vm_hi);
	} else if (dp->dispatch) {
		err = lj_detect__calibrate_dispatch(d, &ms, dp->dispatch, pd->vm_lo, pd->vm_hi, &g);
	} else if (dp->r14_any && (pd->layout.flags & LJ_LAYOUT_F_GC64)) {
		/* GC64 traces keep DISPATCH in r14 as well. */
		err = lj_detect__calibrate_dispatch(d, &ms, dp->r14_any, pd->vm_lo, pd->vm_hi, &g);
	} else {
		printf("  live calibration: not possible: no sample carried a g or ran in the interpreter\n");
		return 0;
	}
	for (i = nn; i < d->nnotes; i++)
		printf("    - %s\n", d->notes[i]);
	for (i = nw; i < d->nwarnings; i++)
		printf("    ! %s\n", d->warnings[i]);
	if (err) {
		printf("  live calibration: failed from %s %#llx\n", dp->g ? "g" : "DISPATCH",
		       (unsigned long long)(dp->g ? dp->g : dp->dispatch ? dp->dispatch : dp->r14_any));
		return -1;
	}
	pd->layout = d->layout;
	ndiff = layout_diff(&before, &pd->layout, diff, sizeof(diff));
	if (!ndiff) {
		printf("  live calibration: g %#llx confirms every offset\n", (unsigned long long)g);
		return 0;
	}
	printf("  live calibration: g %#llx%s; %u offsets differ from the detected layout: %s\n",
	       (unsigned long long)g, dp->g ? "" : " found from DISPATCH", ndiff, diff);
	return 1;
}

/* Print one process's findings. */
static int doctor_pid(uint32_t pid, double seconds)
{
	struct lj_detect_cache *cache = lj_detect_cache__new();
	struct ljs_pipe *pipe = NULL;
	struct ljs_stack out = { 0 };	/* dp.out.stack, kept across the probes */
	struct doctor_probe dp;
	struct lj_proc_detect pd;
	const struct lj_detect *d;
	const struct lj_layout *l;
	size_t i;
	int err, ret = 1, live;

	memset(&pd, 0, sizeof(pd));
	err = lj_detect__process(pid, cache, &pd);
	if (err) {
		fprintf(stderr, "ljsnap doctor: cannot inspect pid %u: %s%s\n", pid, strerror(-err),
			err == -EACCES || err == -EPERM ? " (run as root or with CAP_SYS_PTRACE)" : "");
		goto out;
	}
	printf("pid %u: %zu mappings\n", pid, pd.nmaps);
	if (!pd.found) {
		printf("  LuaJIT:      not found. No mapped file has LuaJIT's exported API together with\n"
		       "               its interpreter (checked: lua_newstate/luaL_newstate, lua_gettop,\n"
		       "               luaJIT_setmode, the interpreter's .eh_frame entry).  If the Lua\n"
		       "               library is loaded later (dlopen), ljsnap record picks it up then.\n");
		ret = 0;
		goto out;
	}
	d = &pd.det;
	l = &pd.layout;
	printf("  LuaJIT:      %s, %s (FR2 %s), in %s\n", lj_layout__family_name(l->family),
	       (l->flags & LJ_LAYOUT_F_GC64) ? "GC64" : "non-GC64",
	       (l->flags & LJ_LAYOUT_F_GC64) ? "on" : "off",
	       pd.maps[pd.vm_map].path ? pd.maps[pd.vm_map].path : "?");
	if (pd.nvm > 1)
		printf("  note:        %u different LuaJIT files are mapped; ljsnap uses this one\n", pd.nvm);
	printf("  number mode: %s\n", (l->flags & LJ_LAYOUT_F_DUALNUM) ? "dual-number (LUAJIT_NUMMODE=2)" :
	       d->dualnum == 0 ? "single-number" :
	       "unknown (lua_pushinteger not recognized; single-number unless built with LUAJIT_NUMMODE=2)");
	printf("  VM code:     0x%llx-0x%llx (load bias 0x%llx, C frame %u bytes)\n",
	       (unsigned long long)pd.vm_lo, (unsigned long long)pd.vm_hi,
	       (unsigned long long)pd.load_bias, l->cf_size);
	printf("  build id:    ");
	for (i = 0; i < (size_t)d->build_id_len; i++)
		printf("%02x", d->build_id[i]);
	printf("%s\n", d->build_id_len ? "" : "none");
	printf("  offsets:     DISPATCH->g %d, g->J %d, vmstate +%u, cur_L +%u, jit_base +%u, "
	       "L->base +%u, L->stack +%u, L->cframe +%u, sizeof(lua_State) %u\n",
	       l->disp2g, l->g2j, l->g_vmstate, l->g_cur_L, l->g_jit_base, l->l_base, l->l_stack,
	       l->l_cframe, l->gg_ofs_g);
	printf("  how each value was obtained:\n");
	for (i = 0; i < d->nnotes; i++)
		printf("    - %s\n", d->notes[i]);
	for (i = 0; i < d->nwarnings; i++)
		printf("    ! %s\n", d->warnings[i]);
	if (!d->layout_ok) {
		printf("  result:      the layout could not be calibrated; Lua frames will be missing\n");
		goto out;
	}

	memset(&dp, 0, sizeof(dp));
	dp.pid = pid;
	dp.g_vmstate = l->g_vmstate;
	dp.layout = l;
	dp.pipe = pipe = ljs_pipe__new(LJS_PIPE_LUA_ONLY, NULL);
	dp.out.stack = out;
	if (probe(&pd, pid, seconds, &dp) == 0) {
		struct livemem lm;
		struct memsrc ms;

		printf("  live check:  %u samples in up to %.1f s, %u with the VM state (g from r14: %u, "
		       "from the thread cache: %u)\n", dp.samples, seconds, dp.with_lj, dp.g_reg, dp.g_cache);
		live = live_calibrate(&pd, pid, &dp);
		if (live > 0) {
			/* The layout changed: probe again with the calibrated one. */
			out = dp.out.stack;
			memset(&dp, 0, sizeof(dp));
			dp.out.stack = out;
			dp.pid = pid;
			dp.g_vmstate = l->g_vmstate;
			dp.layout = l;
			dp.pipe = pipe;
			if (probe(&pd, pid, seconds, &dp) != 0)
				goto done;
			printf("  live check:  with the calibrated layout: %u samples, %u with the VM state "
			       "(g from r14: %u, from the thread cache: %u)\n", dp.samples, dp.with_lj,
			       dp.g_reg, dp.g_cache);
		}
		if (dp.with_lj) {
			livemem__init(&ms, &lm, pid, NULL);
			printf("  global_State 0x%llx: %s; vmstate %d (%s)\n", (unsigned long long)dp.g,
			       lj_detect__validate_g(l, &ms, dp.g) == 0 ? "valid (GG_State self-references hold)"
								  : "no longer valid",
			       dp.vmstate, dp.have_vmstate ? lj_layout__vmstate_name(l, dp.vmstate) : "?");
			printf("  decoded:     %u of %u samples walked with the live memory reach the bottom of\n"
			       "               the Lua stack with no unknown frame%s\n", dp.complete, dp.walked,
			       dp.complete ? "; the last one, as luaL_traceback prints it:" : "");
			if (dp.complete)
				printf("%s", dp.trace);
			printf("  result:      samples of this process carry the LuaJIT state\n");
		} else if (dp.samples && live < 0) {
			printf("  result:      no sample found a valid global_State and the live calibration "
			       "failed: ljsnap does not understand this build's layout, Lua frames will be "
			       "missing (please report this output)\n");
		} else if (dp.samples) {
			printf("  result:      the process ran, but no sample found a valid global_State: it "
			       "ran no Lua code while probed, or the calibrated offsets are wrong\n");
		} else {
			printf("  result:      no sample in %.1f s: the process was idle; record it under load\n",
			       seconds);
		}
	}
done:
	ret = 0;
out:
	if (pipe)
		ljs_stack__exit(&dp.out.stack);
	ljs_pipe__delete(pipe);
	lj_proc_detect__exit(&pd);
	lj_detect_cache__delete(cache);
	return ret;
}

/* `ljsnap doctor PID [SECONDS]`. */
int cmd_doctor(int argc, char **argv)
{
	uint64_t pid;
	double secs = 1.0;

	if (argc < 2 || argc > 3 || argv[1][0] == '-') {
		FILE *out = argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) ? stdout : stderr;

		fprintf(out, "usage: ljsnap doctor PID [SECONDS]\n\n"
			"Print what ljsnap sees in a live process: each LuaJIT build mapped, GC64/FR2,\n"
			"the VM code range, the calibrated offsets and how each was obtained, then\n"
			"sample the process with the real BPF program for up to SECONDS (default 1),\n"
			"check the layout against live memory (a global_State from a sample, or\n"
			"found from the interpreter's DISPATCH register when the detected layout\n"
			"finds none: then the calibrated layout is probed again), say whether\n"
			"its samples carry a valid LuaJIT state, and decode them with the live\n"
			"memory: how many reach the bottom of the Lua stack, and the last one as\n"
			"luaL_traceback would print it.\n\n"
			"example:\n  ljsnap doctor $(pgrep -n nginx)\n");
		return out == stdout ? 0 : 2;
	}
	if (numarg__u64(argv[1], 1, RECORD_PID_MAX, &pid)) {
		fprintf(stderr, "ljsnap doctor: PID wants 1..%d, got '%s'\n", RECORD_PID_MAX, argv[1]);
		return 2;
	}
	if (argc == 3 && numarg__seconds(argv[2], 600, &secs)) {
		fprintf(stderr, "ljsnap doctor: SECONDS wants more than 0 and at most 600, got '%s'\n",
			argv[2]);
		return 2;
	}
	return doctor_pid((uint32_t)pid, secs);
}
