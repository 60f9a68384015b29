/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * info.h -- `ljsnap info FILE`: what a capture file holds.
 */
#ifndef LJSNAP_INFO_H
#define LJSNAP_INFO_H

#include <stdio.h>

/* Print the header, processes (with LuaJIT build and layout summary), record
 * counts per kind, samples per pid, memory bytes, the last statistics and any
 * truncation/corruption notes of the capture file at path to out.  Returns 0
 * (even when the file is truncated or has corrupt records: the notes say so)
 * or a negative error when the file cannot be opened as a capture file; the
 * reason is then printed to stderr. */
int snapfile__print_info(const char *path, FILE *out);

#endif /* LJSNAP_INFO_H */
