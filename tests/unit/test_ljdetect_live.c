/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_ljdetect_live.c -- the live-process half of test_ljdetect: spawn an
 * interpreter running a script, detect LuaJIT in it, and check the layout
 * against its memory (see test_ljdetect.c for the whole list).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unwind/detect/livemem.h"
#include "unwind/detect/ljdetect.h"
#include "symtab/elf.h"
#include "tests/unit/check.h"
#include "tests/unit/ljdetect_test.h"

/* -- Live processes ------------------------------------------------------ */

struct child {
	pid_t pid;
	int in, out;		/* our ends: its stdin, its stdout */
};

/* Start argv with pipes on stdin/stdout; env entries are added (may be NULL). */
static int spawn(char *const argv[], const char *env, struct child *c)
{
	int pin[2] = { -1, -1 }, pout[2] = { -1, -1 };

	c->pid = -1;
	c->in = c->out = -1;
	if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) || (c->pid = fork()) < 0) {
		int err = -errno;

		close(pin[0]);
		close(pin[1]);
		close(pout[0]);
		close(pout[1]);
		return err;
	}
	if (c->pid == 0) {
		dup2(pin[0], 0);
		dup2(pout[1], 1);
		if (env)
			putenv((char *)env);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pin[0]);
	close(pout[1]);
	c->in = pin[1];
	c->out = pout[0];
	return 0;
}

/* Read "L 0x..." and "ready" from the child (20 s timeout). */
static int wait_ready(struct child *c, uint64_t *L)
{
	char buf[4096];
	size_t n = 0;
	int ms = 20000;

	*L = 0;
	while (ms > 0 && n < sizeof(buf) - 1) {
		struct pollfd pfd = { c->out, POLLIN, 0 };
		ssize_t r;
		char *p;

		if (poll(&pfd, 1, 100) <= 0) {
			ms -= 100;
			continue;
		}
		r = read(c->out, buf + n, sizeof(buf) - 1 - n);
		if (r <= 0)
			return -EIO;
		n += (size_t)r;
		buf[n] = 0;
		p = strstr(buf, "L ");
		if (p && !*L)
			*L = strtoull(p + 2, NULL, 16);
		if (strstr(buf, "ready\n"))
			return *L ? 0 : -EINVAL;
	}
	return -ETIMEDOUT;
}

/* Close the child's stdin (it exits) and reap it; SIGKILL after 5 s. */
static void finish(struct child *c)
{
	int i, st;

	close(c->in);
	for (i = 0; i < 50; i++) {
		if (waitpid(c->pid, &st, WNOHANG) == c->pid)
			goto out;
		usleep(100000);
	}
	kill(c->pid, SIGKILL);
	waitpid(c->pid, &st, 0);
out:
	close(c->out);
}

/* Read a GCRef of the layout's size. */
static uint64_t ref(const struct lj_layout *l, const struct memsrc *ms, uint64_t a, int *ok)
{
	uint64_t v = 0;
	uint32_t v32 = 0;

	if (l->ref_size == 8) {
		if (memsrc__u64(ms, a, &v))
			*ok = 0;
		return v;
	}
	if (memsrc__u32(ms, a, &v32))
		*ok = 0;
	return v32;
}

