/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * archive.c -- `ljsnap archive FILE`: on the recording host, add to a
 * capture the line tables and inline information of the files it maps
 * (EMBED records with .debug_*, docs/capture-format.md), and the copies a
 * capture recorded with --no-embed or by an older ljsnap lacks.
 *
 * Every record is copied in order into a new file; an EMBED record without
 * debug information is replaced by a fuller copy when the file at its path
 * still has that build id, and the files a PROCESS record maps that no
 * EMBED record carried yet are copied just before it, so that each copy
 * still comes before the first description that maps it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/cmds.h"
#include "daemon/embed.h"
#include "formats/capture/snapfile.h"

/* Copy one record, adding copies of files as described above. */
static int archive__rec(struct embedder *e, struct snapfile_writer *w,
			const struct snapfile_rec *rec)
{
	size_t i;
	int err;

	switch (rec->kind) {
	case SNAPFILE_REC_EMBED:
		err = embedder__copy(e, w, 0, 0, 0, rec->embed.path, rec->embed.build_id,
				     rec->embed.build_id_len);
		if (err == -ENOENT)	/* not here any more: keep what the capture has */
			err = snapfile_writer__embed(w, &rec->embed);
		return err < 0 ? err : 0;
	case SNAPFILE_REC_PROCESS:
		for (i = 0; i < rec->proc.nmaps; i++) {
			const struct procmap_desc *m = &rec->proc.maps[i];

			if (!m->path || m->path[0] != '/' || !m->build_id_len)
				continue;
			err = embedder__copy(e, w, 0, 0, 0, m->path, m->build_id, m->build_id_len);
			if (err < 0 && err != -ENOENT)
				return err;
		}
		return snapfile_writer__process(w, &rec->proc);
	case SNAPFILE_REC_SAMPLE:
		return snapfile_writer__sample(w, &rec->sample);
	case SNAPFILE_REC_MEMORY:
		return snapfile_writer__memory(w, &rec->mem);
	case SNAPFILE_REC_KSYMS:
		return snapfile_writer__ksyms(w, rec->ksyms.syms, rec->ksyms.n);
	case SNAPFILE_REC_STATS:
		return snapfile_writer__stats(w, rec->stats.v, rec->stats.n);
	case SNAPFILE_REC_OBJECT:
		return snapfile_writer__object(w, &rec->object);
	default:
		return 0;	/* END: the writer closes the new file with its own */
	}
}

/* Copy in to out; 0, or 1 after saying why not. */
static int archive__copy(const char *in, const char *out, struct embedder *e)
{
	struct snapfile_reader *r = NULL;
	struct snapfile_writer *w = NULL;
	struct snapfile_rec *rec = malloc(sizeof(*rec));
	char msg[512];
	int err = -ENOMEM, rc, ret = 1;

	if (!rec)
		goto out;
	r = snapfile_reader__open_msg(in, &err, msg, sizeof(msg));
	if (!r) {
		fprintf(stderr, "ljsnap archive: %s: %s\n", in, msg);
		goto out;
	}
	w = snapfile_writer__open(out, snapfile_reader__header(r), &err);
	if (!w)
		goto out;
	err = 0;
	while (!err && (rc = snapfile_reader__next(r, rec)) != 0) {
		if (rc < 0)
			fprintf(stderr, "ljsnap archive: %s: %s\n", in, snapfile_reader__error(r));
		else
			err = archive__rec(e, w, rec);
	}
	if (!err)
		ret = 0;
out:
	if (w && (rc = snapfile_writer__close(w)) != 0 && !err)
		err = rc;
	if (err)
		fprintf(stderr, "ljsnap archive: writing %s: %s\n", out, snapfile__strerror(err));
	snapfile_reader__close(r);
	free(rec);
	return err ? 1 : ret;
}

/* Print the usage of `archive`. */
static void usage(FILE *out)
{
	fprintf(out,
		"usage: ljsnap archive [-o OUT] FILE\n"
		"\n"
		"On the recording host, add to a capture the line tables and inline\n"
		"information (DWARF .debug_*) of the files its processes mapped, for\n"
		"report --lines and inlined frames on any machine, and the unwind tables and\n"
		"symbols of files it does not carry yet (recorded with --no-embed).  Only\n"
		"files whose build id is still the recorded one are read.\n"
		"\n"
		"  -o, --output OUT  write OUT instead of replacing FILE\n"
		"  -h, --help        this help\n"
		"\n"
		"example:\n"
		"  ljsnap archive app.ljsnap\n");
}

/* `ljsnap archive`. */
int cmd_archive(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *out = NULL;
	struct embedder e;
	char tmp[4200];
	int c, ret;

	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		if (c == 'o') {
			out = optarg;
		} else {
			usage(c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.archive-tmp", argv[optind]) >= (int)sizeof(tmp))
		return 2;
	embedder__init(&e, 0, 1);
	ret = archive__copy(argv[optind], out ? out : tmp, &e);
	if (!ret && !out && rename(tmp, argv[optind]) != 0) {
		fprintf(stderr, "ljsnap archive: renaming %s: %s\n", tmp, strerror(errno));
		ret = 1;
	}
	if (ret && !out)
		unlink(tmp);
	if (!ret)
		fprintf(stderr, "ljsnap archive: %llu files copied with their debug information "
			"(%llu bytes of sections, %llu in the file)%s\n",
			(unsigned long long)e.objects, (unsigned long long)e.raw,
			(unsigned long long)e.packed,
			e.failed ? "; the others are not here as recorded: their copies stay" : "");
	embedder__exit(&e);
	return ret;
}
