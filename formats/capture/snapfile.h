/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapfile.h -- the capture file: writer and reader.
 *
 * `ljsnap record` writes, `ljsnap report` and `ljsnap info` read, one file:
 *
 *   magic (8 bytes: 89 'L' 'J' 'S' 0d 0a 1a 0a)
 *   header frame      frame = u32 LE payload length, u32 LE crc32(payload), payload
 *   format 2: (summary, chunk)*   each chunk a zstd frame of records
 *                                 (u32 LE payload length, payload)
 *   format 1: frame*
 *
 * Each payload is one msgpack array [kind, ...].  The first frame is always
 * the HEADER.  The byte-level format, every record kind and the versioning,
 * truncation and corruption rules are in docs/capture-format.md.  The
 * writer writes format 2 (format 1 on request); the reader reads both.
 *
 * The file holds raw process memory, so the writer creates it with mode
 * 0600.  A file cut off at any byte reads back up to its last complete
 * record; a corrupt frame is reported with its offset and skipped.
 */
#ifndef LJSNAP_SNAPFILE_H
#define LJSNAP_SNAPFILE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include "symtab/ksyms.h"
#include "symtab/procmap.h"
#include "unwind/ljlayout.h"
#include "unwind/sample.h"

/* -- Format constants ---------------------------------------------------- */

/* PNG-style: the high byte catches 7-bit channels, CR LF catches newline
 * conversion either way, ^Z stops a DOS `type`, the final LF catches LF->CRLF. */
#define SNAPFILE_MAGIC		"\x89LJS\r\n\x1a\n"
#define SNAPFILE_MAGIC_LEN	8

#define SNAPFILE_MAJOR		3	/* bumped by a change old readers cannot read */
#define SNAPFILE_MINOR		1	/* bumped by additions old readers may ignore:
					 * 1 added PROCESS lj "vm_exit" */

#define SNAPFILE_FRAME_HDR	8	/* u32 length + u32 crc32 (format 1; a format 2 header) */
#define SNAPFILE_REC_HDR	4	/* u32 length: a record inside a format 2 chunk */
#define SNAPFILE_FRAME_MAX	(64u << 20)	/* largest payload accepted or written */
#define SNAPFILE_FLUSH_BYTES	(1u << 20)	/* format 1 writer flushes when its buffer exceeds this */
#define SNAPFILE_CHUNK_BYTES	(4u << 20)	/* format 2: records per zstd frame, uncompressed */
#define SNAPFILE_CHUNK_MAX	(2 * SNAPFILE_FRAME_MAX)	/* largest chunk a reader accepts */
#define SNAPFILE_ZSTD_LEVEL	3	/* format 2 writer's compression level */
#define SNAPFILE_SUMMARY_MAGIC	0x184D2A51u	/* format 2: a zstd skippable frame that sums up the next chunk */
#define SNAPFILE_SUMMARY_LEN	8	/* its content: u32 kinds mask, u32 records */
#define SNAPFILE_KSYMS_PER_REC	16384	/* kernel symbols per KSYMS record */

enum snapfile_kind {
	SNAPFILE_REC_HEADER = 1,
	SNAPFILE_REC_PROCESS = 2,
	SNAPFILE_REC_SAMPLE = 3,
	SNAPFILE_REC_MEMORY = 4,
	SNAPFILE_REC_KSYMS = 5,
	SNAPFILE_REC_STATS = 6,
	SNAPFILE_REC_END = 7,
	SNAPFILE_REC_OBJECT = 8,
	SNAPFILE_REC_EMBED = 9,
	SNAPFILE_REC__MAX,
	/* Not a kind of the file: a sample passed over with only its head read
	 * (snapfile_reader__sample_heads). */
	SNAPFILE_REC_SAMPLE_HEAD = 32
};

/* The first fields of a SAMPLE record. */
struct snapfile_sample_head {
	uint64_t time_ns;
	uint32_t pid, tid;
};

/* Header feature flags (informational: a reader ignores bits it does not
 * know; an incompatible change bumps the major version instead). */
#define SNAPFILE_F_MEMORY	0x1ull	/* memory was harvested while recording */
#define SNAPFILE_F_KSYMS	0x2ull	/* kernel symbols are included */
#define SNAPFILE_F_TASK_EVENTS	0x4ull	/* fork/exec/exit were tracked */
#define SNAPFILE_F_SYSTEM_WIDE	0x8ull	/* recorded with -a */

