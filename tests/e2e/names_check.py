#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# names_check.py -- the checks of tests/e2e/names_stripped.sh: the names a
# stripped luajit's frames get, against its unstripped twin.
#
#   names_check.py STRIPPED FULL S.pb.gz S.folded F.folded
#
# STRIPPED is `objcopy --strip-all` of FULL (same build id, both named
# "luajit"); S.* are reports of a capture of STRIPPED (pprof: every frame
# once, at an address it was sampled at), F.folded the same capture
# reported with FULL in STRIPPED's place (ljsnap report --sysroot).
# Ground truth comes from binutils, not from ljsnap: `nm -S` of FULL (the
# symbol covering an address), `readelf -wf` of STRIPPED (FDE ranges),
# `readelf -lW` (PT_LOAD, file offset -> address).  Prints one "key value"
# line per measure:
#   wrong N        named luajit frames whose name is not FULL's symbol there
#   named N        luajit frames checked with a name
#   unnamed N      luajit frames named luajit+0xSTART
#   notstart N     of those, START not the first address of the FDE holding
#                  the frame's address (a name per address, not per function)
#   nofde N        of those, at an address no FDE holds (crt code run at
#                  exit: no function bounds to name it by)
#   unnamed_pct P  share of samples whose leaf is an unnamed luajit frame
#   leaf F S U     for the top 5 leaf functions of luajit in F.folded: the
#                  leaf share in S.folded (by name, the name without gcc's
#                  clone suffix, or the luajit+0xSTART of that function) S,
#                  and in F.folded U
import gzip, re, subprocess, sys

def run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i

def fields(b):
    """(field, wire type, value) of a protobuf message."""
    i, out = 0, []
    while i < len(b):
        k, i = varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        elif w == 1:
            v = b[i:i + 8]; i += 8
        elif w == 5:
            v = b[i:i + 4]; i += 4
        else:
            raise ValueError("wire type %d" % w)
        out.append((f, w, v))
    return out

def pprof_frames(path):
    """(mapping file, file offset, name of the native frame) per Location."""
    prof = fields(gzip.open(path).read())
    strs = [v.decode() for f, w, v in prof if f == 6]
    maps, funcs, out = {}, {}, []
    for f, w, v in prof:
        if f == 3:
            m = {k: x for k, _, x in fields(v)}
            maps[m.get(1)] = (m.get(2, 0), m.get(4, 0), strs[m.get(5, 0)])
        elif f == 5:
            g = {k: x for k, _, x in fields(v)}
            funcs[g.get(1)] = strs[g.get(2, 0)]
    for f, w, v in prof:
        if f != 4:
            continue
        loc = fields(v)
        d = {k: x for k, _, x in loc if k != 4}
        lines = [{k: x for k, _, x in fields(x)} for k, _, x in loc if k == 4]
        if d.get(2) not in maps or not lines:
            continue
        start, off, fname = maps[d[2]]
        # Lines innermost first: the last one is the native frame itself
        out.append((fname, d.get(3, 0) - start + off, funcs.get(lines[-1].get(1), "")))
    return out

def loads(path):
    segs = []
    for l in run("readelf", "-lW", path).splitlines():
        w = l.split()
        if w and w[0] == "LOAD":
            segs.append((int(w[1], 16), int(w[2], 16), int(w[4], 16)))
    return segs

def off2vaddr(segs, off):
    for o, va, sz in segs:
        if o <= off < o + sz:
            return va + off - o
    return off

def symbols(path):
    syms = []
    for l in run("nm", "-S", "--defined-only", path).splitlines():
        w = l.split()
        if len(w) == 4 and w[2] in "tTwWiI":
            syms.append((int(w[0], 16), int(w[1], 16), w[3]))
    return syms

def covering(syms, a):
    best = None
    for lo, sz, name in syms:
        if lo <= a < lo + sz and (best is None or sz < best[1]):
            best = (lo, sz, name)
    return best

def fdes(path):
    return [(int(a, 16), int(b, 16)) for a, b in
            re.findall(r"FDE .*pc=([0-9a-f]+)\.\.([0-9a-f]+)", run("readelf", "-wf", path))]

def leaves(folded):
    """Leaf shares: the innermost frame that is neither inlined nor kernel."""
    tot, lv = 0, {}
    for line in open(folded):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        fr = [x for x in stack.split(";") if not re.search(r"_\[[ik]\]$", x)]
        if fr:
            lv[fr[-1]] = lv.get(fr[-1], 0) + int(n)
            tot += int(n)
    return tot, lv

def same_function(name, sym):
    """name is sym, or sym is name with gcc's clone suffixes (hashkey.isra.0,
    lua_settop.part.0: a copy or a piece of that function)."""
    return sym == name or re.fullmatch(re.escape(name) +
                                       r"(\.(isra|constprop|part|cold)(\.[0-9]+)?)+", sym)


def main():
    stripped, full, spb, sfold, ffold = sys.argv[1:6]
    segs, syms, fd = loads(stripped), symbols(full), fdes(stripped)
    named = unnamed = notstart = wrong = nofde = 0
    for fname, off, name in pprof_frames(spb):
        if fname != stripped or name.startswith("["):
            continue
        a = off2vaddr(segs, off)
        m = re.match(r"luajit\+0x([0-9a-f]+)$", name)
        if m:
            unnamed += 1
            start = off2vaddr(segs, int(m.group(1), 16))
            if not any(lo <= a < hi for lo, hi in fd):
                nofde += 1	# no FDE holds it (crt code such as __do_global_dtors_aux)
                print("# no FDE: %s at 0x%x" % (name, a))
            elif not any(lo == start and lo <= a < hi for lo, hi in fd):
                notstart += 1
                print("# per-address: %s at 0x%x" % (name, a))
            continue
        named += 1
        s = covering(syms, a)
        if s is None or not same_function(name.split("+")[0], s[2]):
            wrong += 1
            print("# wrong: %s at 0x%x, unstripped: %s" % (name, a, s[2] if s else "(none)"))
    print("wrong %d\nnamed %d\nunnamed %d\nnotstart %d\nnofde %d" %
          (wrong, named, unnamed, notstart, nofde))
    stot, slv = leaves(sfold)
    un = sum(n for k, n in slv.items() if re.match(r"luajit\+0x", k))
    print("unnamed_pct %.1f" % (100.0 * un / max(stot, 1)))
    ftot, flv = leaves(ffold)
    byname = {name: lo for lo, sz, name in syms}
    internal = [k for k in sorted(flv, key=lambda k: -flv[k]) if k in byname][:5]
    for k in internal:
        alias = "luajit+0x%x" % byname[k]	# that function, unnamed in the stripped run
        for o, va, sz in segs:
            if va <= byname[k] < va + sz:
                alias = "luajit+0x%x" % (byname[k] - va + o)
        s = slv.get(alias, 0) + sum(n for name, n in slv.items() if same_function(name, k))
        print("leaf %s %.1f %.1f" % (k, 100.0 * s / max(stot, 1), 100.0 * flv[k] / max(ftot, 1)))

if __name__ == "__main__":
    main()
