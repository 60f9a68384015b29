#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Print the instruction count of each program section of a BPF object (build-time report).
# usage: insn-count.sh LLVM_OBJDUMP OBJ
objdump=$1; obj=$2
"$objdump" -d --no-show-raw-insn "$obj" 2>/dev/null | awk '
	/^Disassembly of section/ { sec = $4; sub(":$", "", sec); next }
	/^[ \t]*[0-9]+:/ { n[sec]++; if ($0 ~ /ll$/) n[sec]++ }
	END { for (s in n) printf("  BPF %-28s %6d instructions\n", s, n[s]) }'
