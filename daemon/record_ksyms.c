/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record_ksyms.c -- the KSYMS records of `ljsnap record`: the kernel
 * symbols that resolve every kernel IP seen, read from /proc/kallsyms.
 *
 * Loading the whole table (ksyms__load: every line parsed, its name copied,
 * 100,000+ entries sorted) took 45 ms of the recorder's CPU at every stop,
 * of which about 22-30 ms is the kernel formatting the file.  Here the text
 * is read once into memory and only the address of each line is parsed and
 * sorted (kallsyms is in order already but for modules and the like); a
 * binary search finds, for each IP, the greatest symbol address <= it and
 * the address that follows it (the bound ksyms__select keeps too, see
 * symtab/ksyms.h).  Only the lines at those addresses (every alias) go
 * into a small table, and ksyms__select on it picks exactly what it picks
 * from the whole one.
 *
 * When every IP is in the core kernel's text, the text comes from the
 * per-boot copy of ksyms_cache.h instead of /proc/kallsyms: the same lines,
 * without the kernel formatting them again (STATS ksyms_cached 1).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemon/cache.h"
#include "daemon/ksyms_cache.h"
#include "daemon/record.h"
#include "symtab/ksyms.h"
#include "symtab/vec.h"

#define KALLSYMS_MAX	(256u << 20)	/* a larger file is refused */

