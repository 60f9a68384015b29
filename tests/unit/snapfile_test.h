/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapfile_test.h -- helpers shared by the files of the test_snapfile program.
 */
#ifndef LJSNAP_TEST_SNAPFILE_H
#define LJSNAP_TEST_SNAPFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "formats/capture/snapfile.h"

#include "tests/unit/check.h"

/* Path of a file in the test's temporary directory (4 rotating buffers). */
const char *tpath(const char *name);
/* Deterministic pseudo-random numbers. */
uint64_t rnd(void);
/* Write bytes to a file (replacing it). */
void spit(const char *path, const void *p, size_t len);
/* Read a whole file into a malloc'd buffer (NULL, *len 0 on error). */
uint8_t *slurp(const char *path, size_t *len);
/* Read every record of path, comparing with ex[]: records matched in order,
 * or -1 when one differs; *nerr counts negative returns, *total (if given)
 * the records returned; *keep (if given) gets the open reader. */
struct snapfile_reader;
int read_all(const char *path, int *nerr, int *total, struct snapfile_reader **keep);

/* test_snapfile_fixture.c: one capture with every record kind. */
#define NSAMPLES 4
#define NMEM 2
#define NKSYMS 5

struct fixture {
	struct snapfile_header hdr;
	struct procmap_desc maps[3];
	const char *prov[3];
	struct snapfile_process pa, pb, pb_exit;
	struct ljs_sample s[NSAMPLES];
	uint8_t secdata[NSAMPLES][LJS_SAMPLE_MAX_SECS][300];
	uint8_t memdata[NMEM][200];
	struct snapfile_memory mem[NMEM];
	struct ksym ksyms[NKSYMS];
	struct snapfile_object obj;
	uint8_t objdata[300], objid[20];
	struct snapfile_stat stats[LJS_ERR__MAX + 2];
	uint8_t bid[20];
};

/* The expected sequence of records after the header. */
struct expect {
	enum snapfile_kind kind;
	const void *v;
};

extern struct fixture fx;
extern struct expect ex[32];	/* the records after the header, in file order */
extern int nex;

/* Build the fixture records; write them (and END) to path, in format 1 or
 * as o says. */
void fixture_init(void);
void fixture_write(const char *path);
void fixture_write_opts(const char *path, const struct snapfile_writer_opts *o);
/* Does the sample / record equal the writer's input? */
int sample_eq(const struct ljs_sample *a, const struct ljs_sample *b);
int rec_eq(const struct snapfile_rec *r, const struct expect *e);

struct frame_info {
	size_t off, end;	/* frame [off, end) in the file */
	int kind;
};

/* Walk the frames with zlib and msgpack-c; returns the frame count or -1. */
int parse_frames(const uint8_t *b, size_t len, struct frame_info *fi, int max);

/* test_snapfile_craft.c: the msgpack cursor and files made by hand. */
void test_mpread(void);
void test_versions(void);
void test_forward_compat(void);
void test_embed_fields(void);

/* test_snapfile_v2.c: format 2's compressed chunks. */
void test_format2(void);
void test_format3(void);

/* test_snapfile_schema.c: every field of every record kind, and known bytes. */
void test_known_bytes(void);
void test_schema_fields(void);

#endif /* LJSNAP_TEST_SNAPFILE_H */
