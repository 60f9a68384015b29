/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * capcheck.c -- independent checks of a capture file for the e2e tests.
 *
 * usage: capcheck FILE PID VMSTATE_OFF GC64(0|1) [NAME=ADDR...]
 *
 * Reads every sample of PID with the capture reader and decodes the raw
 * bytes itself (no ljsnap walker): whether the LuaJIT part is present, the
 * vmstate at VMSTATE_OFF in the global_State window, and for each function
 * NAME=ADDR whether its tagged TValue sits in the sample's Lua stack window.
 * Prints "key value" lines for the shell test to assert on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/capture/snapfile.h"

#define MAXFN 16

/* Is the tagged function value for addr anywhere in the window? */
static int window_has_fn(const struct ljs_section *sec, uint64_t addr, int gc64)
{
	uint64_t want = gc64 ? (addr | ((uint64_t)0xfffffff7u << 47))
			     : ((uint64_t)0xfffffff7u << 32) | (addr & 0xffffffffu);
	uint32_t i;

	for (i = 0; i + 8 <= sec->len; i += 8) {
		uint64_t v;

		memcpy(&v, sec->data + i, 8);
		if (v == want)
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *names[MAXFN];
	uint64_t addrs[MAXFN], has[MAXFN] = { 0 };
	uint64_t total = 0, lj = 0, gsec = 0, lstack = 0, vm_ok = 0, vm_trace = 0, vm_interp = 0;
	uint64_t vm_c = 0, other_pid = 0;
	struct snapfile_reader *r;
	struct snapfile_rec rec;
	uint32_t pid, vmoff;
	int gc64, nfn = 0, i, err, rc;

	if (argc < 5) {
		fprintf(stderr, "usage: capcheck FILE PID VMSTATE_OFF GC64 [NAME=ADDR...]\n");
		return 2;
	}
	pid = strtoul(argv[2], NULL, 0);
	vmoff = strtoul(argv[3], NULL, 0);
	gc64 = atoi(argv[4]);
	for (i = 5; i < argc && nfn < MAXFN; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq)
			return 2;
		*eq = 0;
		names[nfn] = argv[i];
		addrs[nfn++] = strtoull(eq + 1, NULL, 16);
	}
	r = snapfile_reader__open(argv[1], &err);
	if (!r) {
		fprintf(stderr, "capcheck: %s: %s\n", argv[1], snapfile__strerror(err));
		return 1;
	}
	while ((rc = snapfile_reader__next(r, &rec)) != 0) {
		const struct ljs_section *g, *ls;

		if (rc < 0)
			continue;
		if (rec.kind != SNAPFILE_REC_SAMPLE)
			continue;
		if (rec.sample.pid != pid) {
			other_pid++;
			continue;
		}
		total++;
		if (!(rec.sample.flags & LJS_SAMPLE_F_LUAJIT))
			continue;
		g = ljs_sample__section(&rec.sample, LJS_SEC_G, -1);
		ls = ljs_sample__section(&rec.sample, LJS_SEC_LSTACK, -1);
		if (g && ls && g->len >= vmoff + 4 && ls->len > 0)
			lj++;
		if (g && g->len >= vmoff + 4) {
			int32_t vm;

			gsec++;
			memcpy(&vm, g->data + vmoff, 4);
			if (vm >= -7 && vm <= -1)
				vm_ok++;
			else if (vm >= 0 && vm < 65536)
				vm_ok++, vm_trace++;
			vm_interp += vm == -1;
			vm_c += vm == -2;
		}
		if (ls && ls->len) {
			lstack++;
			for (i = 0; i < nfn; i++)
				has[i] += window_has_fn(ls, addrs[i], gc64);
		}
	}
	printf("samples %llu\nluajit_part %llu\ng_section %llu\nlstack_section %llu\n"
	       "vmstate_plausible %llu\nvmstate_trace %llu\nvmstate_interp %llu\nvmstate_c %llu\n"
	       "other_pid_samples %llu\n",
	       (unsigned long long)total, (unsigned long long)lj, (unsigned long long)gsec,
	       (unsigned long long)lstack, (unsigned long long)vm_ok, (unsigned long long)vm_trace,
	       (unsigned long long)vm_interp, (unsigned long long)vm_c,
	       (unsigned long long)other_pid);
	for (i = 0; i < nfn; i++)
		printf("fn_%s %llu\n", names[i], (unsigned long long)has[i]);
	if (snapfile_reader__note(r))
		printf("note %s\n", snapfile_reader__note(r));
	snapfile_reader__close(r);
	return 0;
}