/* Read all of path (a /proc file: no size to trust) into *buf; 0 or -errno. */
static int read_all(const char *path, char **buf, size_t *len)
{
	size_t cap = 8u << 20, n = 0;
	char *b = malloc(cap + 1), *nb;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t got;

	if (fd < 0 || !b) {
		err = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	for (;;) {
		if (n == cap) {
			if (cap >= KALLSYMS_MAX || !(nb = realloc(b, 2 * cap + 1))) {
				err = -ENOMEM;
				goto out;
			}
			b = nb;
			cap *= 2;
		}
		got = read(fd, b + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = -errno;
			goto out;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	b = NULL;
out:
	if (fd >= 0)
		close(fd);
	free(b);
	return err;
}

/* The address of a kallsyms line "ADDR T name[\t[module]]" at p (ending at
 * the next '\n'); 1, or 0 for a line ksyms__load would skip too. */
static int line_addr(const char *p, uint64_t *addr)
{
	uint64_t a = 0;
	const char *q = p;

	for (; isxdigit((unsigned char)*q) && q - p < 16; q++)
		a = a << 4 | (uint64_t)(isdigit((unsigned char)*q) ? *q - '0' : (*q | 0x20) - 'a' + 10);
	if (q == p || q[0] != ' ' || !q[1] || q[1] == '\n' || q[2] != ' ' || !q[3] ||
	    strchr("\t\n ", q[3]))
		return 0;
	*addr = a;
	return 1;
}

/* The start of the line after the one at p (at the final NUL if none). */
static char *next_line(const char *p)
{
	const char *e = strchr(p, '\n');

	return (char *)(e ? e + 1 : p + strlen(p));
}

/* Add the line at p (its address a) to k. */
static int add_line(struct ksyms *k, char *p, uint64_t a)
{
	char *name, *module = NULL, *e, type;

	p = strchr(p, ' ') + 1;
	type = *p;
	name = p + 2;
	e = name + strcspn(name, "\t\n ");
	if (*e == '\t' && e[1] == '[') {
		module = e + 2;
		module[strcspn(module, "]\n")] = 0;
	}
	*e = 0;
	return ksyms__add(k, a, name, module, isupper((unsigned char)type));
}

/* The symbol lines of a kallsyms text, ascending by address (then by
 * where they are in the text): the address and where the line starts. */
struct kline {
	uint64_t addr;
	uint32_t off;
};

struct klines {
	struct kline *v;
	size_t n, nonzero;
};

static int kline__cmp(const void *a, const void *b)
{
	const struct kline *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Parse the address of every symbol line of buf (len bytes) and sort them
 * (kallsyms has the core kernel's in order; modules' and the rest follow
 * in their own); 0 or -ENOMEM. */
static int klines__init(struct klines *kl, char *buf, size_t len)
{
	size_t cap = len / 32 + 16, i;
	int sorted = 1;
	char *p;

	memset(kl, 0, sizeof(*kl));
	if (!(kl->v = malloc(cap * sizeof(*kl->v))))
		return -ENOMEM;
	for (p = buf; p < buf + len && *p; p = next_line(p)) {
		uint64_t a;

		if (!line_addr(p, &a))
			continue;
		if (kl->n == cap) {
			struct kline *nv = realloc(kl->v, 2 * cap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			kl->v = nv;
			cap *= 2;
		}
		kl->v[kl->n].addr = a;
		kl->v[kl->n++].off = (uint32_t)(p - buf);
		kl->nonzero += a != 0;
	}
	for (i = 1; i < kl->n && sorted; i++)
		sorted = kl->v[i - 1].addr <= kl->v[i].addr;
	if (!sorted)
		qsort(kl->v, kl->n, sizeof(*kl->v), kline__cmp);
	return 0;
}

static void klines__exit(struct klines *kl)
{
	free(kl->v);
}

/* Index of the first line with an address > a (above) or >= a (not above);
 * kl->n if none. */
static size_t klines__find(const struct klines *kl, uint64_t a, int above)
{
	size_t lo = 0, hi = kl->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (kl->v[mid].addr < a || (above && kl->v[mid].addr == a))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Order lines by where they are in the text. */
static int kline__cmp_off(const void *a, const void *b)
{
	const struct kline *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * The addresses needed for the n ascending ips (at most 2n, ascending, in
 * need[], their count in *nneed): for each ip the greatest address <= it,
 * and the least address above each of those.  -EPERM when every address
 * reads 0, -ENODATA when there is no symbol.
 */
static int needed(const struct klines *kl, const uint64_t *ips, size_t n, uint64_t *need,
		  size_t *nneed)
{
	size_t i, j, m = 0, last = 0;	/* last: the line after the last best */

	if (!kl->n || !kl->nonzero)
		return !kl->n ? -ENODATA : -EPERM;
	for (i = 0; i < n; i++) {
		j = klines__find(kl, ips[i], 1);
		if (!j || j == last)
			continue;	/* below every symbol, or the ip before's (ips ascend) */
		last = j;
		need[m++] = kl->v[j - 1].addr;
		if (j < kl->n)
			need[m++] = kl->v[j].addr;
	}
	/* a best can be the next one of the ip before: drop the repeats */
	for (i = j = 0; i < m; i++)
		if (!j || need[i] != need[j - 1])
			need[j++] = need[i];
	*nneed = j;
	return 0;
}

/* Where the ksyms of the kernel ips come from. */
struct ksyms_where {
	const char *kallsyms;	/* NULL: /proc/kallsyms */
	const char *cache;	/* the cache directory (cache.h) of the per-boot copy; NULL: none */
};

/* The kallsyms text that answers for the n ips (ascending) in *buf (len
 * bytes): the per-boot copy when it is valid and every ip is in the core
 * kernel's text, else the live file (written to the copy when the copy was
 * not valid).  *cached: 1 for the copy. */
static int kallsyms_text(const struct ksyms_where *kw, const uint64_t *ips, size_t n,
			 char **buf, size_t *len, int *cached)
{
	uint64_t lo = 0, hi = 0;
	int err = -ENOENT, valid;

	*cached = 0;
	if (kw->cache)
		err = ksyms_cache__read(kw->cache, kw->kallsyms, buf, len, &lo, &hi);
	if (!err && n && ips[0] >= lo && ips[n - 1] < hi) {
		*cached = 1;
		return 0;
	}
	if (!err)
		free(*buf);
	valid = !err;
	if ((err = read_all(kw->kallsyms ? kw->kallsyms : "/proc/kallsyms", buf, len)) != 0)
		return err;
	/* a copy for the next stops (failing to write one only costs this) */
	if (kw->cache && !valid)
		(void)ksyms_cache__write(kw->cache, *buf, *len);
	return 0;
}

/* The symbols of kallsyms that ksyms__select keeps for the ips, as
 * ksyms__load then ksyms__select would give them (*sel owned by *tab);
 * 0 or -errno as ksyms__load.  *cached: from the per-boot copy. */
static int select_ksyms(const struct ksyms_where *kw, const uint64_t *ips0, size_t n,
			struct ksyms **tab, struct ksym **sel, size_t *nsel, int *cached)
{
	uint64_t *ips = malloc((n ? n : 1) * sizeof(*ips));
	uint64_t *need = malloc(2 * (n ? n : 1) * sizeof(*need));
	struct kline *at = NULL;
	struct klines kl = { 0 };
	struct ksyms *k = NULL;
	size_t len = 0, nneed = 0, nat = 0, i, j;
	char *buf = NULL;
	int err;

	if (!ips || !need) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(ips, ips0, n * sizeof(*ips));
	qsort(ips, n, sizeof(*ips), vec__cmp_u64);
	err = kallsyms_text(kw, ips, n, &buf, &len, cached);
	if (!err)
		err = klines__init(&kl, buf, len);
	if (!err)
		err = needed(&kl, ips, n, need, &nneed);
	if (err)
		goto out;
	/* every line at a needed address (aliases too), in the text's order */
	err = -ENOMEM;
	if (!(at = malloc((kl.n ? kl.n : 1) * sizeof(*at))) || !(k = ksyms__new()))
		goto out;
	err = 0;
	for (i = 0; i < nneed; i++)
		for (j = klines__find(&kl, need[i], 0); j < kl.n && kl.v[j].addr == need[i]; j++)
			at[nat++] = kl.v[j];
	qsort(at, nat, sizeof(*at), kline__cmp_off);
	for (i = 0; i < nat && !err; i++) {
		char *p = buf + at[i].off, *e = strchr(p, '\n');

		if (e)
			*e = 0;	/* the line alone (the next one starts after it) */
		err = add_line(k, p, at[i].addr);
	}
	if (!err)
		err = ksyms__finish(k);
	if (!err)
		err = ksyms__select(k, ips, n, sel, nsel);
out:
	klines__exit(&kl);
	free(at);
	free(buf);
	free(ips);
	free(need);
	if (err) {
		ksyms__delete(k);
		return err;
	}
	*tab = k;
	return 0;
}

/* Write the kernel symbols that resolve every kernel IP seen; see record.h. */
void record__write_ksyms(struct recorder *rc)
{
	struct ksyms_where kw = { NULL, NULL };
	struct ksym *sel = NULL;
	struct ksyms *ks = NULL;
	const uint64_t *ips;
	size_t n = 0, nsel = 0, i;
	int err;

	/* a live view without a capture file has nowhere to write them */
	ips = rc->kips && rc->w ? ksym_ipset__values(rc->kips, &n) : NULL;
	if (!n)
		return;
	kw.cache = cache__dir();
	err = select_ksyms(&kw, ips, n, &ks, &sel, &nsel, &rc->ksyms_cached);
	if (err) {
		if (!rc->o.quiet)
			fprintf(stderr, "ljsnap: kernel symbols unavailable (%s): kernel frames will "
				"show as addresses\n", err == -EPERM ? "/proc/kallsyms hides addresses; "
				"run as root, add CAP_SYSLOG or set kernel.kptr_restrict=0" : strerror(-err));
		return;
	}
	for (i = 0; i < nsel; i += SNAPFILE_KSYMS_PER_REC) {
		err = snapfile_writer__ksyms(rc->w, sel + i, nsel - i < SNAPFILE_KSYMS_PER_REC ?
					     nsel - i : SNAPFILE_KSYMS_PER_REC);
		if (err && !rc->werr)
			rc->werr = err;
	}
	free(sel);
	ksyms__delete(ks);
}
