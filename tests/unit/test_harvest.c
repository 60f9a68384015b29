/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_harvest.c -- the recorder's harvest cache, end to end: reads of this
 * process's own memory through harvest__source (process_vm_readv on
 * itself), MEMORY records written to a capture file, read back into a
 * memtable, and looked up as report does.
 *
 * Ground truth: the bytes this test put in its own buffer at each step.
 * The scenario is the one seen in a real capture (tests/e2e/report_gen.sh):
 * a function header read whole at every sample, one byte of it read alone
 * once while the GC had freed the object (garbage), the header confirmed
 * unchanged afterwards.  report must then answer the header with the
 * confirmed bytes, not refuse it because of the lone stale byte.  And a
 * walk that trails its sample (the recorder fell behind) stamps what it
 * saw from the time it saw it when the old bytes were seen after its
 * sample, so the samples in between keep the old bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/capture/harvest.h"
#include "formats/capture/snapfile.h"
#include "unwind/detect/livemem.h"
#include "unwind/memtable.h"
#include "tests/unit/check.h"

int failures, checks;

static uint8_t obj[48] __attribute__((aligned(64)));	/* the "function header" */

/* One walk's read, for the sample taken at t, done at time now; 0 or
 * -errno. */
static int walk_read_at(struct harvest *h, uint64_t t, uint64_t now, const void *addr,
			size_t len, void *out)
{
	static struct livemem lm;
	static struct memsrc live;
	const struct memsrc *ms;

	livemem__init(&live, &lm, (int)getpid(), NULL);
	ms = harvest__source(h, (uint32_t)getpid(), t, now, &live);

	return ms->read(ms, (uint64_t)(uintptr_t)addr, out, len);
}

/* The same, done right when the sample was taken. */
static int walk_read(struct harvest *h, uint64_t t, const void *addr, size_t len, void *out)
{
	return walk_read_at(h, t, t, addr, len, out);
}

/* Load every MEMORY record of path into a new memtable. */
static struct memtable *load(const char *path)
{
	struct snapfile_reader *r;
	struct snapfile_rec rec;
	struct memtable *t = memtable__new();
	int err;

	r = snapfile_reader__open(path, &err);
	CHECK(r != NULL);
	if (!r || !t)
		return t;
	while (snapfile_reader__next(r, &rec) > 0) {
		struct memtable_entry e = {
			.pid = rec.mem.pid, .len = rec.mem.len, .addr = rec.mem.addr,
			.data = rec.mem.data, .first_ns = rec.mem.first_ns,
			.last_ns = rec.mem.last_ns, .gen = rec.mem.gen,
		};

		if (rec.kind == SNAPFILE_REC_MEMORY)
			CHECK(memtable__add(t, &e) >= 0);
	}
	snapfile_reader__close(r);
	return t;
}

/* The byte at offset off of the header as report reads it at time t (the
 * whole header), or -1 when the table refuses the read. */
static int header_byte(struct memtable *t, uint64_t time, size_t off)
{
	const struct memtable_entry *e = memtable__lookup(t, (uint32_t)getpid(),
							  (uint64_t)(uintptr_t)obj, sizeof(obj), time);

	return e ? e->data[(uint64_t)(uintptr_t)obj - e->addr + off] : -1;
}

/* Forgetting a process and the size cap both drop what was cached: the
 * next read of a dropped range is a first sighting again (a new record,
 * no new generation), while ranges still cached are only confirmed. */
