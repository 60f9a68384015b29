/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * synth.h -- synthetic target memory for the walker's unit tests
 * (test_ljwalk.c, test_ljtrace.c): a byte array that stands at a target
 * address, and LuaJIT objects laid out in it by a layout.  A test's world
 * embeds a `struct synth sm` and writes through the W* macros, which need a
 * `w` pointing at that world.
 */
#ifndef LJSNAP_TEST_SYNTH_H
#define LJSNAP_TEST_SYNTH_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/ljlayout.h"
#include "unwind/memsrc.h"
#include "unwind/sample.h"

struct synth {
	const struct lj_layout *lay;
	uint64_t base;		/* target address of mem[0] */
	uint8_t *mem;
	size_t size, used;
};

/* Start an empty memory of size bytes at mem, standing at address base. */
static inline void synth__init(struct synth *m, const struct lj_layout *lay, uint64_t base,
			       uint8_t *mem, size_t size)
{
	m->lay = lay;
	m->base = base;
	m->mem = mem;
	m->size = size;
	m->used = 0;
}

/* Allocate n bytes (16-aligned); their target address. */
static inline uint64_t synth__alloc(struct synth *m, size_t n)
{
	uint64_t a = m->base + m->used;

	m->used += (n + 15) & ~(size_t)15;
	if (m->used > m->size)
		abort();
	return a;
}

/* Store an n-byte little-endian value at a target address. */
static inline void synth__put(struct synth *m, uint64_t a, uint64_t v, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		m->mem[a - m->base + i] = (uint8_t)(v >> (8 * i));
}
#define W8(a, v) synth__put(&w->sm, (a), (v), 1)
#define W16(a, v) synth__put(&w->sm, (a), (v), 2)
#define W32(a, v) synth__put(&w->sm, (a), (v), 4)
#define W64(a, v) synth__put(&w->sm, (a), (v), 8)
#define WREF(a, v) synth__put(&w->sm, (a), (v), w->sm.lay->ref_size)

/* A GC object of size bytes with type gct. */
static inline uint64_t synth__obj(struct synth *m, size_t size, uint8_t gct)
{
	uint64_t a = synth__alloc(m, size);

	synth__put(m, a + m->lay->ref_size + 1, gct, 1);
	return a;
}

/* A GCstr holding s. */
static inline uint64_t synth__str(struct synth *m, const char *s)
{
	size_t n = strlen(s);
	uint64_t a = synth__obj(m, m->lay->str_size + n + 1, 4);

	synth__put(m, a + m->lay->str_len, n, 4);
	memcpy(&m->mem[a + m->lay->str_size - m->base], s, n + 1);
	return a;
}

/* Append to s a section of kind holding a copy of [addr, addr + len),
 * stored at buf + *off (advanced, 8-aligned). */
static inline void synth__section(const struct synth *m, struct ljs_sample *s, int kind,
				  uint64_t addr, size_t len, uint8_t *buf, size_t *off)
{
	struct ljs_section *sec = &s->sec[s->nsec++];

	sec->kind = (uint16_t)kind;
	sec->addr = addr;
	sec->len = sec->want = (uint32_t)len;
	memcpy(buf + *off, &m->mem[addr - m->base], len);
	sec->data = buf + *off;
	*off += (len + 7) & ~(size_t)7;
}

/* ms reads the whole memory written so far (through win and ws, which
 * must outlive it); next as given. */
static inline void synth__memsrc(const struct synth *m, struct memsrc_window *win,
				 struct memsrc_windows *ws, struct memsrc *ms,
				 const struct memsrc *next)
{
	win->addr = m->base;
	win->len = m->used;
	win->data = m->mem;
	ws->w = win;
	ws->n = 1;
	memsrc__init_windows(ms, ws, next);
}

#endif
