/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ehframe.h -- a bounded parser for .eh_frame (CIE/FDE records).
 *
 * Enough of the format to enumerate FDEs with their pc ranges and CIEs,
 * summarize the CFA rules in force at an FDE's first address, and find
 * LuaJIT's interpreter in a stripped binary through its distinctive FDE.
 * Every length and pointer in the section is checked against its bounds;
 * a malformed record ends the walk with -EINVAL, never a wild read.
 * Full native unwinding (DWARF CFI at arbitrary pcs) belongs to unwind/.
 */
#ifndef LJSNAP_SYMTAB_EHFRAME_H
#define LJSNAP_SYMTAB_EHFRAME_H

#include <stddef.h>
#include <stdint.h>

/* DW_EH_PE_* pointer encodings. */
#define EHF_PE_ABSPTR	0x00
#define EHF_PE_ULEB128	0x01
#define EHF_PE_UDATA2	0x02
#define EHF_PE_UDATA4	0x03
#define EHF_PE_UDATA8	0x04
#define EHF_PE_SLEB128	0x09
#define EHF_PE_SDATA2	0x0a
#define EHF_PE_SDATA4	0x0b
#define EHF_PE_SDATA8	0x0c
#define EHF_PE_PCREL	0x10
#define EHF_PE_TEXTREL	0x20
#define EHF_PE_DATAREL	0x30
#define EHF_PE_FUNCREL	0x40
#define EHF_PE_ALIGNED	0x50
#define EHF_PE_INDIRECT	0x80
#define EHF_PE_OMIT	0xff

/* x86_64 DWARF register numbers. */
enum ehf_reg {
	EHF_REG_RAX = 0, EHF_REG_RDX, EHF_REG_RCX, EHF_REG_RBX, EHF_REG_RSI, EHF_REG_RDI,
	EHF_REG_RBP, EHF_REG_RSP, EHF_REG_R8, EHF_REG_R9, EHF_REG_R10, EHF_REG_R11,
	EHF_REG_R12, EHF_REG_R13, EHF_REG_R14, EHF_REG_R15, EHF_REG_RIP,
	EHF_NREGS
};

/* The section to parse (data is borrowed, not copied). */
struct ehframe {
	const uint8_t *data;
	size_t size;
	uint64_t vaddr;		/* link-time address of data[0] (DW_EH_PE_pcrel) */
	uint64_t text_base;	/* DW_EH_PE_textrel base (0 if unknown) */
	uint64_t data_base;	/* DW_EH_PE_datarel base (0 if unknown) */
	uint8_t addr_size;	/* bytes of DW_EH_PE_absptr: 8 (or 4 for ELF32) */
};

struct ehf_cie {
	uint64_t offset;	/* section offset of the record */
	uint8_t version;
	char aug[16];		/* augmentation string (truncated if longer) */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc, lsda_enc, per_enc;
	uint8_t has_personality, signal_frame;
	uint64_t personality;	/* decoded (for indirect encodings: address of the pointer) */
	const uint8_t *insns;	/* initial instructions */
	size_t insns_len;
};

struct ehf_fde {
	uint64_t offset;	/* section offset of the record */
	uint64_t cie_offset;
	uint64_t pc_lo, pc_hi;	/* [pc_lo, pc_hi), link-time addresses */
	uint8_t has_lsda;
	uint64_t lsda;
	const uint8_t *insns;
	size_t insns_len;
};

/* CFA rules in force at an FDE's first address (CIE + FDE instructions up to
 * the first advance), plus counts over the whole FDE program. */
struct ehf_rules {
	uint32_t cfa_reg;
	int64_t cfa_off;
	uint8_t cfa_is_expr;
	uint8_t saved[EHF_NREGS];	/* 1: register saved at CFA + off[r] */
	int64_t off[EHF_NREGS];
	uint32_t nadvance;		/* DW_CFA_advance_loc* / set_loc in the FDE */
	uint32_t nother;		/* FDE ops other than def_cfa*, offset*, nop, advance */
};

/* Fill eh for a section with the usual x86_64 defaults. */
void ehframe__init(struct ehframe *eh, const uint8_t *data, size_t size, uint64_t vaddr);

/* Parse the CIE at section offset off.  Returns 0 or -EINVAL. */
int ehframe__parse_cie(const struct ehframe *eh, uint64_t off, struct ehf_cie *cie);

/* Call cb for each FDE in section order (a zero terminator ends the walk);
 * a non-zero return from cb stops and is returned.  Returns 0 at the end,
 * or -EINVAL on the first malformed record. */
int ehframe__foreach_fde(const struct ehframe *eh,
			 int (*cb)(const struct ehf_fde *fde, const struct ehf_cie *cie, void *arg),
			 void *arg);

/* Run the CIE and FDE programs (see struct ehf_rules).  Returns 0 or -EINVAL
 * on a malformed or unsupported instruction. */
int ehframe__initial_rules(const struct ehf_cie *cie, const struct ehf_fde *fde,
			   struct ehf_rules *out);

/* -- LuaJIT's interpreter ------------------------------------------------ */

/* buildvm gives the whole interpreter one FDE under a CIE with a personality
 * ("zPR"), whose program is only DW_CFA_def_cfa_offset CFRAME_SIZE plus
 * offset rules for rbp, rbx, r15, r14 (and r13, r12 with NO_UNWIND); the
 * rbp-based FDE of lj_vm_ffi_call, when the FFI is built in, starts where it ends. */
struct ehf_lj_vm {
	uint64_t lo, hi;	/* [lo, hi): the VM, including lj_vm_ffi_call if has_ffi */
	uint64_t main_hi;	/* end of the main FDE (= lj_vm_ffi_call when has_ffi) */
	uint8_t has_ffi;
	uint8_t no_unwind;	/* r12/r13 saved too (LUAJIT_NO_UNWIND) */
	uint32_t cfa_offset;	/* interpreter C-frame size: 80, 96, ... */
	uint64_t fde_offset;	/* section offsets of the FDEs */
	uint64_t ffi_fde_offset;
	uint64_t personality;	/* lj_err_unwind_dwarf (or its GOT slot if indirect) */
	unsigned ncandidates;	/* FDEs that looked like a VM (> 1: several copies) */
};

/* Find the VM FDE (the largest one if several).  Returns 0, -ENOENT when
 * there is none, or -EINVAL when the section is malformed before one is found. */
int ehframe__find_lj_vm(const struct ehframe *eh, struct ehf_lj_vm *out);

#endif /* LJSNAP_SYMTAB_EHFRAME_H */