/* Reader errors beyond plain I/O errno values (see snapfile__strerror). */
#define SNAPFILE_E_NOTCAPTURE	(-ENOEXEC)		/* no magic: not a capture file */
#define SNAPFILE_E_NEWER	(-EPROTONOSUPPORT)	/* newer major version */
#define SNAPFILE_E_TRUNCHDR	(-ENODATA)		/* file ends inside magic/header */
#define SNAPFILE_E_CORRUPT	(-EBADMSG)		/* crc mismatch or bad payload */

/* -- Decoded records (also the writer's input) ---------------------------- */

/* HEADER.  Strings are never NULL when read back ("" when absent). */
struct snapfile_header {
	uint32_t major, minor;		/* set by the writer; read back by the reader */
	const char *ljsnap_version;	/* writer: NULL = this build's version */
	const char *host;		/* writer: NULL = uname nodename */
	const char *kernel;		/* writer: NULL = uname release */
	const char *arch;		/* writer: NULL = uname machine */
	uint64_t mono_ns;		/* CLOCK_MONOTONIC and CLOCK_REALTIME taken at */
	uint64_t real_ns;		/* the same moment; writer: both 0 = take now */
	uint32_t freq_hz;		/* record options */
	uint32_t stack_bytes;
	uint32_t lstack_bytes;
	const char *target;		/* "-p 123", "-a", or the command line */
	uint64_t features;		/* SNAPFILE_F_* */
};

/* PROCESS.  A record with exited_ns != 0 is an exit note: it may carry only
 * pid (and comm); the rest reads as 0/"" and must not replace what an
 * earlier record said about the process. */
struct snapfile_process {
	uint32_t pid, ppid;
	char comm[LJS_COMM_LEN];
	const char *exe;
	const char *cmdline;		/* arguments separated by spaces */
	uint64_t start_ns;		/* process start, ns since boot */
	uint64_t exited_ns;		/* exit time (sample clock), 0 = alive */
	uint32_t image;			/* 0, +1 at each exec (or reuse of the pid) seen */
	uint32_t nmaps;
	const struct procmap_desc *maps;
	/* LuaJIT, when has_luajit */
	int has_luajit;
	struct lj_layout layout;	/* layout fields missing from the file read as 0 */
	const char *lj_build;		/* build description ("LuaJIT 2.1 GC64 ...") */
	uint32_t nprov;
	const char *const *prov;	/* how each offset was obtained */
	uint64_t vm_lo, vm_hi;		/* interpreter code range [lo, hi) */
	uint64_t g;			/* global_State address if known, else 0 */
	uint64_t vm_exit;		/* the trace exit handler's return address from
					 * lj_trace_exit, 0 if unknown (absent) */
};

/* MEMORY: bytes read from pid at addr, valid at least over
 * [first_ns, last_ns]; gen tells apart different objects that occupied the
 * same address (e.g. a GCproto freed and a new one allocated there). */
struct snapfile_memory {
	uint32_t pid;
	uint32_t len;
	uint64_t addr;
	const uint8_t *data;
	uint64_t first_ns, last_ns;
	uint64_t gen;
};

/* KSYMS records accumulate: the table is the union of all of them. */
struct snapfile_ksyms {
	uint32_t n;
	const struct ksym *syms;
};

/* OBJECT: an ELF image that exists only in memory (the vDSO), for the
 * mappings whose path is `path`; comes before the PROCESS records that map
 * it. */
struct snapfile_object {
	const char *path;		/* "[vdso]" */
	const uint8_t *build_id;
	uint32_t build_id_len;
	const uint8_t *data;
	uint32_t len;
};

/* EMBED: what report needs from one mapped ELF file (symtab/elfcopy.h),
 * once per build id; comes before the first PROCESS record that maps it.
 * extents: (offset, length) u64 little-endian pairs, by offset; data: one
 * zstd frame of the extents' bytes (raw_len of them), in that order;
 * names: what symtab/funcs.h recovered from the file (funcs__save). */
struct snapfile_embed {
	const char *path;		/* where the recorder read it (informational) */
	const uint8_t *build_id;
	uint32_t build_id_len;
	uint64_t size;			/* the file's size */
	uint32_t what;			/* ELFCOPY_* bits: 1 unwind, 2 symbols, 4 debug info */
	const uint8_t *extents;
	uint32_t extents_len;		/* 16 bytes per extent */
	uint64_t raw_len;
	const uint8_t *data;
	uint32_t len;
	const uint8_t *names;		/* names of LuaJIT's functions (symtab/funcs.h) */
	uint32_t names_len;		/* 0: none (or an older capture) */
};

