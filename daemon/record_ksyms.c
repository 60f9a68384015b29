/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record_ksyms.c -- the KSYMS records of `ljsnap record`: the kernel
 * symbols that resolve every kernel IP seen, read from /proc/kallsyms.
 *
 * Loading the whole table (ksyms__load: every line parsed, its name copied,
 * 100,000+ entries sorted) took 45 ms of the recorder's CPU at every stop,
 * of which about 22 ms is the kernel formatting the file.  Here the file is
 * read once into memory and only the address of each line is parsed; two
 * passes over those find, for each IP, the greatest symbol address <= it,
 * then the address that follows each of those (the bound ksyms__select
 * keeps too, see symtab/ksyms.h).  Only the lines at those addresses (every
 * alias) go into a small table, and ksyms__select on it picks exactly what
 * it picks from the whole one (31 ms in all).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

/* Index of the first of the n ascending values v[] >= a (n if none). */
static size_t lower_bound(const uint64_t *v, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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

/* The symbol lines of a kallsyms text: address and where the line starts. */
struct klines {
	uint64_t *addr;
	uint32_t *off;
	size_t n, nonzero;
};

/* Parse the address of every symbol line of buf (len bytes); 0 or -ENOMEM. */
static int klines__init(struct klines *kl, char *buf, size_t len)
{
	size_t cap = len / 32 + 16;
	char *p;

	memset(kl, 0, sizeof(*kl));
	kl->addr = malloc(cap * sizeof(*kl->addr));
	kl->off = malloc(cap * sizeof(*kl->off));
	if (!kl->addr || !kl->off)
		return -ENOMEM;
	for (p = buf; p < buf + len && *p; p = next_line(p)) {
		uint64_t a;

		if (!line_addr(p, &a))
			continue;
		if (kl->n == cap) {
			uint64_t *na = realloc(kl->addr, 2 * cap * sizeof(*na));
			uint32_t *no = na ? realloc(kl->off, 2 * cap * sizeof(*no)) : NULL;

			if (na)
				kl->addr = na;
			if (!no)
				return -ENOMEM;
			kl->off = no;
			cap *= 2;
		}
		kl->addr[kl->n] = a;
		kl->off[kl->n++] = (uint32_t)(p - buf);
		kl->nonzero += a != 0;
	}
	return 0;
}

static void klines__exit(struct klines *kl)
{
	free(kl->addr);
	free(kl->off);
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
	uint64_t *best = calloc(n, sizeof(*best)), *nxt = calloc(n, sizeof(*nxt)), a;
	uint8_t *has = calloc(n, 1);
	size_t i, l, g, ng = 0, m = 0;
	int err = 0;

	if (!best || !nxt || !has) {
		err = -ENOMEM;
		goto out;
	}
	if (!kl->n || !kl->nonzero) {
		err = !kl->n ? -ENODATA : -EPERM;
		goto out;
	}
	/* Greatest address <= each ip: kept in the bucket (ips[j-1], ips[j]]. */
	for (l = 0; l < kl->n; l++) {
		a = kl->addr[l];
		i = lower_bound(ips, n, a);
		if (i < n && (!has[i] || a > best[i])) {
			best[i] = a;
			has[i] = 1;
		}
	}
	/* The distinct greatest addresses, ascending (a later bucket's wins). */
	for (i = 0; i < n; i++)
		if (has[i])
			best[ng++] = best[i];
	/* Least address above each: only the last group below it can use it. */
	memset(has, 0, n);
	for (l = 0; ng && l < kl->n; l++) {
		a = kl->addr[l];
		if (a <= best[0])
			continue;
		g = lower_bound(best, ng, a) - 1;
		if (!has[g] || a < nxt[g]) {
			nxt[g] = a;
			has[g] = 1;
		}
	}
	for (g = 0; g < ng; g++) {
		need[m++] = best[g];
		if (has[g])
			need[m++] = nxt[g];
	}
	qsort(need, m, sizeof(*need), vec__cmp_u64);
	*nneed = m;
out:
	free(best);
	free(nxt);
	free(has);
	return err;
}

/* The symbols of kallsyms at path (NULL: /proc/kallsyms) that ksyms__select
 * keeps for the ips, as ksyms__load then ksyms__select would give them
 * (*sel owned by *tab); 0 or -errno as ksyms__load. */
static int select_ksyms(const char *path, const uint64_t *ips0, size_t n, struct ksyms **tab,
			struct ksym **sel, size_t *nsel)
{
	uint64_t *ips = malloc((n ? n : 1) * sizeof(*ips)), *need = malloc(2 * (n ? n : 1) * sizeof(*need));
	struct klines kl = { 0 };
	struct ksyms *k = NULL;
	size_t len = 0, nneed = 0, l, i;
	char *buf = NULL;
	int err;

	err = ips && need ? read_all(path ? path : "/proc/kallsyms", &buf, &len) : -ENOMEM;
	if (!err)
		err = klines__init(&kl, buf, len);
	if (err)
		goto out;
	memcpy(ips, ips0, n * sizeof(*ips));
	qsort(ips, n, sizeof(*ips), vec__cmp_u64);
	err = needed(&kl, ips, n, need, &nneed);
	if (err)
		goto out;
	err = -ENOMEM;
	if (!(k = ksyms__new()))
		goto out;
	err = 0;
	for (l = 0; l < kl.n && !err; l++) {
		char *p = buf + kl.off[l], *e = strchr(p, '\n');

		i = lower_bound(need, nneed, kl.addr[l]);
		if (i == nneed || need[i] != kl.addr[l])
			continue;
		if (e)
			*e = 0;	/* the line alone (the next one starts after it) */
		err = add_line(k, p, kl.addr[l]);
	}
	if (!err)
		err = ksyms__finish(k);
	if (!err)
		err = ksyms__select(k, ips, n, sel, nsel);
out:
	klines__exit(&kl);
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
	struct ksym *sel = NULL;
	struct ksyms *ks = NULL;
	const uint64_t *ips;
	size_t n = 0, nsel = 0, i;
	int err;

	/* a live view without a capture file has nowhere to write them */
	ips = rc->kips && rc->w ? ksym_ipset__values(rc->kips, &n) : NULL;
	if (!n)
		return;
	err = select_ksyms(NULL, ips, n, &ks, &sel, &nsel);
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
