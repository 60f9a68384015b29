/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ksyms_cache.h -- a copy, for the current boot, of the core kernel's lines
 * of /proc/kallsyms, so that each recording's stop does not pay the kernel
 * formatting its 120,000 lines (about 30 ms of the recorder's CPU).
 *
 * The core kernel's symbols do not change while the system runs; modules,
 * BPF programs and trampolines come and go, so their lines are never kept,
 * and the copy answers only for ips in the core kernel's text: [lo, hi),
 * _stext (or _text) up to _etext.  Everything else above hi or below lo
 * (modules, BPF programs and trampolines live in the module area on x86-64,
 * above the kernel image) is checked when the copy is written: a line that
 * is not the core kernel's, inside [lo, hi], and no copy is written.
 *
 * The copy is one file, kallsyms, in the recorder's cache directory
 * (cache.h, which also says when a file there is trusted).  Its first line
 * says
 *   ljsnap-kallsyms 1 BOOT_ID LO HI BODY_BYTES
 * (hexadecimal LO and HI) and the body follows: the lines as kallsyms has
 * them.  It is used only when cache.h trusts the file, its boot id is the running kernel's, its size is what the
 * first line says, and its first lines are byte for byte the first lines
 * /proc/kallsyms shows now (so hidden addresses, kernel.kptr_restrict, turn
 * it off as they turn off kallsyms itself).
 */
#ifndef LJSNAP_DAEMON_KSYMS_CACHE_H
#define LJSNAP_DAEMON_KSYMS_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* The copy in dir: its body (malloc'ed, NUL-terminated) in *buf, *len bytes,
 * and the core kernel's text [*lo, *hi).  kallsyms is the live file to
 * compare with (NULL: /proc/kallsyms).  0; -ENOENT without a copy; -ESTALE
 * for one that is not for this boot, not whole, or not safe to trust;
 * -ENOMEM. */
int ksyms_cache__read(const char *dir, const char *kallsyms, char **buf, size_t *len,
		      uint64_t *lo, uint64_t *hi);

/* Write the copy of the kallsyms text buf (len bytes, as /proc/kallsyms
 * printed it) to dir, creating dir.  0; -ENODATA when the text has no
 * _stext/_etext, -EPERM when its addresses are hidden, -ERANGE when a line
 * that is not the core kernel's lies in its text; or -errno. */
int ksyms_cache__write(const char *dir, const char *buf, size_t len);

#endif
