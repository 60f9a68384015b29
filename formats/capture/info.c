/* SPDX-License-Identifier: GPL-2.0-or-later */
/* info.c -- `ljsnap info FILE`: summarize a capture file. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "formats/capture/info.h"
#include "formats/capture/snapfile.h"
#include "symtab/elfcopy.h"
#include "symtab/intmap.h"
#include "symtab/vec.h"

#define INFO_MAX_NOTES 20	/* corrupt-record messages printed in full */

/* Samples of one pid. */
struct info_pid {
	uint32_t pid;
	uint64_t samples;
	char comm[LJS_COMM_LEN];
};

/* Everything gathered in one pass over the file. */
struct info {
	struct info_pid *pids;		/* in the order first seen */
	size_t npids, cap;
	struct intmap bypid;		/* pid -> index into pids */
	uint64_t first_ns, last_ns;	/* sample time range */
	uint64_t mem_bytes, ksyms, nproc, nexit, obj_bytes;
	struct snapfile_stat *stats;	/* last STATS record (own copies) */
	uint32_t nstats;
	char *notes[INFO_MAX_NOTES];
	uint64_t nnotes;
	char *procs;			/* process section text */
	size_t procs_len;
	FILE *pf;			/* writes procs */
	uint64_t emb_raw, emb_bytes;	/* EMBED: section bytes, bytes in the file */
	uint64_t sec_n[LJS_SEC__MAX], sec_bytes[LJS_SEC__MAX];	/* sample sections by kind */
	char *embeds;			/* one line per EMBED record */
	size_t embeds_len;
	FILE *ef;			/* writes embeds */
};