static void test_forget_evict(void)
{
	char path[] = "/tmp/test_harvest_evict.XXXXXX";
	struct snapfile_header hdr = { .target = "test_harvest" };
	static uint8_t a[48], b[48], c[16];
	const struct harvest_stats *st;
	struct snapfile_writer *w;
	struct harvest *h;
	uint8_t buf[64];
	int fd = mkstemp(path), err;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	w = snapfile_writer__open(path, &hdr, &err);
	h = w ? harvest__new(w, 110) : NULL;	/* room for 48 + 48 + 8 bytes, not + 16 */
	CHECK(h != NULL);
	if (!h)
		goto out;
	st = harvest__stats(h);
	memset(a, 1, sizeof(a));
	memset(b, 2, sizeof(b));
	memset(c, 3, sizeof(c));
	CHECK(walk_read(h, 10, a, sizeof(a), buf) == 0 && buf[0] == 1);
	CHECK(walk_read(h, 20, b, sizeof(b), buf) == 0 && buf[0] == 2);
	CHECK(walk_read(h, 20, b, 8, buf) == 0);	/* same address, other length */
	CHECK(st->records == 3 && st->evictions == 0);
	CHECK(walk_read(h, 30, a, sizeof(a), buf) == 0 && walk_read(h, 30, b, 8, buf) == 0);
	CHECK(st->records == 3);			/* confirmed: nothing new */
	harvest__forget(h, (uint32_t)getpid());
	harvest__forget(h, (uint32_t)getpid() + 1);	/* never seen: nothing happens */
	CHECK(walk_read(h, 40, a, sizeof(a), buf) == 0 && buf[0] == 1);
	CHECK(st->records == 4 && st->generations == 0);
	CHECK(walk_read(h, 50, b, sizeof(b), buf) == 0);
	CHECK(st->records == 5 && st->evictions == 0);
	/* Over the cap: everything goes, then c is kept alone. */
	CHECK(walk_read(h, 60, c, sizeof(c), buf) == 0 && buf[0] == 3);
	CHECK(st->records == 6 && st->evictions == 1);
	CHECK(walk_read(h, 70, c, sizeof(c), buf) == 0 && st->records == 6);
	CHECK(walk_read(h, 70, a, sizeof(a), buf) == 0 && st->records == 7);
	CHECK(st->generations == 0 && harvest__error(h) == 0);
	harvest__delete(h);
out:
	if (w)
		CHECK(snapfile_writer__close(w) == 0);
	unlink(path);
}

/* harvest_readv_fn over this process's memory: a range whose first byte is
 * in unreadable (the test's "unmapped") fails, as process_vm_readv would. */
static const uint8_t *unreadable;
static void self_readv(void *ctx, struct harvest_range *r, size_t n)
{
	size_t i;

	(void)ctx;
	for (i = 0; i < n; i++) {
		if ((const uint8_t *)(uintptr_t)r[i].addr == unreadable)
			continue;
		memcpy(r[i].buf, (const void *)(uintptr_t)r[i].addr, r[i].len);
		r[i].ok = 1;
	}
}

/* Prefetch: the ranges of the last walk validated in one batch, as the walk
 * would; the walk then reads live only what is new. */
