#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# names_unrecover.py -- put back, in folded stacks, FILE+0xSTART for every
# frame of FILE that ljsnap named without a symbol of FILE's: the names
# symtab/funcs.h recovers for a stripped LuaJIT (IR call table, calls,
# library tables).
#
#   names_unrecover.py FILE PPROF < IN.folded > OUT.folded
#
# So a stack can be compared with a ground truth (gdb) that names such a
# function FILE+0xSTART, START the first address of its .eh_frame FDE
# (readelf -wf), as tests/e2e/stitch_lib.sh's gdb helper does.  PPROF is
# `ljsnap report -f pprof` of the same capture: each of FILE's named frames,
# at an address it was sampled at, gives that name's function.  The names
# themselves are checked against unstripped twins by names_stripped.sh.
# Exits 1 if one name stands for two functions of FILE.
import os, re, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from names_check import fdes, loads, off2vaddr, pprof_frames, run

def main():
    path, pprof = sys.argv[1:3]
    base = os.path.basename(path)
    dyn = set()
    for l in run("nm", "-D", "--defined-only", path).splitlines():
        w = l.split()
        if len(w) == 3:
            dyn.add(w[2].split("@")[0])
    segs, fd, back = loads(path), fdes(path), {}
    for fname, off, name in pprof_frames(pprof):
        if os.path.basename(fname) != base or not re.match(r"[A-Za-z_][A-Za-z0-9_.]*$", name) \
                or name in dyn:
            continue
        a = off2vaddr(segs, off)
        start = next((lo for lo, hi in fd if lo <= a < hi), None)
        if start is None:
            continue
        alias = "%s+0x%x" % (base, start)
        if back.setdefault(name, alias) != alias:
            sys.exit("names_unrecover.py: %s names both %s and %s" % (name, back[name], alias))
    for line in sys.stdin:
        stack, _, n = line.rstrip("\n").rpartition(" ")
        print(";".join(back.get(f, f) for f in stack.split(";")) + " " + n)

main()
