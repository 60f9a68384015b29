/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mkseed_lj.c -- seeds for fuzz_ljwalk and fuzz_ljtrace from a real capture:
 * every step-th LuaJIT sample, walked once over the capture's memory table
 * through a source that notes which entries the walk reads; the seed is
 * the sample, its process's layout (as a built-in table plus the fields
 * that differ) and those entries, in the format of fuzz_lj.h.  Samples
 * with a GCtrace header section also go to the trace corpus.
 *   mkseed_lj CAPTURE WALKDIR TRACEDIR MAXSEEDS
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/capture/snapfile.h"
#include "tests/fuzz/fuzz_lj.h"
#include "unwind/ljwalk.h"

#define MAXP 256
#define MAXUSED 4096
#define SEED_MAX (512u * 1024)

struct proc { uint32_t pid; struct snapfile_process p; struct lj_layout lay; };

struct rec_src {
	struct memsrc ms;
	struct memtable *t;
	uint32_t pid;
	uint64_t time_ns;
	const struct memtable_entry *used[MAXUSED];
	size_t nused;
};

static int rec_read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	struct rec_src *r = (struct rec_src *)ms;
	const struct memtable_entry *e = memtable__lookup(r->t, r->pid, addr, len, r->time_ns);
	size_t i;

	if (!e)
		return -EFAULT;
	for (i = 0; i < r->nused && r->used[i] != e; i++)
		;
	if (i == r->nused && r->nused < MAXUSED)
		r->used[r->nused++] = e;
	memcpy(buf, e->data + (addr - e->addr), len);
	return 0;
}

static void put(FILE *f, uint64_t v, unsigned bytes)
{
	unsigned i;

	for (i = 0; i < bytes; i++)
		fputc((int)(v >> (8 * i)) & 0xff, f);
}

static void put_win(FILE *f, unsigned kind, unsigned status, uint32_t aux, uint64_t addr,
		    uint32_t len, const uint8_t *data)
{
	put(f, kind, 2);
	put(f, status, 2);
	put(f, aux, 4);
	put(f, addr, 8);
	put(f, len, 4);
	fwrite(data, 1, len, f);
}

static void emit(const char *path, const struct proc *p, const struct ljs_sample *s,
		 const struct rec_src *rs)
{
	const struct lj_layout *b = lj_layout__builtin((enum lj_family)p->lay.family,
						       !!(p->lay.flags & LJ_LAYOUT_F_GC64));
	const uint64_t *regs = (const uint64_t *)&s->regs;
	unsigned i, ndiff = 0;
	FILE *f;

	if (!b)
		b = lj_layout__builtin(LJ_FAMILY_UPSTREAM, 1);
	f = fopen(path, "wb");
	if (!f)
		return;
	for (i = 0; i < lj_layout__nfields && ndiff < 255; i++)
		ndiff += memcmp((const char *)b + lj_layout__fields[i].offset,
				(const char *)&p->lay + lj_layout__fields[i].offset, 4) != 0;
	put(f, (b->family - 1) | ((b->flags & LJ_LAYOUT_F_GC64) ? 0x80 : 0), 1);
	put(f, ndiff, 1);
	for (i = 0; i < lj_layout__nfields && ndiff; i++) {
		uint32_t v;

		memcpy(&v, (const char *)&p->lay + lj_layout__fields[i].offset, 4);
		if (memcmp((const char *)b + lj_layout__fields[i].offset, &v, 4)) {
			put(f, i, 1);
			put(f, v, 4);
			ndiff--;
		}
	}
	for (i = 0; i < sizeof(s->regs) / 8; i++)
		put(f, regs[i], 8);
	put(f, s->g, 8);
	put(f, s->flags, 4);
	put(f, s->time_ns, 8);
	put(f, p->p.vm_lo, 8);
	put(f, p->p.vm_hi, 8);
	put(f, 0, 1);
	for (i = 0; i < s->nsec; i++)
		put_win(f, s->sec[i].kind, s->sec[i].status, s->sec[i].aux, s->sec[i].addr,
			s->sec[i].len, s->sec[i].data);
	for (i = 0; i < rs->nused; i++)
		put_win(f, FZ_MEM_KIND + (unsigned)(rs->used[i]->gen & 0xff), 0, 0,
			rs->used[i]->addr, rs->used[i]->len, rs->used[i]->data);
	fclose(f);
}

