#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Compare one ljsnap capture of a Lua program with the ground truths taken
in the same run; bench/accuracy.sh runs it.

usage: accuracy.py NAME GT LUA_ONLY NATIVE_ONLY PERF_SCRIPT PID SAMPLES MISORDERED

GT: the in-process jit.profile collector's stacks (bench/accuracy/jitprof.lua),
    root first, frames SOURCE:LINEDEFINED.
LUA_ONLY, NATIVE_ONLY: `ljsnap report -f folded` with --lua-only and
    --native-only.  The samples in the collector's own functions (its
    callback, which jit.profile runs from a hook) are left out of ljsnap's
    Lua shares: the ground truth cannot see them.
SAMPLES, MISORDERED: what tests/e2e/stitch_order.awk counts on the mixed and
    --native-only views (samples unwound to _start, and those of them whose
    native frames sit around other VM activations than in --native-only).
PERF_SCRIPT: `perf script -F pid,ip,sym,dso` of perf record -a run at the
    same time (leaf only); PID: the profiled process.

Prints: the top-10 Lua functions by self and by inclusive share, ground
truth against ljsnap; the top-10 native leaves, perf against ljsnap; the
share of misordered stacks (tests/e2e/stitch_order.awk defines it)."""
import re
import sys
from collections import Counter

LUA_FRAME = re.compile(r'(?:^|[ <])([^\s<]+):(\d+)>?(?:_\[[ij]\])?$')
MAIN_CHUNK = re.compile(r'^main (\S+?)(?:_\[[ij]\])?$')
HEX = re.compile(r'^(\S+)\+0x[0-9a-f]+$')
COLLECTOR = re.compile(r'/accuracy/jitprof\.lua:[1-9]')
STRING_CHUNK = re.compile(r'\[string "(.*)"\]:(\d+)>?(?:_\[[ij]\])?$')


def folded(path, comm=None):
    """(frames, count) of a folded file, the comm root dropped."""
    out = []
    with open(path, errors='replace') as f:
        for line in f:
            stack, _, n = line.rstrip('\n').rpartition(' ')
            if not stack or not n.isdigit():
                continue
            frames = stack.split(';')
            if comm is not None:
                if frames[0] != comm:
                    continue
                frames = frames[1:]
            out.append((frames, int(n)))
    return out


def lua_key(frame):
    """SOURCE:LINEDEFINED of an ljsnap Lua frame, or None."""
    m = STRING_CHUNK.search(frame)	# a load()ed chunk: its source is the name
    if m:
        return '%s:%s' % (m.group(1), m.group(2))
    m = LUA_FRAME.search(frame)
    if m:
        return '%s:%s' % (m.group(1), m.group(2))
    m = MAIN_CHUNK.match(frame)	# 'main CHUNK': no line
    if m:
        return m.group(1) + ':0'
    return None


def shares(stacks, keyf):
    """Self and inclusive counts by key, and the total: the samples with a
    Lua frame (the only ones the in-process collector sees)."""
    selfc, incl, total = Counter(), Counter(), 0
    for frames, n in stacks:
        keys = [k for k in map(keyf, frames) if k is not None]
        if not keys:
            continue
        total += n
        selfc[keys[-1]] += n
        for k in set(keys):
            incl[k] += n
    return selfc, incl, total


def pct(c, t):
    return 100.0 * c / t if t else 0.0


def short(k, width=46):
    return k if len(k) <= width else '...' + k[-(width - 3):]


def table(title, a_name, a, at, b_name, b, bt, top=10):
    print('  %s' % title)
    print('    %-46s %8s %8s %7s' % ('function', a_name, b_name, 'diff'))
    worst = 0.0
    for k, c in a.most_common(top):
        pa, pb = pct(c, at), pct(b.get(k, 0), bt)
        worst = max(worst, abs(pa - pb))
        print('    %-46s %7.1f%% %7.1f%% %+6.1f' % (short(k), pa, pb, pb - pa))
    print('    largest difference in the top %d: %.1f points' % (top, worst))
    return worst


def native_key_ljsnap(frame, perf_names):
    """The leaf's key as perf would have it: a function perf has no name
    for (ljsnap names LuaJIT's internals in a stripped build, perf does
    not) goes to the bucket of perf's unnamed luajit code."""
    if frame.endswith('_[k]'):
        return frame[:-4] + ' [k]'
    if frame in ('[JIT code]',) or frame.startswith('[unknown]'):
        return '[JIT code or unknown]'
    if frame == '[LuaJIT interpreter]':
        return 'luajit (no symbol)'	# Debian's luajit is stripped: perf sees no name
    m = HEX.match(frame)
    if m:
        return m.group(1) + ' (no symbol)'
    if frame not in perf_names:
        return 'luajit (no symbol)'
    return frame


def perf_leaves(path, pid):
    """Leaf counts of pid in perf script -F pid,ip,sym,dso output."""
    c = Counter()
    with open(path, errors='replace') as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or parts[0] != pid:
                continue
            dso = parts[-1].strip('()')
            sym = ' '.join(parts[2:-1])
            base = dso.rsplit('/', 1)[-1]
            if dso == '[kernel.kallsyms]' or dso.startswith('[kernel'):
                key = (sym or '[unknown]') + ' [k]'
            elif sym and sym != '[unknown]':
                key = re.sub(r'\+0x[0-9a-f]+$', '', sym)
            elif base in ('[unknown]', '') or base.startswith('//anon') or \
                    base.startswith('[anon') or base.startswith('memfd') or \
                    re.match(r'perf-\d+\.map$', base):
                key = '[JIT code or unknown]'
            else:
                key = base + ' (no symbol)'
            c[key] += 1
    return c


def main():
    if len(sys.argv) != 9:
        sys.exit(__doc__)
    name, gt_p, lua_p, native_p, perf_p, pid, nsamples, nbad = sys.argv[1:]
    comm = 'luajit'
    gt = folded(gt_p)
    lua = folded(lua_p, comm)
    gself, gincl, gt_total = shares(gt, lambda fr: fr)
    # The collector's own functions (its jit.profile callback, run from a
    # hook with no caller below it, 2-5% of the samples): what ljsnap sees
    # of the measurement itself, never in the ground truth.
    lua = [(fr, n) for fr, n in lua if not any(COLLECTOR.search(x) for x in fr)]
    lself, lincl, l_total = shares(lua, lua_key)
    print('%s: samples with Lua frames: %d of the ground truth (jit.profile), %d of ljsnap' %
          (name, gt_total, l_total))
    w1 = table('Lua self share', 'truth', gself, gt_total, 'ljsnap', lself, l_total)
    w2 = table('Lua inclusive share', 'truth', gincl, gt_total, 'ljsnap', lincl, l_total)
    native = folded(native_p, comm)
    pl = perf_leaves(perf_p, pid)
    nl = Counter()
    for frames, n in native:
        if frames:
            nl[native_key_ljsnap(frames[-1], pl)] += n
    w3 = table('native leaf share', 'perf', pl, sum(pl.values()), 'ljsnap', nl,
               sum(nl.values()))
    bad, withlua = int(nbad), int(nsamples)
    print('  misordered: %d of %d samples unwound to _start (%.1f%%)' %
          (bad, withlua, pct(bad, withlua)))
    print('SUMMARY %s self %.1f incl %.1f native %.1f misordered %.1f%%' %
          (name, w1, w2, w3, pct(bad, withlua)))


if __name__ == '__main__':
    main()
