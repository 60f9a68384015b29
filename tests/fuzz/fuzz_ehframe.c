/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_ehframe.c -- the .eh_frame parser (symtab/ehframe.h).  Input: u64
 * section address (DW_EH_PE_pcrel base), u8 flags (bit 0: 4-byte absptr as
 * ELF32), then the section bytes.  Every FDE is enumerated with its CIE and
 * its CFA program run; then the LuaJIT interpreter FDE is searched for.
 */
#include <stdint.h>
#include <string.h>

#include "symtab/ehframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int one_fde(const struct ehf_fde *fde, const struct ehf_cie *cie, void *arg)
{
	struct ehf_rules r;
	unsigned *n = arg;

	(void)ehframe__initial_rules(cie, fde, &r);
	return ++*n > 100000;	/* a bound of the harness only: the walk is bounded by size */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ehf_lj_vm vm;
	struct ehframe eh;
	struct ehf_cie cie;
	uint64_t vaddr = 0;
	unsigned n = 0;

	if (size < 9)
		return 0;
	memcpy(&vaddr, data, 8);
	ehframe__init(&eh, data + 9, size - 9, vaddr);
	if (data[8] & 1)
		eh.addr_size = 4;
	eh.text_base = (data[8] & 2) ? vaddr : 0;
	eh.data_base = (data[8] & 4) ? vaddr : 0;
	(void)ehframe__parse_cie(&eh, 0, &cie);
	(void)ehframe__parse_cie(&eh, data[8] >> 3, &cie);
	(void)ehframe__foreach_fde(&eh, one_fde, &n);
	(void)ehframe__find_lj_vm(&eh, &vm);
	return 0;
}
