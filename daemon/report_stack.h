/*
 * report_stack.h -- one stack for a sample: kernel frames, native frames
 * unwound with DWARF CFI, and the Lua frames spliced in where the
 * interpreter (or a trace) runs them.
 */
#ifndef LJSNAP_REPORT_STACK_H
#define LJSNAP_REPORT_STACK_H

#include <stdint.h>
#include "formats/output/aggregate.h"
#include "formats/capture/snapfile.h"
#include "symtab/buildid.h"
#include "unwind/ljwalk.h"
#include "unwind/proc.h"

#define RSTACK_LUA_ONLY		0x1	/* only Lua frames and pseudo frames */
#define RSTACK_NATIVE_ONLY	0x2	/* no Lua frames: VM activations as native symbols */
#define RSTACK_NO_KERNEL	0x4	/* no kernel frames */
#define RSTACK_LINES		0x8	/* native frames with their file:line (DWARF) */

struct rstack;

struct rstack_stats {
	uint64_t native;		/* samples unwound natively */
	uint64_t native_complete;	/* ... down to the outermost frame */
	uint64_t spliced;		/* samples whose Lua frames went to VM frames */
	uint64_t lua_unplaced;		/* ... with Lua activations left over (no VM frame) */
	uint64_t kernel;		/* samples with kernel frames */
	uint64_t ksym_missing;		/* kernel frames without a symbol */
};

/* files: where the recorded files are looked up (NULL: on this machine's /). */
struct rstack *rstack__new(unsigned flags, const struct buildid_opts *files);
void rstack__delete(struct rstack *r);

/* Resolve a PROCESS record's mappings into out (files looked up on this
 * machine); ljs_proc__exit frees them. */
int rstack__procmap(struct rstack *r, const struct snapfile_process *sp, struct ljs_proc *out);

/* An in-memory image from an OBJECT record (the vDSO): names the frames in
 * the mappings of its path.  Before the PROCESS records that map it. */
int rstack__image(struct rstack *r, const struct snapfile_object *o);

/* Kernel symbols from the file's KSYMS records; call __ksyms_done after
 * the last one. */
int rstack__ksyms(struct rstack *r, const struct snapfile_ksyms *k);
int rstack__ksyms_done(struct rstack *r);

/*
 * Unwind the sample natively (when its process has mappings), walk its Lua
 * frames with ms (when the process runs LuaJIT), and push the combined
 * stack (root frame `comm` first) into sb.  *lua is set to the Lua walk, or
 * NULL when there was none.  0 or negative errno.
 */
int rstack__build(struct rstack *r, struct agg *agg, struct agg_stack *sb, const char *comm,
		  const struct ljs_sample *s, const struct ljs_proc *p, struct ljw *w,
		  const struct memsrc *ms, struct ljw_stack *lst, const struct ljw_stack **lua);

const struct rstack_stats *rstack__stats(const struct rstack *r);

/* Files needed for native frames that were missing or of another build:
 * one line each via cb.  Returns how many. */
size_t rstack__missing(struct rstack *r, void (*cb)(void *arg, const char *line), void *arg);

#endif