int main(int argc, char **argv)
{
	static struct proc procs[MAXP];
	static struct rec_src rs;
	struct snapfile_reader *r;
	struct snapfile_rec rec;
	struct memtable *t = memtable__new();
	struct ljw *w = ljw__new();
	const char *base;
	size_t np = 0, nsamples = 0, nw = 0, nt = 0, max, i;
	char path[4096];
	int err, rc;

	if (argc != 5 || !t || !w)
		return fprintf(stderr, "usage: mkseed_lj CAPTURE WALKDIR TRACEDIR MAXSEEDS\n"), 2;
	max = strtoul(argv[4], NULL, 0);
	base = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
	/* Pass 1: processes and memory (the table must be whole before walking). */
	if (!(r = snapfile_reader__open(argv[1], &err)))
		return fprintf(stderr, "mkseed_lj: %s: %s\n", argv[1], snapfile__strerror(err)), 1;
	while ((rc = snapfile_reader__next(r, &rec)) != 0) {
		if (rc < 0)
			continue;
		if (rec.kind == SNAPFILE_REC_PROCESS && rec.proc.has_luajit && np < MAXP) {
			procs[np].pid = rec.proc.pid;
			procs[np].lay = rec.proc.layout;
			procs[np].p.vm_lo = rec.proc.vm_lo;
			procs[np++].p.vm_hi = rec.proc.vm_hi;
		} else if (rec.kind == SNAPFILE_REC_MEMORY) {
			struct memtable_entry e = {
				.pid = rec.mem.pid, .len = rec.mem.len, .addr = rec.mem.addr,
				.data = rec.mem.data, .first_ns = rec.mem.first_ns,
				.last_ns = rec.mem.last_ns, .gen = rec.mem.gen,
			};

			(void)memtable__add(t, &e);
		} else if (rec.kind == SNAPFILE_REC_SAMPLE) {
			nsamples++;
		}
	}
	snapfile_reader__close(r);
	/* Pass 2: every step-th LuaJIT sample of a known process. */
	if (!(r = snapfile_reader__open(argv[1], &err)))
		return 1;
	i = 0;
	while ((rc = snapfile_reader__next(r, &rec)) != 0 && nw < max) {
		const struct ljs_sample *s = &rec.sample;
		struct ljw_opts o = { 0 };
		struct ljw_stack st;
		struct memsrc sm;
		size_t k, bytes = 0;

		if (rc < 0 || rec.kind != SNAPFILE_REC_SAMPLE || !(s->flags & LJS_SAMPLE_F_LUAJIT) ||
		    i++ % (nsamples / max + 1))
			continue;
		for (k = 0; k < np && procs[k].pid != s->pid; k++)
			;
		if (k == np)
			continue;
		memset(&rs, 0, sizeof(rs));
		rs.ms.read = rec_read;
		rs.t = t;
		rs.pid = s->pid;
		rs.time_ns = s->time_ns;
		memsrc__init_sample(&sm, s, &rs.ms);
		o.vm_lo = procs[k].p.vm_lo;
		o.vm_hi = procs[k].p.vm_hi;
		(void)ljw__walk(w, &procs[k].lay, s, &sm, &o, &st);
		for (size_t u = 0; u < rs.nused; u++)
			bytes += rs.used[u]->len;
		if (bytes > SEED_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/%s-%zu", argv[2], base, nw++);
		emit(path, &procs[k], s, &rs);
		if (ljs_sample__section(s, LJS_SEC_TRACE, -1)) {
			snprintf(path, sizeof(path), "%s/%s-%zu", argv[3], base, nt++);
			emit(path, &procs[k], s, &rs);
		}
	}
	snapfile_reader__close(r);
	ljw__delete(w);
	memtable__delete(t);
	printf("%s: %zu walker seeds, %zu trace seeds\n", base, nw, nt);
	return 0;
}
