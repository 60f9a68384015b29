/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * capdesc.c -- a capture with one more description of a process, for
 * tests/e2e/report_desc.sh.
 *
 * usage: capdesc IN OUT PID
 *
 * Copies the capture IN to OUT record by record (samples written again
 * from what was read, other payloads unchanged, the header written again,
 * as tests/golden/rewrite does), then appends the last PROCESS record of PID
 * once more with its LuaJIT part removed (has_luajit 0, same image): what
 * the recorder writes when it looks at a process again and finds no
 * LuaJIT, as for an nginx worker shutting down after a reload.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/capture/snapfile.h"

int main(int argc, char **argv)
{
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	struct snapfile_reader *r = NULL;
	struct snapfile_writer *w = NULL;
	int err = 0, rc, found = 0, pass, n, last = 0;
	uint32_t pid;

	if (argc != 4 || !rec) {
		fprintf(stderr, "usage: capdesc IN OUT PID\n");
		return 2;
	}
	pid = (uint32_t)strtoul(argv[3], NULL, 0);
	r = snapfile_reader__open(argv[1], &err);
	if (r)
		w = snapfile_writer__open(argv[2], snapfile_reader__header(r), &err);
	while (r && w && !err && (rc = snapfile_reader__next(r, rec)) != 0) {
		const uint8_t *p;
		uint32_t len;

		if (rc < 0 || rec->kind == SNAPFILE_REC_END)
			continue;
		/* a sample again from what was read: its stack references
		 * must fit the copy's chunks (snapfile_writer__raw) */
		if (rec->kind == SNAPFILE_REC_SAMPLE) {
			err = snapfile_writer__sample(w, &rec->sample);
			continue;
		}
		p = snapfile_reader__payload(r, &len);
		err = snapfile_writer__raw(w, p, len);
	}
	snapfile_reader__close(r);
	/* Twice more: which is the last description of pid with LuaJIT, then
	 * that one, written again without it. */
	for (pass = 0; pass < 2 && !err && w; pass++) {
		r = snapfile_reader__open(argv[1], &err);
		for (n = 0; r && !found && (rc = snapfile_reader__next(r, rec)) != 0;) {
			if (rc < 0 || rec->kind != SNAPFILE_REC_PROCESS || rec->proc.pid != pid ||
			    rec->proc.exited_ns || !rec->proc.has_luajit)
				continue;
			if (pass == 0 || ++n < last) {
				last += pass == 0;
				continue;
			}
			found = 1;
		}
		if (found)
			break;
		snapfile_reader__close(r);
		r = NULL;
	}
	if (found) {
		rec->proc.has_luajit = 0;
		memset(&rec->proc.layout, 0, sizeof(rec->proc.layout));
		rec->proc.lj_build = NULL;
		rec->proc.nprov = 0;
		rec->proc.vm_lo = rec->proc.vm_hi = rec->proc.g = 0;
		err = snapfile_writer__process(w, &rec->proc);
	}
	snapfile_reader__close(r);
	if (w && snapfile_writer__close(w) && !err)
		err = -EIO;
	free(rec);
	if (err || !found) {
		fprintf(stderr, "capdesc: %s\n", err ? snapfile__strerror(err) : "no LuaJIT process PID");
		return 1;
	}
	return 0;
}
