/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memsrc.h -- where the walker's bytes come from.
 *
 * The walker never dereferences a target address itself; it asks a memory
 * source.  Sources are chained: the sample's own windows first, then the
 * capture file's memory table, and (only while recording) the live process.
 * A read either returns every byte asked for or fails; it never returns
 * partial data.  No source in this library makes a syscall: the live source
 * is a callback supplied by the daemon.
 */
#ifndef LJSNAP_MEMSRC_H
#define LJSNAP_MEMSRC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ljs_sample;

/* memcpy for a source's answer: the walker's reads are mostly one word, which
 * a copy of a constant size does without a call. */
static inline void memsrc__copy(void *dst, const void *src, size_t len)
{
	switch (len) {
	case 4: memcpy(dst, src, 4); break;
	case 8: memcpy(dst, src, 8); break;
	case 16: memcpy(dst, src, 16); break;
	default: memcpy(dst, src, len); break;
	}
}

struct memsrc {
	/* Copy len bytes at addr into buf: 0, or negative errno (-EFAULT). */
	int (*read)(const struct memsrc *ms, uint64_t addr, void *buf, size_t len);
	void *ctx;
	const struct memsrc *next;	/* tried when this one fails */
};

/* Read through the chain: the first source that has all bytes wins. */
int memsrc__read(const struct memsrc *ms, uint64_t addr, void *buf, size_t len);

/* Sized helpers (little endian, as on x86_64). */
int memsrc__u8(const struct memsrc *ms, uint64_t addr, uint8_t *v);
int memsrc__u16(const struct memsrc *ms, uint64_t addr, uint16_t *v);
int memsrc__u32(const struct memsrc *ms, uint64_t addr, uint32_t *v);
int memsrc__u64(const struct memsrc *ms, uint64_t addr, uint64_t *v);

/* A source over the byte windows of one sample (every section with addr). */
void memsrc__init_sample(struct memsrc *ms, const struct ljs_sample *s,
			 const struct memsrc *next);

/* The same source as memsrc__init_sample, for a sample read many times: the
 * sections that can answer are listed once, at init (ms is the source to
 * use; the struct must outlive it). */
#define MEMSRC_SAMPLE_MAX_WINS	32	/* LJS_SAMPLE_MAX_SECS */
struct memsrc_sample {
	struct memsrc ms;
	const struct ljs_sample *s;
	size_t n;
	int sorted;		/* w[] by address: no two windows overlap */
	size_t last;		/* sorted: the window that answered last */
	struct memsrc_window_ {
		uint64_t addr, len;
		const uint8_t *data;
	} w[MEMSRC_SAMPLE_MAX_WINS];
};
void memsrc__init_sample_list(struct memsrc_sample *m, const struct ljs_sample *s,
			      const struct memsrc *next);

/* A source over a flat list of windows (for tests and the memory table). */
struct memsrc_window {
	uint64_t addr;
	size_t len;
	const uint8_t *data;
};
struct memsrc_windows {
	const struct memsrc_window *w;
	size_t n;
};
void memsrc__init_windows(struct memsrc *ms, const struct memsrc_windows *ws,
			  const struct memsrc *next);

#endif /* LJSNAP_MEMSRC_H */
