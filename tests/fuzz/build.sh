#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build the libFuzzer targets (tests/fuzz/fuzz_*.c) with clang
# -fsanitize=fuzzer,address,undefined into DIR (default build-fuzz/ at the top
# of the tree), compiling the library sources each target needs directly:
# the normal (gcc, automake) build is not touched.  Needs Debian's clang and
# libclang-rt-14-dev (the libFuzzer runtime).
#   sh tests/fuzz/build.sh [DIR]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/build-fuzz}
CC=${CLANG:-clang}
mkdir -p "$out/obj"
command -v "$CC" >/dev/null 2>&1 || { echo "build.sh: $CC not found (apt-get install clang)" >&2; exit 1; }
# The libFuzzer runtime is a separate Debian package: say so, not a link error.
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; return (int)n & 0; }' \
	> "$out/probe.c"
"$CC" -fsanitize=fuzzer "$out/probe.c" -o "$out/probe" 2>/dev/null ||
	{ echo "build.sh: $CC cannot link -fsanitize=fuzzer (apt-get install libclang-rt-14-dev)" >&2; exit 1; }
# Only the capture writer includes config.h (PACKAGE_VERSION); none of the
# fuzzed sources do, but keep -I$out working for any that would.
[ -f "$out/config.h" ] || printf '#define PACKAGE_VERSION "fuzz"\n#define VERSION "fuzz"\n' > "$out/config.h"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CFLAGS="-g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror $SAN -I$top -I$out -D_GNU_SOURCE"

# obj SRC...: compile each library source once (instrumented for coverage).
objs=
obj() {
	objs=
	for s in "$@"; do
		o="$out/obj/$(echo "$s" | tr / _ | sed 's/\.c$/.o/')"
		if [ ! -f "$o" ] || [ "$top/$s" -nt "$o" ]; then
			# shellcheck disable=SC2086
			"$CC" $CFLAGS -fsanitize=fuzzer-no-link -c "$top/$s" -o "$o"
		fi
		objs="$objs $o"
	done
}
# target NAME LIBS SRC...: link tests/fuzz/fuzz_NAME.c with the sources.
target() {
	name=$1 libs=$2
	shift 2
	obj "$@"
	# shellcheck disable=SC2086
	"$CC" $CFLAGS -fsanitize=fuzzer "$top/tests/fuzz/fuzz_$name.c" $objs $libs -o "$out/fuzz_$name"
}

LJ="unwind/ljlayout.c unwind/ljlayout_fields.c unwind/sample.c unwind/memsrc.c unwind/memtable.c
	symtab/intmap.c symtab/vec.c"
target capture "-lz -lzstd" formats/capture/snapfile.c formats/capture/snapfile_read.c \
	formats/capture/snapfile_zread.c formats/capture/snapfile_decode.c formats/capture/mpread.c $LJ
WALK="unwind/ljdecode.c unwind/ljwalk.c unwind/ljwalk_ffnames.c unwind/ljwalk_fmt.c
	unwind/ljwalk_name.c unwind/ljwalk_proto.c unwind/ljwalk_trace.c unwind/ljwalk_resume.c
	unwind/ljtrace.c"
# shellcheck disable=SC2086
target ljwalk "" $LJ $WALK
target ljtrace "" $LJ unwind/ljtrace.c
target ehframe "" symtab/ehframe.c
target elf "-lelf" symtab/elf.c symtab/vec.c symtab/objfile.c symtab/buildid.c
# The seed maker for the walker and trace corpora (reads a capture).
obj formats/capture/snapfile.c formats/capture/snapfile_read.c formats/capture/snapfile_zread.c \
	formats/capture/snapfile_decode.c formats/capture/mpread.c $LJ $WALK
# shellcheck disable=SC2086
"$CC" $CFLAGS -fsanitize=fuzzer-no-link "$top/tests/fuzz/mkseed_lj.c" $objs -lz -lzstd -o "$out/mkseed_lj"
echo "build.sh: fuzz targets in $out"
