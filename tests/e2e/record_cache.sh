#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The recorder's cache directory (daemon/cache.h, LJSNAP_CACHE_DIR): what a
# capture holds is the same with it as without it, and entries not to trust
# are not used.
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
#  4. the EMBED records of the mapped files (daemon/embed_cache.h): the
#     first recording makes them (STATS embedded_cached 0) and leaves them
#     under embed-SELF (the running ljsnap's build id), removing another
#     build's directory; the second takes them from there (embedded_cached
#     > 0) and its records are byte for byte the first's (build id, bits,
#     sizes, CRC32 of extents, data and names); an entry cut short or that
#     others may write is not used and is made again;
#  5. LJSNAP_CACHE_DIR= (empty) writes no cache.
# Presence only: no timings, no absolute counts.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
need_prog python3 python3
CAPSHOW=$top_builddir/tests/e2e/capshow
[ -x "$CAPSHOW" ] || fail "capshow not built ($CAPSHOW)"
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

# The checker: for every kernel ip of a capture (capshow' "ip" lines), the
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
	"$CAPSHOW" "$TMPD/$1.ljsnap" > "$TMPD/$1.ks" || fail "capshow $1 failed"
	python3 "$TMPD/truth.py" "$TMPD/$1.ks" > "$TMPD/$1.truth" ||
		{ cat "$TMPD/$1.truth" >&2; fail "$1: KSYMS do not answer as /proc/kallsyms does"; }
	note "$1: $(tr '\n' ' ' < "$TMPD/$1.truth")"
}

# 1. the first recording writes the copy, the second uses it
mkdir -m 0700 "$C" "$C/embed-0123456789abcdef"	# another ljsnap build's
touch "$C/embed-0123456789abcdef/00ff-3"
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

# 4. the embedded copies
cp "$good" "$C/kallsyms"
[ ! -e "$C/embed-0123456789abcdef" ] || fail "another build's embed directory was kept"
E=$(ls -d "$C"/embed-*)
[ "$(echo "$E" | wc -l)" = 1 ] || fail "not one embed directory: $E"
[ "$(stat -c %a "$E")" = 700 ] || fail "$E is $(stat -c %a "$E"), not 700"
embeds() { "$CAPSHOW" "$TMPD/$1.ljsnap" | grep '^embed ' | sort; }
embeds first > "$TMPD/first.emb"
[ -s "$TMPD/first.emb" ] || fail "the first capture has no EMBED record"
note "first: $(wc -l < "$TMPD/first.emb") EMBED records, $(ls "$E" | wc -l) entries in $E"
n=$(value embedded_cached "$TMPD/first.info")
[ "$n" = 0 ] || fail "first: $n embedded copies from the cache"
for t in second prefix; do
	n=$(value embedded_cached "$TMPD/$t.info")
	assert_ge "$n" 1 "$t: no embedded copy taken from the cache"
	embeds $t > "$TMPD/$t.emb"
	cmp -s "$TMPD/first.emb" "$TMPD/$t.emb" ||
		{ diff "$TMPD/first.emb" "$TMPD/$t.emb" >&2; fail "$t: EMBED records differ"; }
	note "$t: $n embedded copies from the cache, the same records"
done
# an entry cut short, and one others may write: neither is used
big=$(ls -S "$E" | head -1)
cp "$E/$big" "$TMPD/big.entry"
head -c $(( $(wc -c < "$TMPD/big.entry") - 1 )) "$TMPD/big.entry" > "$E/$big"
chmod 0666 "$E/$(ls -S "$E" | sed -n 2p)"
all=$(ls "$E" | wc -l)
rec badentry > /dev/null
n=$(value embedded_cached "$TMPD/badentry.info")
[ "$n" -eq $(( all - 2 )) ] || fail "badentry: $n copies from the cache, not $(( all - 2 ))"
embeds badentry > "$TMPD/badentry.emb"
cmp -s "$TMPD/first.emb" "$TMPD/badentry.emb" || fail "badentry: EMBED records differ"
cmp -s "$E/$big" "$TMPD/big.entry" || fail "badentry: the cut entry was not made again"
[ -z "$(find "$E" -type f -perm /022)" ] || fail "badentry: an entry others may write remains"

# 5. no cache when the directory is empty
rm -rf "$C"
LJSNAP_CACHE_DIR= rec none > /dev/null
[ ! -e "$C" ] || fail "LJSNAP_CACHE_DIR= wrote a cache"
[ "$(value embedded_cached "$TMPD/none.info")" = 0 ] || fail "none: copies from a cache"
exit 0
