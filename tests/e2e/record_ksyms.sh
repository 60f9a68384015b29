#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The kernel symbols of a capture, from /proc/kallsyms or from the per-boot
# copy of the core kernel's lines (daemon/ksyms_cache.h), against
# /proc/kallsyms itself (the ground truth), and the copy's checks:
#  1. a first recording reads /proc/kallsyms (STATS ksyms_cached 0) and
#     leaves the copy, mode 0600 in a 0700 directory; a second one takes
#     its symbols from the copy (ksyms_cached 1);
#  2. in both captures, for every kernel ip of the samples, the KSYMS
#     records hold the symbol /proc/kallsyms puts it in (the greatest
#     address <= ip) under one of that address's names, and the address
#     that bounds it (the next one): the subset answers as the whole table;
#  3. a copy of another boot, one cut short, one that others may write, or
#     one whose first lines differ from /proc/kallsyms now is not used (0)
#     and is written again, whole and 0600;
#  4. LJSNAP_CACHE_DIR= (empty) writes no copy.
# Presence only: no timings, no absolute counts.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
need_prog python3 python3
CAPKSYMS=$top_builddir/tests/e2e/capksyms
[ -x "$CAPKSYMS" ] || fail "capksyms not built ($CAPKSYMS)"
# system calls, so that the samples have kernel stacks
work='local t = os.clock() while os.clock() - t < 0.6 do
	local f = io.open("/proc/self/stat") f:read("*a") f:close() end'
C=$TMPD/cache
export LJSNAP_CACHE_DIR="$C"

# rec NAME: record the work into NAME.ljsnap; its ksyms_cached
rec() {
	"$LJSNAP" record -q -F 999 -o "$TMPD/$1.ljsnap" -- luajit -e "$work" 2> "$TMPD/$1.err" ||
		{ cat "$TMPD/$1.err" >&2; fail "record $1 failed"; }
	"$LJSNAP" info "$TMPD/$1.ljsnap" > "$TMPD/$1.info" || fail "info $1 failed"
	value ksyms_cached "$TMPD/$1.info"
}

# The checker: for every kernel ip of a capture (capksyms' "ip" lines), the
# KSYMS entries ("ksym" lines) hold its /proc/kallsyms symbol and the bound.
cat > "$TMPD/truth.py" <<'EOF'
import bisect, sys
names = {}
for line in open("/proc/kallsyms"):
    f = line.split()
    if len(f) >= 3:
        names.setdefault(int(f[0], 16), set()).add(f[2])
addrs = sorted(names)
ips, ks = [], {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "ip":
        ips.append(int(f[1], 16))
    elif f[0] == "ksym":
        ks[int(f[1], 16)] = f[2]
bad = 0
for a, n in ks.items():
    if n not in names.get(a, ()):
        print("ksym %x %s is not a kallsyms line" % (a, n)); bad += 1
checked = 0
for ip in ips:
    i = bisect.bisect_right(addrs, ip)
    if i == 0:
        continue
    checked += 1
    if addrs[i - 1] not in ks:
        print("ip %x: its symbol %x %s is missing" %
              (ip, addrs[i - 1], sorted(names[addrs[i - 1]])))
        bad += 1
    if i < len(addrs) and addrs[i] not in ks:
        print("ip %x: the bound %x is missing" % (ip, addrs[i])); bad += 1
print("ips %d\nchecked %d\nksyms %d\nbad %d" % (len(ips), checked, len(ks), bad))
sys.exit(1 if bad or not checked else 0)
EOF

# truth NAME: the KSYMS of NAME.ljsnap against /proc/kallsyms
truth() {
	"$CAPKSYMS" "$TMPD/$1.ljsnap" > "$TMPD/$1.ks" || fail "capksyms $1 failed"
	python3 "$TMPD/truth.py" "$TMPD/$1.ks" > "$TMPD/$1.truth" ||
		{ cat "$TMPD/$1.truth" >&2; fail "$1: KSYMS do not answer as /proc/kallsyms does"; }
	note "$1: $(tr '\n' ' ' < "$TMPD/$1.truth")"
}

# 1. the first recording writes the copy, the second uses it
[ "$(rec first)" = 0 ] || fail "the first recording did not read /proc/kallsyms"
[ -f "$C/kallsyms" ] || fail "no copy written in $C"
[ "$(stat -c %a "$C")" = 700 ] || fail "the copy's directory is $(stat -c %a "$C"), not 700"
[ "$(stat -c %a "$C/kallsyms")" = 600 ] || fail "the copy is $(stat -c %a "$C/kallsyms"), not 600"
[ "$(rec second)" = 1 ] || fail "the second recording did not use the copy"

# 2. ground truth, both ways
truth first
truth second

# 3. copies not to use: each is taken for stale and written again
good=$TMPD/good.kallsyms
cp "$C/kallsyms" "$good"
stale() {
	[ "$(rec "$1")" = 0 ] || fail "$1: a copy it should not trust was used"
	[ "$(stat -c %a "$C/kallsyms")" = 600 ] || fail "$1: the copy written again is not 0600"
	cmp -s "$C/kallsyms" "$good" || fail "$1: the copy written again differs from a good one"
	truth "$1"
}
sed '1s/ljsnap-kallsyms 1 [0-9a-f]/ljsnap-kallsyms 1 X/' "$good" > "$C/kallsyms"
stale otherboot
head -c $(( $(wc -c < "$good") - 100 )) "$good" > "$C/kallsyms"
stale cut
cp "$good" "$C/kallsyms"; chmod 0666 "$C/kallsyms"
stale writable
# the first address of the body changed (another kernel image, same boot id)
awk 'NR == 2 { $1 = "ffffffff80000000" } { print }' "$good" > "$C/kallsyms"
stale prefix

# 4. no copy when the directory is empty
rm -rf "$C"
LJSNAP_CACHE_DIR= rec none > /dev/null
[ ! -e "$C" ] || fail "LJSNAP_CACHE_DIR= wrote a copy"
exit 0
