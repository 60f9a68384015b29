/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ksyms.h -- kernel symbols: read from /proc/kallsyms while recording, kept
 * in the capture file (KSYMS records) for the kernel IPs actually seen, and
 * looked up from those records at report time.
 *
 * kallsyms has no sizes: the symbol of an ip is the one with the greatest
 * address <= ip, bounded by the next symbol.  So that the saved subset
 * answers exactly like the full table, ksyms__select keeps, for every symbol
 * an ip falls in, the symbol that follows it too.  Where several names share
 * an address (aliases), one is chosen as perf does: global before local,
 * then the fewest leading underscores, then the longest, then the first.
 *
 * Without root (or with kernel.kptr_restrict=2) every address in kallsyms
 * reads 0; ksyms__load reports that as -EPERM instead of a useless table.
 *
 * Recording: ksym_ipset__add every LJS_SEC_KSTACK ip as samples arrive; at
 * the end ksyms__load(NULL), ksyms__select(the set's values), and
 * snapfile_writer__ksyms in chunks of SNAPFILE_KSYMS_PER_REC.  Report:
 * ksyms__new, ksyms__add_records for each KSYMS record (they come at the end
 * of the file, after the samples), ksyms__finish, then ksyms__find.
 */
#ifndef LJSNAP_SYMTAB_KSYMS_H
#define LJSNAP_SYMTAB_KSYMS_H

#include <stddef.h>
#include <stdint.h>


struct ksym {
	uint64_t addr;
	const char *name;
	const char *module;	/* "" for vmlinux */
};

struct ksyms;

/* Read a kallsyms file (NULL = /proc/kallsyms) into a finished table.
 * Returns 0, -errno from open, -EPERM when every address is 0 (hidden:
 * run as root or set kernel.kptr_restrict=0), -ENODATA when it holds no
 * symbol, or -ENOMEM. */
int ksyms__load(const char *path, struct ksyms **out);

/* An empty table to fill with ksyms__add / ksyms__add_records. */
struct ksyms *ksyms__new(void);
void ksyms__delete(struct ksyms *k);

/* Add one symbol (strings copied); global: 1 for T/W/D... (upper case
 * kallsyms types), 0 for local.  0 or -ENOMEM. */
int ksyms__add(struct ksyms *k, uint64_t addr, const char *name, const char *module, int global);

/* Add the symbols of one KSYMS record (copied; records accumulate). */
int ksyms__add_records(struct ksyms *k, const struct ksym *v, size_t n);

/* Sort and pick one name per address; needed before lookups.  0 or -ENOMEM. */
int ksyms__finish(struct ksyms *k);

/* The symbol holding ip (greatest address <= ip), or NULL when ip is below
 * every symbol or the table is empty.  *off (if not NULL) = ip - addr. */
const struct ksym *ksyms__find(const struct ksyms *k, uint64_t ip, uint64_t *off);

/* Symbols in the table (after ksyms__finish). */
size_t ksyms__count(const struct ksyms *k);

/* The subset of k that resolves the given ips exactly as k does: each
 * symbol hit and its successor, in address order, without duplicates.  The
 * array is malloc'd (free() it); its strings point into k.  Ready for
 * snapfile_writer__ksyms (which takes at most SNAPFILE_KSYMS_PER_REC per
 * call).  0 or -ENOMEM. */
int ksyms__select(const struct ksyms *k, const uint64_t *ips, size_t n, struct ksym **out,
		  size_t *nout);

/* -- The kernel IPs seen while recording ------------------------------------ */

struct ksym_ipset;

struct ksym_ipset *ksym_ipset__new(void);
void ksym_ipset__delete(struct ksym_ipset *s);

/* Add one ip (0 is ignored).  0 or -ENOMEM. */
int ksym_ipset__add(struct ksym_ipset *s, uint64_t ip);

/* The distinct ips added so far (unordered; valid until the next add). */
const uint64_t *ksym_ipset__values(const struct ksym_ipset *s, size_t *n);

#endif /* LJSNAP_SYMTAB_KSYMS_H */