/* One line per copy of a mapped file (EMBED). */
static void info__embed(struct info *in, const struct snapfile_embed *e, uint32_t size)
{
	char hex[2 * 64 + 1], what[64];
	uint32_t i;

	/* by hand: buildid__hex would link libelf into every reader of info */
	for (i = 0; i < e->build_id_len && i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", e->build_id[i]);
	hex[2 * i] = 0;

	/* the names elfcopy__what gives, without linking libelf into info */
	snprintf(what, sizeof(what), "%s%s%s", (e->what & ELFCOPY_UNWIND) ? "unwind " : "",
		 (e->what & ELFCOPY_SYMBOLS) ? "symbols " : "", (e->what & ELFCOPY_DEBUG) ? "debug " : "");
	if (what[0])
		what[strlen(what) - 1] = 0;
	in->emb_raw += e->raw_len;
	in->emb_bytes += size;
	fprintf(in->ef, "  %s  build id %s  %s: %" PRIu64 " bytes of sections in %" PRIu32
		" bytes (file %" PRIu64 " bytes)", e->path,
		i ? hex : "none",
		what[0] ? what : "headers", e->raw_len, size, e->size);
	if (e->names_len)	/* symtab/funcs.h: saved names of LuaJIT's functions */
		fprintf(in->ef, ", %" PRIu32 " bytes of function names", e->names_len);
	fputc('\n', in->ef);
}

/* -- Samples per pid ------------------------------------------------------------ */

/* Count one sample of pid: 0 or -ENOMEM. */
static int info__count(struct info *in, const struct ljs_sample *s)
{
	struct info_pid *p;
	uint64_t *idx;
	int err, found;
	uint32_t i;

	if ((err = VEC_GROW(in->pids, &in->cap, in->npids + 1)) != 0)
		return err;
	if ((found = intmap__slot(&in->bypid, s->pid, &idx)) < 0)
		return found;
	if (!found) {
		*idx = in->npids;
		memset(&in->pids[in->npids++], 0, sizeof(*p));
	}
	p = &in->pids[*idx];
	if (!found || s->tid == s->pid) {
		/* the main thread's latest name: the program after an exec */
		p->pid = s->pid;
		memcpy(p->comm, s->comm, sizeof(p->comm));
		p->comm[sizeof(p->comm) - 1] = 0;
	}
	p->samples++;
	for (i = 0; i < s->nsec; i++)
		if (s->sec[i].kind < LJS_SEC__MAX) {
			in->sec_n[s->sec[i].kind]++;
			in->sec_bytes[s->sec[i].kind] += s->sec[i].len;
		}
	if (!in->first_ns || s->time_ns < in->first_ns)
		in->first_ns = s->time_ns;
	if (s->time_ns > in->last_ns)
		in->last_ns = s->time_ns;
	return 0;
}

/* qsort: most samples first, then by pid. */
static int info__cmp_pid(const void *a, const void *b)
{
	const struct info_pid *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* -- Records ---------------------------------------------------------------------- */

/* Seconds of t relative to the header's clock reference. */
static double info__rel(const struct snapfile_header *h, uint64_t t)
{
	return ((double)t - (double)h->mono_ns) / 1e9;
}

/* Append one PROCESS record to the process section. */
static void info__process(struct info *in, const struct snapfile_header *h,
			  const struct snapfile_process *p)
{
	size_t i, set = 0;

	if (p->exited_ns) {
		in->nexit++;
		fprintf(in->pf, "  pid %" PRIu32 " %s exited at %+.3f s\n", p->pid, p->comm,
			info__rel(h, p->exited_ns));
		return;
	}
	in->nproc++;
	fprintf(in->pf, "  pid %" PRIu32 " (ppid %" PRIu32 ") %s  exe %s  %" PRIu32 " mappings",
		p->pid, p->ppid, p->comm, p->exe[0] ? p->exe : "?", p->nmaps);
	if (p->image)
		fprintf(in->pf, "  (image %" PRIu32 ": after an exec or a reuse of the pid)", p->image);
	fputc('\n', in->pf);
	if (p->cmdline[0])
		fprintf(in->pf, "      cmdline: %s\n", p->cmdline);
	if (!p->has_luajit)
		return;
	for (i = 0; i < lj_layout__nfields; i++) {
		uint32_t v;

		memcpy(&v, (const char *)&p->layout + lj_layout__fields[i].offset, sizeof(v));
		set += v != 0;
	}
	fprintf(in->pf, "      LuaJIT: %s\n", p->lj_build[0] ? p->lj_build : "(no build description)");
	fprintf(in->pf, "      layout: family %s%s%s%s, gg_ofs_g %" PRIu32 ", disp2g %" PRId32
		", g_size %" PRIu32 ", l_size %" PRIu32 " (%zu of %zu fields set)\n",
		lj_layout__family_name((enum lj_family)p->layout.family),
		p->layout.flags & LJ_LAYOUT_F_GC64 ? ", GC64" : ", 32-bit refs",
		p->layout.flags & LJ_LAYOUT_F_DUALNUM ? ", dual-number" : "",
		p->layout.flags & LJ_LAYOUT_F_NOJIT ? ", no JIT" : "",
		p->layout.gg_ofs_g, p->layout.disp2g, p->layout.g_size, p->layout.l_size,
		set, lj_layout__nfields);
	fprintf(in->pf, "      g 0x%" PRIx64 ", VM code 0x%" PRIx64 "-0x%" PRIx64, p->g, p->vm_lo,
		p->vm_hi);
	if (p->vm_exit)
		fprintf(in->pf, " (trace exits return at 0x%" PRIx64 ")", p->vm_exit);
	fprintf(in->pf, ", %" PRIu32 " provenance notes\n", p->nprov);
}

/* Keep a copy of the last STATS record: 0 or -ENOMEM. */
static int info__stats(struct info *in, const struct snapfile_stats *st)
{
	struct snapfile_stat *v = calloc(st->n ? st->n : 1, sizeof(*v));
	uint32_t i;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < st->n; i++) {
		v[i].value = st->v[i].value;
		v[i].name = strdup(st->v[i].name);
		if (!v[i].name) {
			while (i--)
				free((char *)v[i].name);
			free(v);
			return -ENOMEM;
		}
	}
	for (i = 0; i < in->nstats; i++)
		free((char *)in->stats[i].name);
	free(in->stats);
	in->stats = v;
	in->nstats = st->n;
	return 0;
}

/* Remember a reader error message. */
static void info__note(struct info *in, const char *msg)
{
	if (in->nnotes < INFO_MAX_NOTES)
		in->notes[in->nnotes] = strdup(msg);
	in->nnotes++;
}

/* One pass over the records: 0 or -ENOMEM. */
static int info__scan(struct info *in, struct snapfile_reader *r)
{
	const struct snapfile_header *h = snapfile_reader__header(r);
	struct snapfile_rec *rec;
	int rc, err = 0;

	rec = malloc(sizeof(*rec));
	if (!rec)
		return -ENOMEM;
	while (!err && (rc = snapfile_reader__next(r, rec)) != 0) {
		if (rc < 0) {
			info__note(in, snapfile_reader__error(r));
			continue;
		}
		switch (rec->kind) {
		case SNAPFILE_REC_PROCESS:
			info__process(in, h, &rec->proc);
			break;
		case SNAPFILE_REC_SAMPLE:
			err = info__count(in, &rec->sample);
			break;
		case SNAPFILE_REC_MEMORY:
			in->mem_bytes += rec->mem.len;
			break;
		case SNAPFILE_REC_KSYMS:
			in->ksyms += rec->ksyms.n;
			break;
		case SNAPFILE_REC_OBJECT:
			in->obj_bytes += rec->object.len;
			break;
		case SNAPFILE_REC_EMBED:
			info__embed(in, &rec->embed, rec->size);
			break;
		case SNAPFILE_REC_STATS:
			err = info__stats(in, &rec->stats);
			break;
		default:
			break;
		}
	}
	free(rec);
	return err;
}

/* -- Output ------------------------------------------------------------------------- */

/* Header lines. */
static void info__print_header(FILE *out, const char *path, const struct snapfile_header *h,
			       const struct snapfile_reader_stats *rs)
{
	static const char *const fnames[] = { "memory", "ksyms", "task-events", "system-wide" };
	time_t secs = (time_t)(h->real_ns / 1000000000ull);
	struct stat st;
	char when[64] = "?";
	struct tm tm;
	size_t i;

	if (gmtime_r(&secs, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(out, "file:       %s", path);
	if (!stat(path, &st))
		fprintf(out, " (%lld bytes)", (long long)st.st_size);
	fprintf(out, "\nformat:     %" PRIu32 ".%" PRIu32 "%s, written by ljsnap %s\n", h->major,
		h->minor, h->minor > SNAPFILE_MINOR ? " (newer minor: unknown additions ignored)" : "",
		h->ljsnap_version[0] ? h->ljsnap_version : "?");
	/* Format 2 stores the records in zstd chunks (docs/capture-format.md). */
	if (h->major >= 2)
		fprintf(out, "compression: zstd, %" PRIu64 " bytes uncompressed in %" PRIu64
			" bytes (%.1fx)\n", rs->raw_bytes, rs->offset,
			rs->offset ? (double)rs->raw_bytes / (double)rs->offset : 0.0);
	else
		fprintf(out, "compression: none (format 1), %" PRIu64 " bytes\n", rs->offset);
	fprintf(out, "host:       %s, kernel %s, %s\n", h->host[0] ? h->host : "?",
		h->kernel[0] ? h->kernel : "?", h->arch[0] ? h->arch : "?");
	fprintf(out, "started:    %s (monotonic %.3f s)\n", when, (double)h->mono_ns / 1e9);
	fprintf(out, "options:    %" PRIu32 " Hz, stack %" PRIu32 " bytes, Lua stack %" PRIu32
		" bytes, target: %s\n", h->freq_hz, h->stack_bytes, h->lstack_bytes,
		h->target[0] ? h->target : "?");
	fprintf(out, "features:   0x%" PRIx64, h->features);
	for (i = 0; i < sizeof(fnames) / sizeof(fnames[0]); i++)
		if (h->features & (1ull << i))
			fprintf(out, " %s", fnames[i]);
	fprintf(out, "\n");
}

/* Bytes per sample by section kind, as captured (format 3's references
 * resolved). */
static void info__print_sections(FILE *out, const struct info *in, uint64_t nsamples)
{
	static const char *const names[LJS_SEC__MAX] = {
		[LJS_SEC_KSTACK] = "kernel stack", [LJS_SEC_USTACK] = "user stack",
		[LJS_SEC_G] = "global_State", [LJS_SEC_L] = "lua_State",
		[LJS_SEC_LSTACK] = "Lua stack", [LJS_SEC_TRACE] = "trace",
		[LJS_SEC_RES_L] = "resumer lua_State", [LJS_SEC_RES_LSTACK] = "resumer Lua stack",
	};
	int k, first = 1;

	if (!nsamples)
		return;
	fprintf(out, "  sections, bytes captured per sample:");
	for (k = 1; k < LJS_SEC__MAX; k++)
		if (in->sec_n[k]) {
			fprintf(out, "%s %s %.0f", first ? "" : ",", names[k] ? names[k] : "?",
				(double)in->sec_bytes[k] / (double)nsamples);
			first = 0;
		}
	fputc('\n', out);
}

/* Everything after the header. */
static void info__print_body(FILE *out, struct info *in, struct snapfile_reader *r)
{
	const struct snapfile_reader_stats *st = snapfile_reader__stats(r);
	const struct snapfile_header *h = snapfile_reader__header(r);
	const char *note = snapfile_reader__note(r);
	size_t i;
	int k;

	fprintf(out, "\nprocesses:  %" PRIu64 " described, %" PRIu64 " exits noted\n%s", in->nproc,
		in->nexit, in->procs ? in->procs : "");
	fprintf(out, "\nrecords:   ");
	for (k = 1; k < SNAPFILE_REC__MAX; k++)
		if (k < SNAPFILE_REC_EMBED || st->per_kind[k])	/* older files: as before */
			fprintf(out, "%s %s %" PRIu64, k > 1 ? "," : "", snapfile__kind_name(k),
				st->per_kind[k]);
	fprintf(out, "; unknown kinds skipped %" PRIu64 ", corrupt %" PRIu64 "\n", st->unknown,
		st->corrupt);
	if (in->npids) {
		fprintf(out, "samples:    %" PRIu64 " over %.3f s (%+.3f s .. %+.3f s)\n",
			st->per_kind[SNAPFILE_REC_SAMPLE], (double)(in->last_ns - in->first_ns) / 1e9,
			info__rel(h, in->first_ns), info__rel(h, in->last_ns));
		qsort(in->pids, in->npids, sizeof(in->pids[0]), info__cmp_pid);
		for (i = 0; i < in->npids; i++)
			fprintf(out, "  pid %" PRIu32 " %-16s %" PRIu64 " samples\n", in->pids[i].pid,
				in->pids[i].comm, in->pids[i].samples);
		info__print_sections(out, in, st->per_kind[SNAPFILE_REC_SAMPLE]);
		if (h->major >= 3)	/* docs/capture-format.md, "Stack references" */
			fprintf(out, "  stack references: %" PRIu64 " resolved, %" PRIu64 " lost%s\n",
				st->refs, st->refs_lost, st->refs_lost ? " (their sections are cut: "
				"the sample they refer to is missing)" : "");
	}
	fprintf(out, "memory:     %" PRIu64 " ranges, %" PRIu64 " bytes\n",
		st->per_kind[SNAPFILE_REC_MEMORY], in->mem_bytes);
	fprintf(out, "ksyms:      %" PRIu64 " kernel symbols\n", in->ksyms);
	if (st->per_kind[SNAPFILE_REC_OBJECT])
		fprintf(out, "objects:    %" PRIu64 " in-memory images (the vDSO), %" PRIu64 " bytes\n",
			st->per_kind[SNAPFILE_REC_OBJECT], in->obj_bytes);
	if (st->per_kind[SNAPFILE_REC_EMBED])
		fprintf(out, "embedded:   %" PRIu64 " copies of mapped files, %" PRIu64 " bytes of "
			"sections in %" PRIu64 " bytes (zstd)\n%s", st->per_kind[SNAPFILE_REC_EMBED],
			in->emb_raw, in->emb_bytes, in->embeds ? in->embeds : "");
	if (in->nstats) {
		fprintf(out, "statistics (last STATS record):\n");
		for (i = 0; i < in->nstats; i++)
			fprintf(out, "  %-24s %" PRIu64 "\n", in->stats[i].name, in->stats[i].value);
	}
	if (!in->nnotes && !note && st->clean_end)
		return;
	fprintf(out, "notes:\n");
	for (i = 0; i < in->nnotes && i < INFO_MAX_NOTES; i++)
		fprintf(out, "  %s\n", in->notes[i] ? in->notes[i] : "(out of memory)");
	if (in->nnotes > INFO_MAX_NOTES)
		fprintf(out, "  ... and %" PRIu64 " more corrupt records\n", in->nnotes - INFO_MAX_NOTES);
	if (note)
		fprintf(out, "  %s\n", note);
	if (!st->clean_end)
		fprintf(out, "  no END record: the recording did not finish cleanly "
			"(killed, out of space, or still running)\n");
}

/* Print what the capture file at path holds. */
int snapfile__print_info(const char *path, FILE *out)
{
	struct snapfile_reader *r;
	struct info in;
	char msg[512];
	int err = 0;
	size_t i;

	memset(&in, 0, sizeof(in));
	r = snapfile_reader__open_msg(path, &err, msg, sizeof(msg));
	if (!r) {
		fprintf(stderr, "%s: %s\n", path, msg);
		goto out;
	}
	in.pf = open_memstream(&in.procs, &in.procs_len);
	in.ef = open_memstream(&in.embeds, &in.embeds_len);
	if (!in.pf || !in.ef) {
		err = -ENOMEM;
		goto out;
	}
	err = info__scan(&in, r);
	fclose(in.pf);
	fclose(in.ef);
	in.pf = in.ef = NULL;
	if (err)
		goto out;
	info__print_header(out, path, snapfile_reader__header(r), snapfile_reader__stats(r));
	info__print_body(out, &in, r);
out:
	if (err && r)
		fprintf(stderr, "%s: %s\n", path, snapfile__strerror(err));
	snapfile_reader__close(r);
	if (in.pf)
		fclose(in.pf);
	if (in.ef)
		fclose(in.ef);
	free(in.procs);
	free(in.embeds);
	free(in.pids);
	intmap__exit(&in.bypid);
	for (i = 0; i < in.nstats; i++)
		free((char *)in.stats[i].name);
	free(in.stats);
	for (i = 0; i < in.nnotes && i < INFO_MAX_NOTES; i++)
		free(in.notes[i]);
	return err;
}
