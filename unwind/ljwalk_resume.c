/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ljwalk_resume.c -- where a coroutine's walk goes on at its bottom: the
 * resumer thread the sample carries (coroutine.resume), or the C code that
 * resumed it (lua_resume), which makes the stack complete.
 */
#include "unwind/ljwalk_int.h"

/* Find the resumer thread at a depth (LJS_SEC_RES_L, aux = depth), or 0. */
uint64_t ljw__resumer(const struct ljs_sample *s, uint32_t depth)
{
	uint32_t i;

	for (i = 0; i < s->nsec && i < LJS_SAMPLE_MAX_SECS; i++)
		if (s->sec[i].kind == LJS_SEC_RES_L && s->sec[i].aux == depth)
			return s->sec[i].addr;
	return 0;
}

/*
 * Was coroutine L resumed from C (lua_resume: OpenResty's
 * ngx_http_lua_run_thread, an embedder)?  Its outermost C frame, the one
 * lj_vm_resume saved (vm_x64.dasc, CFRAME_*), then returns outside the VM;
 * coroutine.resume's returns into the VM, and the sample carries that
 * resumer (the BPF program follows the same chain).  0 when unreadable.
 */
int ljw__resumed_from_c(struct ljw *w, uint64_t L)
{
	const struct lj_layout *lay = w->d.lay;
	uint64_t cf, prev, ret;
	int n;

	if (!w->o->vm_lo || !w->o->vm_hi || !lay->cf_size ||
	    ljd__ptr(&w->d, L + lay->l_cframe, &cf))
		return 0;
	cf &= ~(uint64_t)3;
	for (n = 0; cf && n < 256; n++) {
		if (ljd__cf_prev(&w->d, cf, &prev))
			return 0;
		prev &= ~(uint64_t)3;
		if (!prev)
			break;
		cf = prev;
	}
	if (!cf || n == 256 || memsrc__u64(w->d.ms, cf + lay->cf_size - 8, &ret))
		return 0;
	return ret && (ret < w->o->vm_lo || ret >= w->o->vm_hi);
}
