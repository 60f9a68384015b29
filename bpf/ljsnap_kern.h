/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ljsnap_kern.h -- the few kernel types the BPF program touches, declared
 * for CO-RE.  libbpf relocates every field access against the running
 * kernel's BTF at load time, so nothing here depends on the headers of the
 * kernel that built ljsnap (no vmlinux.h).
 */
#ifndef LJSNAP_KERN_H
#define LJSNAP_KERN_H

struct mm_struct {
	unsigned long start_stack;	/* the initial user sp: argc, then argv[], envp[], auxv */
} __attribute__((preserve_access_index));

struct task_struct {
	unsigned int flags;
	struct mm_struct *mm;
	int pid;
	int tgid;
	char comm[16];
	struct task_struct *real_parent;
	struct task_struct *group_leader;
	int exit_code;
} __attribute__((preserve_access_index));

#define LJS_PF_KTHREAD 0x00200000	/* include/linux/sched.h, stable ABI of the flag word */

#endif /* LJSNAP_KERN_H */