/* Traces in J->trace[]: valid headers, and some started in our chunk. */
static void check_traces(const char *what, const struct lj_layout *l, const struct memsrc *ms,
			 uint64_t g)
{
	uint64_t J = g + (uint64_t)(int64_t)l->g2j, arr, i;
	uint32_t sizetrace = 0;
	int ok = 1, ntr = 0, ours = 0;

	CHECKF(memsrc__u32(ms, J + l->j_sizetrace, &sizetrace) == 0 && memsrc__u64(ms, J + l->j_trace,
	      &arr) == 0, "%s: J->trace unreadable", what);
	CHECKF(sizetrace > 1 && sizetrace <= 65535 && arr, "%s: J->sizetrace %u trace %#lx", what,
	      sizetrace, (unsigned long)arr);
	for (i = 1; ok && arr && i < sizetrace && i < 65535; i++) {
		uint64_t T = ref(l, ms, arr + i * l->ref_size, &ok), P, S, mc = 0;
		uint8_t gct = 0;
		uint16_t no = 0;
		uint32_t len = 0, szmc = 0;
		char name[16] = "";

		if (!T || !ok)
			continue;
		ntr++;
		CHECKF(memsrc__u8(ms, T + l->ref_size + 1, &gct) == 0 && gct == 9, "%s: trace %lu gct %u",
		      what, (unsigned long)i, gct);
		CHECKF(memsrc__u16(ms, T + l->t_traceno, &no) == 0 && no == i, "%s: trace %lu traceno %u",
		      what, (unsigned long)i, no);
		CHECKF(memsrc__u64(ms, T + l->t_mcode, &mc) == 0 && mc &&
		      memsrc__u32(ms, T + l->t_szmcode, &szmc) == 0 && szmc > 0 && szmc < (1u << 24),
		      "%s: trace %lu mcode %#lx size %u", what, (unsigned long)i, (unsigned long)mc, szmc);
		P = ref(l, ms, T + l->t_startpt, &ok);
		CHECKF(ok && memsrc__u8(ms, P + l->ref_size + 1, &gct) == 0 && gct == 7,
		      "%s: trace %lu startpt gct %u", what, (unsigned long)i, gct);
		S = ref(l, ms, P + l->pt_chunkname, &ok);
		CHECKF(ok && memsrc__u8(ms, S + l->ref_size + 1, &gct) == 0 && gct == 4,
		      "%s: chunkname gct %u", what, gct);
		if (memsrc__u32(ms, S + l->str_len, &len) == 0 && len == 11 &&
		    memsrc__read(ms, S + l->str_size, name, 11) == 0 && !memcmp(name, "=ljsnaptest", 11))
			ours++;
	}
	CHECKF(ntr > 0 && ours > 0, "%s: %d traces, %d from chunk =ljsnaptest", what, ntr, ours);
}

/* Detect a live process and confirm the layout in its memory. */
/* A memory source that shows one more reference to a given value in g: a
 * GC list or sweep position pointing at the main thread for a while. */
struct patched {
	const struct memsrc *base;
	uint64_t addr;
	uint8_t bytes[8];
	size_t n;
};

static int patched__read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	const struct patched *p = ms->ctx;
	int err = memsrc__read(p->base, addr, buf, len);
	size_t i;

	for (i = 0; !err && i < p->n; i++)
		if (p->addr + i >= addr && p->addr + i < addr + len)
			((uint8_t *)buf)[p->addr + i - addr] = p->bytes[i];
	return err;
}

/* Live calibration keeps g_mainthref when another field of g refers to the
 * main thread too (seen once in a busy nginx worker, at g+64). */
static void check_mainthref_decoy(const char *what, const struct lj_detect *det,
				  const struct memsrc *live, uint64_t g, uint64_t vm_lo, uint64_t vm_hi)
{
	const struct lj_layout *l = &det->layout;
	struct patched pt = { .base = live };
	struct memsrc ms = { .read = patched__read, .ctx = &pt };
	uint64_t mainL = g - l->gg_ofs_g;
	uint32_t r = l->ref_size, o;
	struct lj_detect cal;
	int err;

	/* the first ref-sized slot before g_mainthref that no calibrated field uses */
	for (o = r; o < l->g_mainthref; o += r)
		if (o != l->g_cur_L && o != l->g_tmpbuf_L && o != l->g_jit_base &&
		    (o + r <= l->g_vmstate || o >= l->g_vmstate + 4) &&
		    (!l->g_strempty || o + r <= l->g_strempty || o >= l->g_strempty + l->str_size + 2))
			break;
	if (o >= l->g_mainthref)
		return;
	pt.addr = g + o;
	pt.n = r;
	memcpy(pt.bytes, &mainL, r);	/* little-endian: the low bytes for a 32-bit ref */
	cal = *det;
	cal.nnotes = cal.nwarnings = 0;
	err = lj_detect__calibrate_live(&cal, &ms, g, vm_lo, vm_hi);
	CHECKF(err == 0 && cal.layout.g_mainthref == l->g_mainthref,
	      "%s: with a reference to the main thread at g+%u too, g_mainthref %u (want %u), err %d",
	      what, o, cal.layout.g_mainthref, l->g_mainthref, err);
}

/* lj_detect__xmaps of the (stopped) child gives the executable mappings
 * of lj_detect__process's list, in its order, named as there. */
static void check_xmaps(const char *what, int pid, const struct lj_proc_detect *pd)
{
	struct lj_xmap *x;
	size_t n, i, k = 0;
	int err = lj_detect__xmaps(pid, &x, &n);

	CHECKF(err == 0 && n > 0, "%s: lj_detect__xmaps %d, %zu mappings", what, err, n);
	for (i = 0; !err && i < pd->nmaps; i++) {
		const struct lj_mapping *m = &pd->maps[i];

		if (!(m->prot & PROT_EXEC))
			continue;
		CHECKF(k < n && x[k].start == m->start && x[k].end == m->end &&
		       x[k].inode == m->inode && x[k].named == (m->path != NULL),
		       "%s: executable mapping %zu (%#lx-%#lx %s) not as lj_detect__xmaps says", what,
		       k, (unsigned long)m->start, (unsigned long)m->end, m->path ? m->path : "");
		k++;
	}
	CHECKF(err || k == n, "%s: %zu executable mappings, lj_detect__xmaps %zu", what, k, n);
	free(x);
}

