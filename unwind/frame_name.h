/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * frame_name.h -- the names of the walker's frames, by the rules of
 * unwind/stack.h (the pipeline names native and kernel frames itself).
 */
#ifndef LJSNAP_UNWIND_FRAME_NAME_H
#define LJSNAP_UNWIND_FRAME_NAME_H

#include <stddef.h>

#include "unwind/ljwalk.h"
#include "unwind/stack.h"

#define LJS_NAME_LINES	0x1	/* name Lua frames by current line, not by function */
#define LJS_NAME_CALLSITE 0x2	/* name Lua functions by their call site, not by
				 * where they are defined */

/* The name a Lua function frame shows: where the function is defined
 * (ljw_frame.defname), else what its call site calls it (ljw_frame.name;
 * only that with LJS_NAME_CALLSITE), else NULL (then 'function <chunk:line>'). */
const char *ljs_name__func(const struct ljw_frame *f, unsigned flags);

/* Name a walker frame (flags: LJS_NAME_*) into buf, NUL-terminated, cut to
 * size - 1 bytes.  Returns the length.  Not yet folded-safe: the profile
 * (formats/output/aggregate.h) makes every name safe when it interns it. */
size_t ljs_name__lua(const struct ljw_frame *f, unsigned flags, char *buf, size_t size);

/* The same, naming a C function (LJW_FRAME_C) cname instead of C:0xADDRESS
 * when cname is not NULL: its symbol, or module+0xoffset where there is none
 * (unwind/pipeline.c finds them). */
size_t ljs_name__lua_as(const struct ljw_frame *f, const char *cname, unsigned flags, char *buf,
			size_t size);

/* The kind of a walker frame. */
enum ljs_fkind ljs_name__lua_kind(const struct ljw_frame *f);

/*
 * A builtin's library name from the symbol of its C function, as LuaJIT's
 * buildvm names them (lj_cf_os_clock -> os.clock, lj_ffh_string_byte ->
 * string.byte, lj_cf_ffi_meta___call -> ffi.meta.__call, lj_ffh_assert ->
 * assert).  0 when the symbol is not such a name.
 */
int ljs_name__ffsym(const char *sym, char *buf, size_t size);

#endif /* LJSNAP_UNWIND_FRAME_NAME_H */
