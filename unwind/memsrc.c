/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memsrc.c -- memory sources: the chain, sized reads, and the two byte-window
 * sources (one sample's sections, a flat window list).
 *
 * Every read is all-or-nothing.  A window source may assemble one read from
 * several of its windows (the main lua_State sits right before g, so the L
 * and g windows can touch), but the chain never mixes bytes of two sources.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "unwind/memsrc.h"
#include "unwind/sample.h"

/* -- Chain --------------------------------------------------------------- */

/* Read through the chain: the first source that has all bytes wins. */
int memsrc__read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	const struct memsrc *s;
	unsigned hops = 0;
	int err = -EFAULT;

	if (len == 0)
		return 0;
	if (!buf || addr + len < addr)
		return -EFAULT;
	/* A chain longer than this is a cycle: stop rather than spin. */
	for (s = ms; s && hops < 64; s = s->next, hops++) {
		if (!s->read)
			continue;
		err = s->read(s, addr, buf, len);
		if (err == 0)
			return 0;
	}
	return err < 0 ? err : -EFAULT;
}

/* Read one byte. */
int memsrc__u8(const struct memsrc *ms, uint64_t addr, uint8_t *v)
{
	return memsrc__read(ms, addr, v, 1);
}

/* Read a little-endian u16. */
int memsrc__u16(const struct memsrc *ms, uint64_t addr, uint16_t *v)
{
	uint16_t x;
	int err = memsrc__read(ms, addr, &x, sizeof(x));

	if (err == 0)
		*v = le16toh(x);
	return err;
}

/* Read a little-endian u32. */
int memsrc__u32(const struct memsrc *ms, uint64_t addr, uint32_t *v)
{
	uint32_t x;
	int err = memsrc__read(ms, addr, &x, sizeof(x));

	if (err == 0)
		*v = le32toh(x);
	return err;
}

/* Read a little-endian u64. */
int memsrc__u64(const struct memsrc *ms, uint64_t addr, uint64_t *v)
{
	uint64_t x;
	int err = memsrc__read(ms, addr, &x, sizeof(x));

	if (err == 0)
		*v = le64toh(x);
	return err;
}

/* -- Window assembly ----------------------------------------------------- */

/* Window lookup callback: the n-th window's address, length and bytes. */
typedef int (*win_get_fn)(const void *ctx, size_t i, uint64_t *addr, size_t *len,
			  const uint8_t **data);

/* Copy [addr, addr+len) out of a window set; 0 or -EFAULT if a byte is missing. */
static int windows__copy(const void *ctx, size_t n, win_get_fn get, uint64_t addr,
			 uint8_t *out, size_t len)
{
	size_t done = 0;

	/* Each pass covers at least one more byte or fails: at most len passes,
	 * and in practice one per window touched. */
	while (done < len) {
		uint64_t cur = addr + done;
		size_t best = 0, i;

		for (i = 0; i < n; i++) {
			uint64_t wa;
			size_t wl, take;
			const uint8_t *wd;

			if (get(ctx, i, &wa, &wl, &wd) != 0 || !wd || wl == 0)
				continue;
			if (wa + wl < wa)	/* wraps: ignore the window */
				continue;
			if (cur < wa || cur >= wa + wl)
				continue;
			take = (size_t)(wa + wl - cur);
			if (take > len - done)
				take = len - done;
			if (take > best) {
				memcpy(out + done, wd + (cur - wa), take);
				best = take;
				if (done + best == len)
					break;
			}
		}
		if (best == 0)
			return -EFAULT;
		done += best;
	}
	return 0;
}

/* -- Sample source --------------------------------------------------------- */

/* Window i of a sample: every section that has a target address. */
static int sample__win(const void *ctx, size_t i, uint64_t *addr, size_t *len,
		       const uint8_t **data)
{
	const struct ljs_sample *s = ctx;
	const struct ljs_section *sec;

	if (i >= s->nsec || i >= LJS_SAMPLE_MAX_SECS)
		return -ENOENT;
	sec = &s->sec[i];
	if (sec->kind == LJS_SEC_KSTACK || sec->addr == 0)
		return -ENOENT;
	*addr = sec->addr;
	*len = sec->len;
	*data = sec->data;
	return 0;
}

/* memsrc read callback over one sample's sections. */
static int sample__read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	const struct ljs_sample *s = ms->ctx;
	size_t n;

	size_t i;

	if (!s)
		return -EFAULT;
	n = s->nsec < LJS_SAMPLE_MAX_SECS ? s->nsec : LJS_SAMPLE_MAX_SECS;
	/* Nearly every read lies in one section or in none: the first section
	 * holding all of it is what windows__copy would copy too (it stops at
	 * the first window that covers the rest), and with no section holding
	 * its first byte it fails at once. */
	for (i = 0; i < n; i++) {
		const struct ljs_section *sec = &s->sec[i];
		uint64_t off = addr - sec->addr;	/* wraps when addr is below */

		if (off >= sec->len || sec->kind == LJS_SEC_KSTACK || sec->addr == 0 ||
		    !sec->data || sec->addr + sec->len < sec->addr)
			continue;
		if (sec->len - off < len)
			return windows__copy(s, n, sample__win, addr, buf, len);
		memcpy(buf, sec->data + off, len);
		return 0;
	}
	return -EFAULT;
}

