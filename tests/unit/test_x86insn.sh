#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# x86-64 instruction lengths (symtab/x86insn.h) against binutils: the
# instructions tests/unit/test_x86insn finds decoding each file's .text from
# its start must be objdump -d's, one for one: same addresses and lengths,
# the same ones RIP-relative, and a direct branch (call, jmp, jcc, loop)
# exactly where objdump shows one with a target address.  Files: the LuaJIT
# builds of tests/variants (upstream and luajit2, amalgamated or not),
# Debian's luajit and libluajit when installed, libc (hand-written SSE, AVX2
# and EVEX code), and ljsnap itself.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
T=$top_builddir/tests/unit/test_x86insn
TMPD=$(mktemp -d /tmp/ljsnap-x86insn.XXXXXX)
trap 'rm -rf "$TMPD"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v objdump >/dev/null 2>&1 || fail "objdump (binutils) is not installed"
command -v python3 >/dev/null 2>&1 || fail "python3 is not installed"
. "$top_srcdir/tests/variants/lib.sh"
"$T" || exit 1
files="$top_builddir/ljsnap $(readlink -f /lib/x86_64-linux-gnu/libc.so.6)"
for v in up-nogc64 or-dualnum up-amalg or-amalg; do
	dir=$(variant "$v") || exit 1
	files="$files $dir/luajit"
done
for f in /usr/bin/luajit /usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2; do
	[ -e "$f" ] && files="$files $(readlink -f "$f")"
done
rc=0
for f in $files; do
	"$T" "$f" > "$TMPD/mine" || fail "test_x86insn $f"
	objdump -d -w -j .text "$f" > "$TMPD/objdump" || fail "objdump $f"
	python3 - "$TMPD/mine" "$TMPD/objdump" "$f" <<'PY' || rc=1
import re, sys
mine = {}
for line in open(sys.argv[1]):
    p = line.split()
    if p[0] == 'ERR':
        print('FAIL: %s: cannot decode at %s' % (sys.argv[3], p[1])); sys.exit(1)
    mine[int(p[0], 16)] = tuple(int(x) for x in p[1:])
INS = re.compile(r'^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t?(.*)$')
BR = re.compile(r'^(?:(?:bnd|notrack|data16|rex\.W|cs|ds)\s+)*(call|jmp|j[a-z]+|loop[a-z]*|j[er]?cxz)\s+[0-9a-f]+(?:\s|$)')
n = bad = 0
for line in open(sys.argv[2]):
    m = INS.match(line)
    if not m:
        continue
    a, nb, txt = int(m.group(1), 16), len(m.group(2).split()), m.group(3)
    n += 1
    want = (nb, 1 if BR.match(txt) else 0, 1 if '(%rip)' in txt else 0)
    if mine.get(a) != want:
        bad += 1
        if bad <= 5:
            print('%s: %x: objdump %s %s, test_x86insn %s' % (sys.argv[3], a, want, txt, mine.get(a)))
print('# %s: %d instructions, %d differ, %d decoded' % (sys.argv[3], n, bad, len(mine)))
sys.exit(1 if bad or n != len(mine) or n < 1000 else 0)
PY
done
exit $rc