/* STATS: totals since the start of the recording; the last record wins. */
struct snapfile_stat {
	const char *name;
	uint64_t value;
};

struct snapfile_stats {
	uint32_t n;
	const struct snapfile_stat *v;
};

/* END: written by a clean close; records = frames before it (header included). */
struct snapfile_end {
	uint64_t records;
};

/* One record returned by snapfile_reader__next.  Every pointer in it (section
 * data, strings, arrays) points into memory owned by the reader and stays
 * valid only until the next call to snapfile_reader__next or __close. */
struct snapfile_rec {
	enum snapfile_kind kind;
	uint32_t size;			/* payload bytes */
	uint64_t offset;		/* format 1: file offset of the frame; format 2: offset
					 * of the record in the uncompressed stream */
	union {
		struct ljs_sample sample;
		struct snapfile_process proc;
		struct snapfile_memory mem;
		struct snapfile_ksyms ksyms;
		struct snapfile_object object;
		struct snapfile_embed embed;
		struct snapfile_stats stats;
		struct snapfile_end end;
		struct snapfile_sample_head head;	/* SNAPFILE_REC_SAMPLE_HEAD */
	};
};

/* -- Writer ---------------------------------------------------------------- */

struct snapfile_writer;

/* Create (or truncate) path with mode 0600, write magic and header, flush.
 * NULL on error with *err = negative errno.  Writes format SNAPFILE_MAJOR. */
struct snapfile_writer *snapfile_writer__open(const char *path, const struct snapfile_header *h,
					      int *err);

/* How __open_opts writes; 0 in a field means its default. */
struct snapfile_writer_opts {
	uint32_t major;			/* 1 (uncompressed, for tests), 2 (compressed) or 3
					 * (SNAPFILE_MAJOR: with stack references) */
	int level;			/* zstd level (SNAPFILE_ZSTD_LEVEL) */
	uint32_t chunk_bytes;		/* format 2: chunk size (SNAPFILE_CHUNK_BYTES) */
};

/* __open with options (NULL: the defaults).  -EINVAL for an unknown major. */
struct snapfile_writer *snapfile_writer__open_opts(const char *path, const struct snapfile_header *h,
						   const struct snapfile_writer_opts *o, int *err);

/* Append one record.  0 or negative errno.  An I/O or allocation error is
 * sticky: every later call (and __close) returns it.  -EINVAL (bad input)
 * and -E2BIG (record over SNAPFILE_FRAME_MAX) reject only that record. */
int snapfile_writer__process(struct snapfile_writer *w, const struct snapfile_process *p);
int snapfile_writer__sample(struct snapfile_writer *w, const struct ljs_sample *s);
int snapfile_writer__memory(struct snapfile_writer *w, const struct snapfile_memory *m);
int snapfile_writer__ksyms(struct snapfile_writer *w, const struct ksym *syms, size_t n);
int snapfile_writer__object(struct snapfile_writer *w, const struct snapfile_object *o);
int snapfile_writer__embed(struct snapfile_writer *w, const struct snapfile_embed *e);
int snapfile_writer__stats(struct snapfile_writer *w, const struct snapfile_stat *st, size_t n);

/* Append a record's payload as it is ([kind, ...] in msgpack, as
 * snapfile_reader__payload returns it): for copying a capture into another
 * format.  -EINVAL for an empty payload, a HEADER or an END.  In format 3
 * a SAMPLE copied this way is not counted by the stack references
 * (snapfile_dedup.h): do not mix it with __sample samples of the same
 * thread in one chunk (their references would not resolve: counted, cut),
 * and a copied sample's own references resolve only where its chunk still
 * holds the sample they refer to; write samples with __sample instead. */
int snapfile_writer__raw(struct snapfile_writer *w, const void *payload, size_t len);

/* Write the buffered records to the file (no fsync).  0 or negative errno. */
int snapfile_writer__flush(struct snapfile_writer *w);

/* Bytes written to the file so far (buffered records not included). */
uint64_t snapfile_writer__bytes_written(const struct snapfile_writer *w);

/* Records appended so far (header included). */
uint64_t snapfile_writer__records(const struct snapfile_writer *w);

/* Write END, flush, fsync, close and free w (NULL is a no-op).  Returns the
 * first error met during the whole life of the writer, or 0. */