/* A source over the byte windows of one sample (every section with addr). */
void memsrc__init_sample(struct memsrc *ms, const struct ljs_sample *s,
			 const struct memsrc *next)
{
	ms->read = sample__read;
	ms->ctx = (void *)s;
	ms->next = next;
}

/* memsrc read callback over a sample's listed sections: sample__read's
 * loop, the sections that cannot answer left out beforehand. */
static int list__read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	struct memsrc_sample *m = ms->ctx;
	const struct memsrc_window_ *w;
	size_t i, lo, hi;
	uint64_t off;

	if (m->sorted) {	/* the one window that can hold addr: the last below it */
		w = &m->w[m->last];
		if ((off = addr - w->addr) < w->len)	/* the one that answered last */
			goto found;
		for (lo = 0, hi = m->n; lo < hi;) {
			i = lo + (hi - lo) / 2;
			if (m->w[i].addr <= addr)
				lo = i + 1;
			else
				hi = i;
		}
		if (lo == 0 || (off = addr - m->w[lo - 1].addr) >= m->w[lo - 1].len)
			return -EFAULT;
		w = &m->w[lo - 1];
		m->last = lo - 1;
		goto found;
	}
	for (i = 0; i < m->n; i++) {
		w = &m->w[i];
		off = addr - w->addr;	/* wraps when addr is below */
		if (off < w->len)
			goto found;
	}
	return -EFAULT;
found:
	if (w->len - off < len)
		return windows__copy(m->s, m->s->nsec < LJS_SAMPLE_MAX_SECS ?
				     m->s->nsec : LJS_SAMPLE_MAX_SECS, sample__win, addr, buf, len);
	memsrc__copy(buf, w->data + off, len);
	return 0;
}

/* Order m's windows by address when no two overlap: then a read's first
 * byte lies in one window at most, the one the scan in list order finds. */
static void list__sort(struct memsrc_sample *m)
{
	struct memsrc_window_ v[MEMSRC_SAMPLE_MAX_WINS], t;
	size_t i, j;

	m->sorted = 0;
	memcpy(v, m->w, m->n * sizeof(v[0]));
	for (i = 1; i < m->n; i++) {	/* insertion sort: a handful of windows */
		t = v[i];
		for (j = i; j > 0 && v[j - 1].addr > t.addr; j--)
			v[j] = v[j - 1];
		v[j] = t;
	}
	for (i = 0; i + 1 < m->n; i++)
		if (v[i + 1].addr - v[i].addr < v[i].len)	/* overlap */
			return;
	memcpy(m->w, v, m->n * sizeof(v[0]));
	m->last = 0;
	m->sorted = m->n > 0;
}

/* A sample source with its answering sections listed once. */
void memsrc__init_sample_list(struct memsrc_sample *m, const struct ljs_sample *s,
			      const struct memsrc *next)
{
	size_t i, n = s ? (s->nsec < LJS_SAMPLE_MAX_SECS ? s->nsec : LJS_SAMPLE_MAX_SECS) : 0;

	_Static_assert(MEMSRC_SAMPLE_MAX_WINS >= LJS_SAMPLE_MAX_SECS, "memsrc_sample too small");
	m->ms.read = list__read;
	m->ms.ctx = m;
	m->ms.next = next;
	m->s = s;
	m->n = 0;
	for (i = 0; i < n; i++) {
		const struct ljs_section *sec = &s->sec[i];

		if (sec->len == 0 || sec->kind == LJS_SEC_KSTACK || sec->addr == 0 || !sec->data ||
		    sec->addr + sec->len < sec->addr)
			continue;
		m->w[m->n].addr = sec->addr;
		m->w[m->n].len = sec->len;
		m->w[m->n].data = sec->data;
		m->n++;
	}
	list__sort(m);
}

/* -- Flat window source ---------------------------------------------------- */

/* Window i of a flat list. */
static int flat__win(const void *ctx, size_t i, uint64_t *addr, size_t *len,
		     const uint8_t **data)
{
	const struct memsrc_windows *ws = ctx;

	if (i >= ws->n)
		return -ENOENT;
	*addr = ws->w[i].addr;
	*len = ws->w[i].len;
	*data = ws->w[i].data;
	return 0;
}

/* memsrc read callback over a flat window list. */
static int flat__read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	const struct memsrc_windows *ws = ms->ctx;

	if (!ws || !ws->w)
		return -EFAULT;
	return windows__copy(ws, ws->n, flat__win, addr, buf, len);
}

/* A source over a flat list of windows (for tests and the memory table). */
void memsrc__init_windows(struct memsrc *ms, const struct memsrc_windows *ws,
			  const struct memsrc *next)
{
	ms->read = flat__read;
	ms->ctx = (void *)ws;
	ms->next = next;
}
