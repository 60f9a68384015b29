/*
 * harvest.c -- the harvest cache between the walker and the live process.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/harvest.h"
#include "daemon/livemem.h"
#include "formats/snapfile.h"

#define HARVEST_MAX_READ	(1u << 20)	/* larger reads are refused */
#define HARVEST_NBUCKETS	4096

struct hv_ent {
	struct hv_ent *next;
	uint32_t pid;
	uint32_t len;
	uint64_t addr;
	uint64_t gen;		/* 1 for the first content seen, +1 per change */
	uint64_t checked_ns;	/* sample time of the last live validation */
	uint8_t data[];
};

struct harvest {
	struct snapfile_writer *w;
	size_t max_bytes, bytes;
	struct hv_ent *b[HARVEST_NBUCKETS];
	struct harvest_stats st;
	int err;
	/* the current sample */
	uint32_t pid;
	uint64_t time_ns;
	struct livemem lm;
	struct memsrc live, src;
	uint8_t *tmp;
};

/* Bucket of a key. */
static struct hv_ent **bucket(struct harvest *h, uint32_t pid, uint64_t addr, uint32_t len)
{
	uint64_t k = (addr * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)pid << 32) ^ len;

	return &h->b[(k >> 32) % HARVEST_NBUCKETS];
}

/* Drop every entry (the size cap was reached, or at the end). */
static void clear_all(struct harvest *h)
{
	size_t i;

	for (i = 0; i < HARVEST_NBUCKETS; i++) {
		while (h->b[i]) {
			struct hv_ent *e = h->b[i];

			h->b[i] = e->next;
			free(e);
		}
	}
	h->bytes = 0;
}

/* Write one generation of a range. */
static void write_gen(struct harvest *h, const struct hv_ent *e)
{
	struct snapfile_memory m = {
		.pid = e->pid, .len = e->len, .addr = e->addr, .data = e->data,
		.first_ns = h->time_ns, .last_ns = h->time_ns, .gen = e->gen,
	};
	int err = snapfile_writer__memory(h->w, &m);

	if (err) {
		if (!h->err)
			h->err = err;
		return;
	}
	h->st.records++;
	h->st.bytes += e->len;
}

/* memsrc read: cache validated at this sample, else live (see harvest.h). */
static int hv_read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len)
{
	struct harvest *h = ms->ctx;
	struct hv_ent **bp, *e;
	int err;

	if (len == 0 || len > HARVEST_MAX_READ)
		return -EINVAL;
	h->st.reads++;
	bp = bucket(h, h->pid, addr, len);
	for (e = *bp; e; e = e->next)
		if (e->pid == h->pid && e->addr == addr && e->len == len)
			break;
	if (e && e->checked_ns == h->time_ns) {
		memcpy(buf, e->data, len);
		return 0;
	}
	h->st.live_reads++;
	err = h->live.read(&h->live, addr, h->tmp, len);
	if (err) {
		h->st.live_faults++;
		if (!e)
			return err;
		h->st.stale_served++;	/* the process is gone: last known bytes */
		memcpy(buf, e->data, len);
		return 0;
	}
	memcpy(buf, h->tmp, len);
	if (e && !memcmp(e->data, h->tmp, len)) {
		e->checked_ns = h->time_ns;
		return 0;
	}
	if (e) {
		/* New content at a known address: a new generation. */
		memcpy(e->data, h->tmp, len);
		e->gen++;
		h->st.generations++;
	} else {
		if (h->bytes + len > h->max_bytes) {
			clear_all(h);
			h->st.evictions++;
			bp = bucket(h, h->pid, addr, len);
		}
		e = malloc(sizeof(*e) + len);
		if (!e)
			return 0;	/* served, just not kept */
		e->pid = h->pid;
		e->addr = addr;
		e->len = len;
		e->gen = 1;
		memcpy(e->data, h->tmp, len);
		e->next = *bp;
		*bp = e;
		h->bytes += len;
	}
	e->checked_ns = h->time_ns;
	write_gen(h, e);
	return 0;
}

/* Create a harvest cache writing MEMORY records to w. */
struct harvest *harvest__new(struct snapfile_writer *w, size_t max_bytes)
{
	struct harvest *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->tmp = malloc(HARVEST_MAX_READ);
	if (!h->tmp) {
		free(h);
		return NULL;
	}
	h->w = w;
	h->max_bytes = max_bytes;
	return h;
}

/* Free the cache. */
void harvest__delete(struct harvest *h)
{
	if (!h)
		return;
	clear_all(h);
	free(h->tmp);
	free(h);
}

/* Memory source for one sample; see harvest.h. */
const struct memsrc *harvest__source(struct harvest *h, uint32_t pid, uint64_t time_ns)
{
	h->pid = pid;
	h->time_ns = time_ns;
	livemem__init(&h->live, &h->lm, (int)pid, NULL);
	h->src.read = hv_read;
	h->src.ctx = h;
	h->src.next = NULL;
	return &h->src;
}

/* Forget a process. */
void harvest__forget(struct harvest *h, uint32_t pid)
{
	size_t i;

	for (i = 0; i < HARVEST_NBUCKETS; i++) {
		struct hv_ent **pp = &h->b[i];

		while (*pp) {
			struct hv_ent *e = *pp;

			if (e->pid == pid) {
				*pp = e->next;
				h->bytes -= e->len;
				free(e);
			} else {
				pp = &e->next;
			}
		}
	}
}

/* First write error. */
int harvest__error(const struct harvest *h)
{
	return h->err;
}

/* Counters. */
const struct harvest_stats *harvest__stats(const struct harvest *h)
{
	return &h->st;
}
