/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * top.h -- `ljsnap top`, the live view, shared by its parts: top.c (the
 * command, the recorder's hooks, the terminal) and top_view.c (the hot
 * functions from the profile model, and the screen).
 *
 * The recorder (record.h) runs its own loop; every sample goes through the
 * pipeline (unwind/pipeline.h) with live memory (dump_live.c) into one
 * profile model (formats/output/aggregate.h) since the start.  A refresh
 * counts self and total samples per function over that model; the last
 * interval is the difference from the previous refresh.
 */
#ifndef LJSNAP_TOP_H
#define LJSNAP_TOP_H

#include <stdint.h>
#include <stdio.h>
#include <termios.h>
#include "daemon/record.h"
#include "formats/output/aggregate.h"
#include "symtab/intmap.h"
#include "unwind/pipeline.h"

#define TOP_VM_NONE	LJS_VM__MAX	/* samples without a LuaJIT state */

/* A process sampled. */
struct top_proc {
	uint32_t pid;
	char comm[LJS_COMM_LEN];
	char build[128];		/* LuaJIT build, "" when none */
	int described, exited;
	struct ljs_proc proc;		/* for the pipeline, once described */
	uint64_t all, prev, last;	/* samples: since the start, at the last refresh, in
					 * the last interval */
};

/* A function in the view. */
struct top_row {
	uint32_t id;			/* frame id (agg__frame_base) */
	uint64_t self, total;		/* in the last interval */
	uint64_t self_all, total_all;	/* since the start */
};

/* One way of counting frames: 0 mixed (native and Lua), 1 Lua only. */
struct top_mode {
	uint64_t *self_prev, *total_prev;	/* by frame id, at the last refresh */
	size_t nprev;
	struct top_row *rows;			/* of the last refresh, sorted */
	size_t nrows;
};

struct top {
	struct recorder rc;
	struct record_hooks hooks;
	struct ljs_pipe *pipe;
	struct ljs_pipe_out out;
	struct agg *agg;
	struct top_proc *procs;
	size_t nprocs, pcap;
	struct intmap bypid;		/* pid -> index into procs */
	/* options and keys */
	double interval;		/* seconds between refreshes */
	int once, tty, sort_total, lua_only, paused, quit;
	/* counts */
	uint64_t start_ns, next_ns, counters_ns, last_refresh_ns, interval_ns;
	uint64_t samples, samples_prev, samples_last;
	uint64_t lost, lost_prev, lost_last;
	uint64_t vm[LJS_VM__MAX + 1], vm_prev[LJS_VM__MAX + 1], vm_last[LJS_VM__MAX + 1];
	uint32_t freq;
	struct top_mode mode[2];
	int err;			/* -ENOMEM while counting */
	/* the terminal */
	int raw;
	struct termios saved;
	char target[256];
};

/* Count the functions of the model in both modes and take the last
 * interval's differences (top_view.c).  0 or -ENOMEM. */
int top_view__refresh(struct top *t, uint64_t now_ns);

/* Sort the rows of the last refresh again (t->sort_total changed). */
void top_view__sort(struct top *t);

/* Print the view: screen (ANSI escapes, fits 80x24) or plain text. */
void top_view__print(const struct top *t, FILE *out, int screen);

#endif