void check_live(const char *what, char *const argv[], const char *env, const char *vmfile,
		       enum lj_family fam, int gc64, int exact, struct lj_detect_cache *cache)
{
	static struct lj_detect cal;
	struct lj_proc_detect pd;
	struct lj_detect fdet;
	struct livemem lm;
	struct memsrc ms;
	struct child c = { -1, -1, -1 };
	const struct lj_layout *l = &pd.layout;
	struct lj_layout other;
	const struct lj_mapping *m;
	char real[PATH_MAX];
	uint64_t L, g, d0, D, mainL, v, tb;
	int32_t vmstate = 0, want;
	int ok = 1, err;
	uint32_t i;

	memset(&pd, 0, sizeof(pd));
	err = spawn(argv, env, &c);
	CHECKF(err == 0, "%s: spawn %d", what, err);
	if (err)
		return;
	err = wait_ready(&c, &L);
	CHECKF(err == 0, "%s: child did not report its lua_State (%d)", what, err);
	if (err)
		goto out;
	err = lj_detect__process(c.pid, cache, &pd);
	CHECKF(err == 0 && pd.found, "%s: lj_detect__process %d found %d", what, err, pd.found);
	if (err || !pd.found)
		goto out;
	check_xmaps(what, c.pid, &pd);
	printf("%s: pid %d L %#lx vm %#lx-%#lx bias %#lx family %s\n", what, c.pid, (unsigned long)L,
	       (unsigned long)pd.vm_lo, (unsigned long)pd.vm_hi, (unsigned long)pd.load_bias,
	       lj_layout__family_name(pd.layout.family));
	CHECKF(pd.nvm == 1, "%s: %u VM copies", what, pd.nvm);
	CHECKF(pd.det.layout_ok && l->family == (uint32_t)fam && !!(l->flags & LJ_LAYOUT_F_GC64) == gc64,
	      "%s: layout family %u", what, l->family);
	m = &pd.maps[pd.vm_map];
	CHECKF(realpath(vmfile, real) && m->path && !strcmp(m->path, real), "%s: VM in %s, want %s",
	      what, m->path ? m->path : "?", vmfile);
	CHECKF((m->prot & PROT_EXEC) && pd.vm_lo >= m->start && pd.vm_hi <= m->end,
	      "%s: VM range outside its mapping", what);
	CHECKF(lj_detect__elf(vmfile, &fdet) == 0 && fdet.build_id_len == m->build_id_len &&
	      !memcmp(fdet.build_id, m->build_id, (size_t)m->build_id_len), "%s: build id", what);

	livemem__init(&ms, &lm, c.pid, NULL);
	g = ref(l, &ms, L + l->l_glref, &ok);
	CHECKF(ok && g, "%s: cannot read G(L) at %#lx", what, (unsigned long)(L + l->l_glref));
	/* Live calibration (dispatch table, contents of g) finds the same layout
	 * as code + table for every known build. */
	cal = pd.det;
	cal.nnotes = cal.nwarnings = 0;
	err = lj_detect__calibrate_live(&cal, &ms, g, pd.vm_lo, pd.vm_hi);
	CHECKF(err == 0 && cal.live_calibrated, "%s: live calibration %d (%s)", what, err,
	      cal.nwarnings ? cal.warnings[0] : "");
	CHECKF(!exact || (cal.nwarnings == 0 && !memcmp(&cal.layout, l, sizeof(*l))),
	      "%s: live calibration changed the layout (%s)", what, cal.nwarnings ? cal.warnings[0] : "");
	if (exact)
		check_mainthref_decoy(what, &pd.det, &ms, g, pd.vm_lo, pd.vm_hi);
	if (!exact) {
		/* A build no table describes: continue with the live layout. */
		for (i = 0; i < cal.nwarnings; i++)
			printf("  live: %s\n", cal.warnings[i]);
		pd.layout = cal.layout;
	}
	/* Tarantool exports tarantool_L: lj_detect__process follows it to g. */
	CHECKF(!pd.det.sym_tarantool_L || (pd.g == g && pd.det.live_calibrated),
	      "%s: lj_detect__process found g %#lx", what, (unsigned long)pd.g);
	CHECKF(!exact || pd.det.nwarnings == 0, "%s: process detection warns: %s", what,
	      pd.det.warnings[0]);