int snapfile_writer__close(struct snapfile_writer *w);

/* -- Reader ---------------------------------------------------------------- */

struct snapfile_reader;

/* Reader progress and the non-fatal conditions it met. */
struct snapfile_reader_stats {
	uint64_t frames;		/* complete frames read (header included) */
	uint64_t per_kind[SNAPFILE_REC__MAX];	/* records returned, by kind */
	uint64_t unknown;		/* frames of unknown kinds skipped */
	uint64_t corrupt;		/* corrupt frames skipped or stopped at */
	uint64_t offset;		/* file bytes consumed so far */
	uint64_t raw_bytes;		/* the same uncompressed (format 1: = offset) */
	uint64_t trunc_bytes;		/* bytes of an incomplete last record */
	int truncated;			/* the file ends inside a record */
	int stopped;			/* reading stopped at an implausible frame length */
	int clean_end;			/* an END record was read */
	uint64_t refs;			/* format 3: stack references resolved */
	uint64_t refs_lost;		/* and left unresolved (their sample was lost) */
};

/* Open a capture file and read its header.  NULL on error with *err set to
 * a negative errno or SNAPFILE_E_*; snapfile__strerror(*err) explains it. */
struct snapfile_reader *snapfile_reader__open(const char *path, int *err);

/* Same, also writing a detailed message (versions, offsets) to msg. */
struct snapfile_reader *snapfile_reader__open_msg(const char *path, int *err, char *msg,
						  size_t msglen);

/* The header (strings owned by the reader, valid until __close). */
const struct snapfile_header *snapfile_reader__header(const struct snapfile_reader *r);

/* Next record: 1 = rec filled, 0 = no more records (check __stats for
 * truncation), negative = a corrupt frame was met (__error says where); it
 * was skipped when possible, so calling again continues.  Unknown record
 * kinds are skipped silently.  Never loops without consuming input. */
int snapfile_reader__next(struct snapfile_reader *r, struct snapfile_rec *rec);

/* Pass over records of these kinds (bit 1u << SNAPFILE_REC_x) without
 * checking their checksum or decoding them (they are not counted in
 * per_kind).  For a caller that reads a file in several passes, each for
 * some kinds; corruption is found by the pass that reads a record. */
void snapfile_reader__skip_kinds(struct snapfile_reader *r, uint32_t mask);

/* With SAMPLE passed over: still return each sample whose first bytes hold
 * its time, pid and tid, as a record of kind SNAPFILE_REC_SAMPLE_HEAD
 * (rec.head, rec.offset as its sample would have), the rest unchecked.
 * For a pass that needs to know when samples come but not what they hold;
 * it reads every chunk (none is passed over whole). */
void snapfile_reader__sample_heads(struct snapfile_reader *r, int on);

/* The msgpack payload of the record __next last returned ([kind, ...]), in
 * the reader's memory until the next __next; NULL before the first. */
const uint8_t *snapfile_reader__payload(const struct snapfile_reader *r, uint32_t *len);

/* Counters and flags so far. */
const struct snapfile_reader_stats *snapfile_reader__stats(const struct snapfile_reader *r);

/* Message of the most recent negative __next ("" if none yet). */
const char *snapfile_reader__error(const struct snapfile_reader *r);

/* "truncated after N records (M bytes of an incomplete record ignored)", or
 * NULL when the file did not end inside a record (yet). */
const char *snapfile_reader__note(const struct snapfile_reader *r);

/* Bytes of heap the reader holds (buffers and decode arenas). */
size_t snapfile_reader__mem(const struct snapfile_reader *r);

/* Close and free (NULL is a no-op). */
void snapfile_reader__close(struct snapfile_reader *r);

/* -- Helpers ---------------------------------------------------------------- */

/* Explain an error returned by this module (format errors and errno). */
const char *snapfile__strerror(int err);

/* Name of a record kind ("sample"...), "unknown" otherwise. */
const char *snapfile__kind_name(int kind);

/* Take CLOCK_MONOTONIC and CLOCK_REALTIME at (nearly) the same moment. */
void snapfile__clock_ref(uint64_t *mono_ns, uint64_t *real_ns);

/* Convert a sample time (CLOCK_MONOTONIC ns) to wall-clock ns. */
uint64_t snapfile_header__wall_ns(const struct snapfile_header *h, uint64_t mono_ns);

#endif /* LJSNAP_SNAPFILE_H */