static void test_prefetch(void)
{
	char path[] = "/tmp/test_harvest_pf.XXXXXX";
	struct snapfile_header hdr = { .target = "test_harvest" };
	static uint8_t a[48], b[16], c[8];
	const struct harvest_stats *st;
	struct snapfile_writer *w;
	struct livemem lm;
	struct memsrc live;
	struct harvest *h;
	struct memtable *t;
	uint8_t buf[64];
	uint64_t n;
	int fd = mkstemp(path), err;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	w = snapfile_writer__open(path, &hdr, &err);
	h = w ? harvest__new(w, 1 << 20) : NULL;
	CHECK(h != NULL);
	if (!h)
		goto out;
	st = harvest__stats(h);
	livemem__init(&live, &lm, (int)getpid(), NULL);
	memset(a, 1, sizeof(a));
	memset(b, 2, sizeof(b));
	memset(c, 3, sizeof(c));
	/* Nothing walked yet: nothing to prefetch. */
	harvest__source(h, (uint32_t)getpid(), 10, 10, &live);
	harvest__prefetch(h, self_readv, NULL);
	CHECK(st->prefetch_calls == 0);
	CHECK(walk_read(h, 10, a, sizeof(a), buf) == 0 && walk_read(h, 10, b, sizeof(b), buf) == 0);
	CHECK(st->live_reads == 2 && st->records == 2);
	/* t=20: a changed, b did not; both validated by the prefetch. */
	a[0] = 9;
	harvest__source(h, (uint32_t)getpid(), 20, 20, &live);
	harvest__prefetch(h, self_readv, NULL);
	CHECK(st->prefetch_calls == 1 && st->prefetched == 2);
	CHECK(st->generations == 1 && st->records == 3);
	CHECK(walk_read(h, 20, a, sizeof(a), buf) == 0 && buf[0] == 9);
	CHECK(walk_read(h, 20, c, sizeof(c), buf) == 0 && buf[0] == 3);
	CHECK(st->live_reads == 3);		/* only c, new */
	/* t=30: the last walk read a and c; b, read by the one before, is still
	 * prefetched (unchanged: confirmed); c cannot be read now. */
	unreadable = c;
	harvest__source(h, (uint32_t)getpid(), 30, 30, &live);
	harvest__prefetch(h, self_readv, NULL);
	CHECK(st->prefetched == 4);		/* a and b */
	CHECK(walk_read(h, 30, c, sizeof(c), buf) == 0 && buf[0] == 3);
	CHECK(st->live_reads == 4);		/* c, read live by the walk */
	CHECK(walk_read(h, 30, b, sizeof(b), buf) == 0 && st->live_reads == 4);
	/* t=40: a, not read by the last walk, changed: left to a walk that
	 * reads it, which makes the new generation. */
	unreadable = NULL;
	a[0] = 7;
	harvest__source(h, (uint32_t)getpid(), 40, 40, &live);
	harvest__prefetch(h, self_readv, NULL);
	CHECK(st->prefetched == 7 && st->generations == 1);
	CHECK(walk_read(h, 40, a, sizeof(a), buf) == 0 && buf[0] == 7);
	CHECK(st->live_reads == 5 && st->generations == 2);
	/* A quarter second later nothing is prefetched any more. */
	harvest__source(h, (uint32_t)getpid(), 40 + 300000000, 40 + 300000000, &live);
	n = st->prefetch_calls;
	harvest__prefetch(h, self_readv, NULL);
	CHECK(st->prefetch_calls == n);
	CHECK(harvest__error(h) == 0);
	harvest__delete(h);
	h = NULL;
	CHECK(snapfile_writer__close(w) == 0);
	w = NULL;
	/* report sees a's two generations at their times. */
	t = load(path);
	CHECK(t != NULL);
	if (t) {
		const struct memtable_entry *e1 = memtable__lookup(t, (uint32_t)getpid(),
								   (uint64_t)(uintptr_t)a, sizeof(a), 15);
		const struct memtable_entry *e2 = memtable__lookup(t, (uint32_t)getpid(),
								   (uint64_t)(uintptr_t)a, sizeof(a), 25);

		const struct memtable_entry *e3 = memtable__lookup(t, (uint32_t)getpid(),
								   (uint64_t)(uintptr_t)a, sizeof(a), 45);

		CHECK(e1 && e1->data[0] == 1);
		CHECK(e2 && e2->data[0] == 9);
		CHECK(e3 && e3->data[0] == 7);
		memtable__delete(t);
	}
out:
	harvest__delete(h);
	if (w)
		CHECK(snapfile_writer__close(w) == 0);
	unlink(path);
}