	CHECKF(lj_detect__validate_g(l, &ms, g) == 0, "%s: g %#lx does not validate", what,
	      (unsigned long)g);
	CHECKF(lj_detect__validate_g(l, &ms, g + 8) == -EINVAL &&
	      lj_detect__validate_g(l, &ms, g - 16) == -EINVAL &&
	      lj_detect__validate_g(l, &ms, 0x1000) == -EINVAL, "%s: wrong g validates", what);
	CHECKF(lj_detect__probe_gg_ofs_g(l, &ms, g) == (int)l->gg_ofs_g, "%s: GG_OFS(g) probe", what);
	/* The other lua_State size (OpenResty's exdata or not) must not validate. */
	other = *l;
	other.gg_ofs_g = l->gg_ofs_g == 112 ? 96 : l->gg_ofs_g == 96 ? 112 : l->gg_ofs_g == 80 ? 64 : 80;
	CHECKF(lj_detect__validate_g(&other, &ms, g) == -EINVAL, "%s: GG_OFS(g) %u validates too", what,
	      other.gg_ofs_g);
	mainL = g - l->gg_ofs_g;
	/* DISPATCH = g - disp2g: its first entry is the first handler (BC_ISLT =
	 * lj_vm_asm_begin) and every static entry points into the VM. */
	D = g - (uint64_t)(int64_t)l->disp2g;
	CHECKF(memsrc__u64(&ms, D, &d0) == 0 && d0 == pd.vm_lo, "%s: dispatch[0] %#lx, vm_lo %#lx",
	      what, (unsigned long)d0, (unsigned long)pd.vm_lo);
	for (i = 0; i < l->bc_funcf; i++) {
		if (memsrc__u64(&ms, D + 8 * i, &v) || v < pd.vm_lo || v >= pd.vm_hi) {
			CHECKF(0, "%s: dispatch[%u] = %#lx outside the VM", what, i, (unsigned long)v);
			break;
		}
	}
	/* g among saved words: DISPATCH (a saved r14), or a lua_State (SAVE_L),
	 * amid words that are neither (a stack address, code, small numbers). */
	{
		uint64_t junk[] = { 0, 1, 0x1000, D + 8, g + 16, pd.vm_lo, L - 8, ~0ull };
		uint64_t wd[10], fg;

		memcpy(wd, junk, sizeof(junk));
		wd[8] = 7;
		wd[9] = D;
		CHECKF(lj_detect__g_from_words(l, &ms, wd, 10, 64, &fg) == 0 && fg == g,
		      "%s: g from a saved DISPATCH: %#lx", what, (unsigned long)fg);
		wd[9] = mainL;
		CHECKF(lj_detect__g_from_words(l, &ms, wd, 10, 64, &fg) == 0 && fg == g,
		      "%s: g from a saved lua_State: %#lx", what, (unsigned long)fg);
		CHECKF(lj_detect__g_from_words(l, &ms, wd, 9, 64, &fg) == -ENOENT && fg == 0,
		      "%s: g from words that hold none: %#lx", what, (unsigned long)fg);
		CHECKF(lj_detect__g_from_words(l, &ms, wd, 10, 1, &fg) == -ENOENT,
		      "%s: the read budget is not kept", what);
	}
	/* Blocked in io.read (a C function): vmstate C (CFUNC in Tarantool >= 2.7),
	 * cur_L the main thread. */
	want = l->vmst.cfunc ? l->vmst.cfunc : l->vmst.c;
	CHECKF(memsrc__read(&ms, g + l->g_vmstate, &vmstate, 4) == 0 && vmstate == want,
	      "%s: vmstate %d, want %d", what, vmstate, want);
	CHECKF(ref(l, &ms, g + l->g_cur_L, &ok) == mainL && ok, "%s: cur_L", what);
	CHECKF(ref(l, &ms, g + l->g_jit_base, &ok) == 0 && ok, "%s: jit_base not 0", what);
	tb = ref(l, &ms, g + l->g_tmpbuf_L, &ok);
	CHECKF(ok && (tb & ~(uint64_t)7) == mainL, "%s: tmpbuf.L %#lx", what, (unsigned long)tb);
	check_traces(what, l, &ms, g);
out:
	finish(&c);
	lj_proc_detect__exit(&pd);
}
