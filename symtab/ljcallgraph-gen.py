#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ljcallgraph-gen.py -- write symtab/ljcg_*.h, the source call graph of one
LuaJIT source tree, for symtab/ljcallgraph.c.

usage: ljcallgraph-gen.py SRCDIR IDENT XCFLAGS [XCFLAGS ...] > symtab/ljcg_IDENT.h

SRCDIR is an unpacked LuaJIT source (the top directory, with src/), IDENT
the C identifier of the data (e.g. upstream_2022).  The tree is built once
per XCFLAGS argument ("" for the default build), each time as
`make BUILDMODE=static CCOPT="-O0 -fno-inline"` in a copy of SRCDIR: without
optimisation or inlining every direct call of the C source (macros
expanded, under that build's #if) is a call instruction of the one function
that makes it.  The graph is the union of the direct calls and jumps
(`objdump -d`) from each function to another, or to itself, over all
builds, so that it holds every call any of those configurations makes; and
apart from them, the references: each function's leas of a function's first
address, or of a data object holding function pointers (its
R_X86_64_RELATIVE relocations: the builds are PIE, gcc's default on
Debian), which stand for every function it holds.  The functions declared
LJ_NOINLINE in the sources are marked: the compiler never inlines them, so
symtab/ljcallgraph.c does not look through them.

Needs gcc, make, objdump (binutils).  Deterministic: the same source and
compiler give the same header.
"""
import bisect
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ljgen  # noqa: E402  (symtab/ljgen.py, beside this script)

FUNC = re.compile(r'^[0-9a-f]+ <([^>]+)>:$')
BRANCH = re.compile(r'^\s*[0-9a-f]+:\s+(?:call|jmp|j[a-z]+)\s+[0-9a-f]+ <([^>+]+)>$')
ADDR = re.compile(r'^\s*[0-9a-f]+:\s+lea\s+-?0x[0-9a-f]+\(%rip\),%[a-z0-9]+\s+# [0-9a-f]+ <([^>+]+)(?:\+0x[0-9a-f]+)?>$')
REF = 0x8000
CALLER = 0x4000
IDENT = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
NOINLINE = re.compile(r'LJ_NOINLINE[^;{(]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\(')
SKIP = {'_start', '_init', '_fini', 'deregister_tm_clones', 'register_tm_clones',
        '__do_global_dtors_aux', 'frame_dummy'}


def tables_of(binary, addr_of):
    """The function addresses stored in each data object of binary: its
    R_X86_64_RELATIVE relocations that point at a function (a PIE build)."""
    objs = []
    for line in subprocess.run(['nm', '-S', '--defined-only', binary], capture_output=True,
                               text=True, check=True).stdout.split('\n'):
        f = line.split()
        if len(f) == 4 and f[2] in 'dDrRbB' and IDENT.match(f[3]):
            objs.append((int(f[0], 16), int(f[1], 16), f[3]))
    objs.sort()
    starts = [o[0] for o in objs]
    funcs_at = {a: n for n, a in addr_of.items()}
    tables = {}
    for line in subprocess.run(['readelf', '-rW', binary], capture_output=True, text=True,
                               check=True).stdout.split('\n'):
        f = line.split()
        if len(f) != 4 or f[2] != 'R_X86_64_RELATIVE' or int(f[3], 16) not in funcs_at:
            continue
        at = int(f[0], 16)
        k = bisect.bisect_right(starts, at) - 1
        if k >= 0 and at < objs[k][0] + objs[k][1]:
            tables.setdefault(objs[k][2], set()).add(funcs_at[int(f[3], 16)])
    return tables


def edges_of(binary, graph, refs):
    """Add to graph the direct calls and jumps between functions of binary,
    and the references to functions' addresses: a lea of a function's first
    address (a callback argument, a stored pointer), or of a data object
    holding function pointers (a table such as lib_init.c's lj_lib_load,
    whose loop an optimised build may unroll into direct references).  An
    optimised build may turn a reference into a call (constant propagation),
    but a function is not inlined where only its address is taken: refs
    holds these apart from graph's calls."""
    cur = None
    out = subprocess.run(['objdump', '-d', '--no-show-raw-insn', binary],
                         capture_output=True, text=True, check=True).stdout.split('\n')
    addr_of = {}
    for line in out:
        m = FUNC.match(line)
        if m and IDENT.match(m.group(1)) and m.group(1) not in SKIP:
            addr_of[m.group(1)] = int(line.split()[0], 16)
    tables = tables_of(binary, addr_of)
    for line in out:
        m = FUNC.match(line)
        if m:
            cur = m.group(1) if m.group(1) in addr_of else None
            if cur:
                graph.setdefault(cur, set())
            continue
        m = BRANCH.match(line)
        if cur and m and IDENT.match(m.group(1)) \
                and m.group(1) not in SKIP:
            graph[cur].add(m.group(1))
            graph.setdefault(m.group(1), set())
            continue
        m = ADDR.match(line)
        if cur and m:
            refs.setdefault(cur, set()).update(
                t for t in ({m.group(1)} if m.group(1) in addr_of else
                            tables.get(m.group(1), ())) if t != cur)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    srcdir, ident, configs = sys.argv[1], sys.argv[2], sys.argv[3:]
    graph = {}
    refs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for cfg in configs:
            tree = os.path.join(tmp, 'src')
            shutil.rmtree(tree, ignore_errors=True)
            shutil.copytree(srcdir, tree, symlinks=True)
            subprocess.run(['make', '-C', os.path.join(tree, 'src'), 'clean'],
                           capture_output=True, check=False)
            subprocess.run(['make', '-C', os.path.join(tree, 'src'), '-j2', 'BUILDMODE=static',
                            'CCOPT=-O0 -fno-inline', 'XCFLAGS=' + cfg, 'Q=', 'E=@:'],
                           capture_output=True, check=True)
            edges_of(os.path.join(tree, 'src', 'luajit'), graph, refs)
    noinline = set()
    src = os.path.join(srcdir, 'src')
    for f in sorted(os.listdir(src)):
        if f.endswith(('.c', '.h')):
            with open(os.path.join(src, f), encoding='latin-1') as fh:
                noinline.update(NOINLINE.findall(fh.read()))
    names = sorted(graph)
    index = {n: i for i, n in enumerate(names)}
    edges = sorted(set((index[a], index[b]) for a in names for b in graph[a]) |
                   set((index[a], index[b] | REF) for a in refs for b in refs[a]
                       if b not in graph[a]))
    if len(names) >= CALLER:
        sys.exit('too many functions for 14-bit indices')
    w = sys.stdout.write
    w('/* SPDX-License-Identifier: GPL-2.0-or-later */\n')
    origin = ljgen.origin(srcdir)
    w('/* Generated by symtab/ljcallgraph-gen.py from %s,\n * builds with XCFLAGS %s.\n'
      % (origin, ', '.join('"%s"' % c for c in configs)))
    w(' * Data for symtab/ljcallgraph.c (included there only): the functions\n'
      ' * of that LuaJIT source ("!" before a name: LJ_NOINLINE), sorted, and\n'
      ' * the direct calls between them: each caller\'s index ORed with 0x4000\n'
      ' * (LJCG_CALLER), callers ascending, then its callees\' indices; a callee\n'
      ' * index ORed with 0x8000 (LJCG_REF) is a reference to its address\n'
      ' * only. */\n')
    w('static const char ljcg_%s_names[] =' % ident)
    line = ''
    for n in names:
        item = '"%s%s\\0"' % ('!' if n in noinline else '', n)
        if len(line) + len(item) + 1 > 128:
            w('\n\t' + line.rstrip())
            line = ''
        line += item + ' '
    w('\n\t' + line.rstrip() + ';\n')
    w('#define LJCG_%s_NAMES %d\n' % (ident.upper(), len(names)))
    calls, cur = [], None
    for a, b in edges:
        if a != cur:
            calls.append(a | CALLER)
            cur = a
        calls.append(b)
    w('static const uint16_t ljcg_%s_calls[] = {' % ident)
    line = ''
    for v in calls:
        item = '%d,' % v
        if len(line) + len(item) > 128:
            w('\n\t' + line)
            line = ''
        line += item
    w('\n\t' + line + '\n};\n')


if __name__ == '__main__':
    main()