int main(void)
{
	char path[] = "/tmp/test_harvest.XXXXXX";
	struct snapfile_header hdr = { .target = "test_harvest" };
	const struct harvest_stats *st;
	struct snapfile_writer *w;
	struct harvest *h;
	struct memtable *t;
	uint8_t buf[64];
	int fd, err;

	fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	w = snapfile_writer__open(path, &hdr, &err);
	h = w ? harvest__new(w, 1 << 20) : NULL;
	if (!h) {
		fprintf(stderr, "cannot set up the harvest (%d)\n", err);
		unlink(path);
		return 1;
	}
	st = harvest__stats(h);
	memset(obj, 0x11, sizeof(obj));
	obj[9] = 0x08;				/* gct: a function */

	/* t=100: the walk reads the header: first generation. */
	CHECK(walk_read(h, 100, obj, sizeof(obj), buf) == 0 && buf[9] == 0x08);
	/* t=200: the GC freed it for a moment; a lone read of its gct byte. */
	obj[9] = 0xb4;
	CHECK(walk_read(h, 200, obj + 9, 1, buf) == 0 && buf[0] == 0xb4);
	obj[9] = 0x08;
	/* t=300: the header, confirmed unchanged: written again. */
	CHECK(walk_read(h, 300, obj, sizeof(obj), buf) == 0 && buf[9] == 0x08);
	CHECK(st->reconfirmed == 1);
	/* t=400: confirmed again: nothing new to write. */
	CHECK(walk_read(h, 400, obj, sizeof(obj), buf) == 0);
	CHECK(st->reconfirmed == 1);
	/* t=500: an overlapping read that agrees with the header: no rewrite. */
	CHECK(walk_read(h, 500, obj + 16, 8, buf) == 0);
	CHECK(walk_read(h, 600, obj, sizeof(obj), buf) == 0);
	CHECK(st->reconfirmed == 1);
	/* t=700: the header really changes: a second generation. */
	memset(obj, 0x22, sizeof(obj));
	obj[9] = 0x08;
	CHECK(walk_read(h, 700, obj, sizeof(obj), buf) == 0 && buf[0] == 0x22);
	CHECK(st->generations == 1);
	/* The recorder falls behind: the sample of t=800 is walked at 1000, and
	 * the one of t=750 after it, at 1100.  The object was freed in between:
	 * the old bytes were seen at 1000, after 750 was taken, so the sample
	 * of 750 used those, and the new bytes are valid from 1100 only. */
	CHECK(walk_read_at(h, 800, 1000, obj, sizeof(obj), buf) == 0);
	obj[0] = 0x33;
	CHECK(walk_read_at(h, 750, 1100, obj, sizeof(obj), buf) == 0 && buf[0] == 0x33);
	CHECK(st->generations == 2 && st->late_changes == 1);
	/* A change first seen by a walk that trails its sample, after the old
	 * bytes were last seen before that sample was taken: from the sample. */
	obj[0] = 0x44;
	CHECK(walk_read_at(h, 1500, 1700, obj, sizeof(obj), buf) == 0 && buf[0] == 0x44);
	CHECK(st->generations == 3 && st->late_changes == 1);
	CHECK(harvest__error(h) == 0);
	harvest__delete(h);
	CHECK(snapfile_writer__close(w) == 0);

	t = load(path);
	CHECK(t != NULL);
	if (t) {
		const struct memtable_entry *e;

		CHECK(header_byte(t, 100, 9) == 0x08);
		CHECK(header_byte(t, 150, 0) == 0x11);
		/* Between the lone byte and the confirmation, both are in the file
		 * and disagree: report refuses rather than guesses. */
		CHECK(header_byte(t, 250, 9) == -1);
		e = memtable__lookup(t, (uint32_t)getpid(), (uint64_t)(uintptr_t)obj + 9, 1, 250);
		CHECK(e && e->data[0] == 0xb4);
		/* From the confirmation on, the header again. */
		CHECK(header_byte(t, 300, 9) == 0x08);
		CHECK(header_byte(t, 450, 9) == 0x08);
		CHECK(header_byte(t, 650, 0) == 0x11);
		CHECK(header_byte(t, 700, 0) == 0x22);
		CHECK(header_byte(t, 900, 0) == 0x22);	/* still the second generation */
		CHECK(header_byte(t, 1099, 0) == 0x22);
		CHECK(header_byte(t, 1100, 0) == 0x33);
		CHECK(header_byte(t, 1499, 0) == 0x33);
		CHECK(header_byte(t, 1500, 0) == 0x44);
		memtable__delete(t);
	}
	unlink(path);
	test_forget_evict();
	test_prefetch();
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
