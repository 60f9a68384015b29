/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapfile_schema.h -- the fields of every capture file record, declared once.
 *
 * One X-macro list per record kind (and per nested map or array), in the
 * manner of LuaJIT's ERRDEF list in lj_errmsg.h.  Each entry is
 *
 *   FIELD(key, member, type, cond)
 *
 *   key     map records: the key, written as it stands;
 *           array records: the field's name in docs/capture-format.md
 *   member  the member of the C struct that holds the field; for bin and
 *           the array types the pair (elements, count); `none` for regnames
 *           (the names are this build's, not the struct's).  The member of
 *           "lj" is has_luajit, which a decoded "lj" sets.
 *   type    how the field is encoded and decoded (below)
 *   cond    map records: write the field only when true, an expression over
 *           `r`, the struct being written; array records: always 1
 *
 * Entries are in file order.  The writer (snapfile_write.c) packs each list
 * in that order and takes map sizes and array lengths from it; the decoder
 * (snapfile_decode.c) dispatches map keys and reads array fields from it.
 * A reader accepts any subset of a map's keys, in any order, and skips the
 * keys and trailing array fields it does not know (docs/capture-format.md,
 * "Versioning").  The bytes are frozen by tests/unit/test_snapfile_schema.c:
 * an entry added, removed, reordered or retyped changes the format.
 *
 * Types (the decoder refuses values that do not fit):
 *   u16 u32 u64   unsigned integer, smallest encoding
 *   str           string; NULL is written as "", absent reads as ""
 *   comm          string of at most LJS_COMM_LEN - 1 bytes of a char array
 *   bin           binary (data, len)
 *   regnames      array of str: snapfile__regs names (snapfile.c)
 *   regs          bin: u64 LE per register, in the header's regnames order
 *   maps          array of SNAPFILE_MAPPING_FIELDS arrays
 *   lj            map of SNAPFILE_LUAJIT_FIELDS
 *   layout        map str -> int: one key per lj_layout__fields entry
 *                 (unwind/ljlayout_fields.c), int32 values
 *   prov          array of str
 *   sections      array of SNAPFILE_SECTION_FIELDS arrays
 *   ksyms         array of SNAPFILE_KSYM_FIELDS arrays
 *   counters      map str -> u64
 */
#ifndef LJSNAP_SNAPFILE_SCHEMA_H
#define LJSNAP_SNAPFILE_SCHEMA_H

/* HEADER: [1, {...}]; struct snapfile_header.  "major" is frozen: every
 * version keeps it in the first record (snapfile__decode_version). */
#define SNAPFILE_HEADER_FIELDS(FIELD)					\
	FIELD("major",    major,          u32,      1)			\
	FIELD("minor",    minor,          u32,      1)			\
	FIELD("ljsnap",   ljsnap_version, str,      1)			\
	FIELD("host",     host,           str,      1)			\
	FIELD("kernel",   kernel,         str,      1)			\
	FIELD("arch",     arch,           str,      1)			\
	FIELD("mono_ns",  mono_ns,        u64,      1)			\
	FIELD("real_ns",  real_ns,        u64,      1)			\
	FIELD("freq",     freq_hz,        u32,      1)			\
	FIELD("stack",    stack_bytes,    u32,      1)			\
	FIELD("lstack",   lstack_bytes,   u32,      1)			\
	FIELD("target",   target,         str,      1)			\
	FIELD("features", features,       u64,      1)			\
	FIELD("regs",     none,           regnames, 1)

/* PROCESS: [2, {...}]; struct snapfile_process. */
#define SNAPFILE_PROCESS_FIELDS(FIELD)					\
	FIELD("pid",      pid,            u32,      1)			\
	FIELD("ppid",     ppid,           u32,      1)			\
	FIELD("comm",     comm,           comm,     1)			\
	FIELD("exe",      exe,            str,      1)			\
	FIELD("cmdline",  cmdline,        str,      1)			\
	FIELD("start",    start_ns,       u64,      1)			\
	FIELD("exited",   exited_ns,      u64,      1)			\
	FIELD("image",    image,          u32,      1)			\
	FIELD("maps",     (maps, nmaps),  maps,     1)			\
	FIELD("lj",       has_luajit,     lj,       r->has_luajit)

/* PROCESS "lj": {...}; the LuaJIT members of struct snapfile_process. */
#define SNAPFILE_LUAJIT_FIELDS(FIELD)					\
	FIELD("layout",   layout,         layout,   1)			\
	FIELD("build",    lj_build,       str,      1)			\
	FIELD("prov",     (prov, nprov),  prov,     1)			\
	FIELD("vm_lo",    vm_lo,          u64,      1)			\
	FIELD("vm_hi",    vm_hi,          u64,      1)			\
	FIELD("g",        g,              u64,      1)			\
	FIELD("vm_exit",  vm_exit,        u64,      r->vm_exit)

