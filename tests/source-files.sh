# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by tests/check-layers.sh and tests/check-sources.sh.
# source_files ROOT: the files of the tree at ROOT that the checks read, one
# per line: the ones git tracks (a build in the source tree generates others,
# e.g. bpf/ljsnap.skel.h), or every file of a tree without git.
source_files() {
	if [ -e "$1/.git" ]; then
		(cd "$1" && git ls-files bpf symtab unwind formats daemon tests bench .ci)
	else
		(cd "$1" && find bpf symtab unwind formats daemon tests bench .ci -type f 2>/dev/null)
	fi
}
