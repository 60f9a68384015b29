#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The dependency order of the source tree, checked on every #include "...":
#
#   bpf/             the BPF program and the sample ABI: bpf/ only
#   symtab/          ELF files, build ids, CFI, symbols, lines, kernel
#                    symbols, the containers: symtab/ only (the leaf)
#   unwind/          the LuaJIT walk, traces, native unwinding, the pipeline;
#                    unwind/detect/ finds LuaJIT: unwind/, symtab/, bpf/
#                    (only unwind/detect/ includes unwind/detect/)
#   formats/capture/ the capture file: formats/capture/, unwind/, symtab/, bpf/
#   formats/output/  the outputs: formats/output/, the profile model's frame
#                    types (unwind/stack.h) and symtab/; no walker internals,
#                    no capture file
#   daemon/          the program: composes everything
#   tests/, bench/   anything but daemon/
# Nothing outside daemon/ includes daemon/.
#
#   check-layers.sh [DIR]   check the tree at DIR (default: the source tree)
#                           and, without DIR, that the check catches a bad
#                           include planted in a copy (so it cannot pass by
#                           checking nothing)
set -u
set -f	# the rules hold '*': no globbing
here=$(cd "$(dirname "$0")" && pwd)
. "$here/source-files.sh"

# allowed LAYER: the include prefixes a file of that layer may use
allowed() {
	case $1 in
	bpf) echo "bpf/" ;;
	symtab) echo "symtab/" ;;
	unwind/detect) echo "unwind/ symtab/ bpf/" ;;
	unwind) echo "unwind/!detect symtab/ bpf/" ;;
	formats/capture) echo "formats/capture/ unwind/!detect symtab/ bpf/" ;;
	formats/output) echo "formats/output/ unwind/stack.h symtab/" ;;
	daemon) echo "*" ;;
	tests | bench) echo "*!daemon" ;;
	esac
}

# layer FILE: the layer of a path relative to the root
layer() {
	case $1 in
	bpf/*) echo bpf ;;
	symtab/*) echo symtab ;;
	unwind/detect/*) echo unwind/detect ;;
	unwind/*) echo unwind ;;
	formats/capture/*) echo formats/capture ;;
	formats/output/*) echo formats/output ;;
	formats/*) echo formats/capture ;;	# a file beside the halves: the strictest half but one
	daemon/*) echo daemon ;;
	tests/*) echo tests ;;
	bench/*) echo bench ;;
	esac
}

# ok LAYER INCLUDE: 0 when LAYER may include INCLUDE
ok() {
	case $2 in
	config.h | lj_*.h | */ljsnap.skel.h) return 0 ;;	# generated, or LuaJIT's own
	esac
	case $2 in
	*/*) ;;
	*) return 0 ;;		# a file beside the includer (none in the tree today)
	esac
	for a in $(allowed "$1"); do
		case $a in
		'*') return 0 ;;
		'*!daemon') case $2 in daemon/*) return 1 ;; *) return 0 ;; esac ;;
		*!detect) case $2 in unwind/detect/*) ;; "${a%!detect}"*) return 0 ;; esac ;;
		*/) case $2 in "$a"*) return 0 ;; esac ;;
		*) [ "$2" = "$a" ] && return 0 ;;
		esac
	done
	return 1
}

# check ROOT: print every include a layer may not use; 0 when none
check() {
	root=$1
	bad=0
	files=$(source_files "$root" | grep -E '\.(c|h)$' | sort)
	n=0
	for f in $files; do
		l=$(layer "$f")
		[ -n "$l" ] || continue
		n=$((n + 1))
		for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$root/$f"); do
			ok "$l" "$inc" && continue
			echo "$f: includes \"$inc\": $l may include only $(allowed "$l" | sed 's/!detect//g; s/\*!daemon/anything but daemon\//')"
			bad=$((bad + 1))
		done
	done
	[ "$n" -gt 0 ] || { echo "no source files found under $root"; return 1; }
	echo "$n files, $bad includes against the layer order"
	[ "$bad" = 0 ]
}

if [ $# -gt 0 ]; then
	check "$1"
	exit $?
fi
top=${top_srcdir:-$here/..}
check "$top" || exit 1
# The check must catch a violation: plant one in a copy of a few files.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/symtab" "$tmp/formats/output" "$tmp/unwind"
printf '#include "unwind/ljwalk.h"\n' > "$tmp/symtab/planted.c"
printf '#include "formats/capture/snapfile.h"\n#include "unwind/ljwalk.h"\n' > "$tmp/formats/output/planted.c"
printf '#include "daemon/cmds.h"\n#include "unwind/detect/ljdetect.h"\n' > "$tmp/unwind/planted.c"
out=$(check "$tmp")
echo "$out" | grep -q '^symtab/planted.c: includes "unwind/ljwalk.h"' &&
	echo "$out" | grep -q '^formats/output/planted.c: includes "formats/capture/snapfile.h"' &&
	echo "$out" | grep -q '^formats/output/planted.c: includes "unwind/ljwalk.h"' &&
	echo "$out" | grep -q '^unwind/planted.c: includes "daemon/cmds.h"' &&
	echo "$out" | grep -q '^unwind/planted.c: includes "unwind/detect/ljdetect.h"' &&
	echo "$out" | grep -q ' 5 includes against the layer order' ||
	{ echo "the check missed a planted violation:"; echo "$out"; exit 1; }
echo "self-test: the 5 planted violations were caught"