/* PROCESS "maps" entry: [...]; struct procmap_desc. */
#define SNAPFILE_MAPPING_FIELDS(FIELD)					\
	FIELD("start",    start,          u64,      1)			\
	FIELD("end",      end,            u64,      1)			\
	FIELD("offset",   offset,         u64,      1)			\
	FIELD("prot",     prot,           u32,      1)			\
	FIELD("path",     path,           str,      1)			\
	FIELD("build_id", (build_id, build_id_len), bin, 1)

/* SAMPLE: [3, ...]; struct ljs_sample (unwind/sample.h). */
#define SNAPFILE_SAMPLE_FIELDS(FIELD)					\
	FIELD("time",     time_ns,        u64,      1)			\
	FIELD("pid",      pid,            u32,      1)			\
	FIELD("tid",      tid,            u32,      1)			\
	FIELD("cpu",      cpu,            u32,      1)			\
	FIELD("flags",    flags,          u32,      1)			\
	FIELD("comm",     comm,           comm,     1)			\
	FIELD("regs",     regs,           regs,     1)			\
	FIELD("g",        g,              u64,      1)			\
	FIELD("cfg_gen",  cfg_gen,        u32,      1)			\
	FIELD("sections", (sec, nsec),    sections, 1)

/* SAMPLE "sections" entry: [...]; struct ljs_section (unwind/sample.h). */
#define SNAPFILE_SECTION_FIELDS(FIELD)					\
	FIELD("kind",     kind,           u16,      1)			\
	FIELD("status",   status,         u16,      1)			\
	FIELD("addr",     addr,           u64,      1)			\
	FIELD("want",     want,           u32,      1)			\
	FIELD("aux",      aux,            u32,      1)			\
	FIELD("bytes",    (data, len),    bin,      1)

/* MEMORY: [4, ...]; struct snapfile_memory. */
#define SNAPFILE_MEMORY_FIELDS(FIELD)					\
	FIELD("pid",      pid,            u32,      1)			\
	FIELD("addr",     addr,           u64,      1)			\
	FIELD("bytes",    (data, len),    bin,      1)			\
	FIELD("first_ns", first_ns,       u64,      1)			\
	FIELD("last_ns",  last_ns,        u64,      1)			\
	FIELD("gen",      gen,            u64,      1)

/* KSYMS: [5, ...]; struct snapfile_ksyms. */
#define SNAPFILE_KSYMS_FIELDS(FIELD)					\
	FIELD("syms",     (syms, n),      ksyms,    1)

/* KSYMS "syms" entry: [...]; struct ksym. */
#define SNAPFILE_KSYM_FIELDS(FIELD)					\
	FIELD("addr",     addr,           u64,      1)			\
	FIELD("name",     name,           str,      1)			\
	FIELD("module",   module,         str,      1)

/* STATS: [6, ...]; struct snapfile_stats. */
#define SNAPFILE_STATS_FIELDS(FIELD)					\
	FIELD("counters", (v, n),         counters, 1)

/* END: [7, {...}]; struct snapfile_end. */
#define SNAPFILE_END_FIELDS(FIELD)					\
	FIELD("records",  records,        u64,      1)

/* OBJECT: [8, ...]; struct snapfile_object. */
#define SNAPFILE_OBJECT_FIELDS(FIELD)					\
	FIELD("path",     path,           str,      1)			\
	FIELD("build_id", (build_id, build_id_len), bin, 1)		\
	FIELD("bytes",    (data, len),    bin,      1)

/* EMBED: [9, ...]; struct snapfile_embed. */
#define SNAPFILE_EMBED_FIELDS(FIELD)					\
	FIELD("path",     path,           str,      1)			\
	FIELD("build_id", (build_id, build_id_len), bin, 1)		\
	FIELD("size",     size,           u64,      1)			\
	FIELD("what",     what,           u32,      1)			\
	FIELD("extents",  (extents, extents_len), bin, 1)		\
	FIELD("raw",      raw_len,        u64,      1)			\
	FIELD("zstd",     (data, len),    bin,      1)			\
	FIELD("names",    (names, names_len), bin,  1)

/* EMBED fields of format 1.0 (before "names"): a reader requires these. */
#define SNAPFILE_EMBED_NEED	7

/* -- Counting ---------------------------------------------------------------- */

#define SNAPFILE__ONE(key, member, type, cond) + 1
#define SNAPFILE__IF(key, member, type, cond) + !!(cond)

/* Fields of a list (an array record's length); a constant expression. */
#define SNAPFILE_NFIELDS(LIST) (0 LIST(SNAPFILE__ONE))

/* Fields of a map the writer writes for the struct `r` in scope. */
#define SNAPFILE_NFIELDS_OF(LIST) (0 LIST(SNAPFILE__IF))

#endif /* LJSNAP_SNAPFILE_SCHEMA_H */
