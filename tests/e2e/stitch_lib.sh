# SPDX-License-Identifier: GPL-2.0-or-later
# stitch_lib.sh -- helpers of the stitched-stack tests (sourced after lib.sh):
# a gdb Python helper that prints ground-truth native stacks, and the
# tally/check of folded stacks against a list of expected ones.

# gdb_helper: write $TMPD/gt.py, the gdb side: one line per ground-truth
# stack, "GT tag tail frames" with the frames root first, named like ljsnap
# names them (the symbol, else FILE+0xSTART of the function holding pc - 1
# for a return address: START its .eh_frame FDE's first address as readelf
# reads it, an offset from the file's lowest mapping, as symtab/funcs.h does).
gdb_helper() {
	cat > "$TMPD/gt.py" <<'EOF'
import gdb, os, re, subprocess

lh_fdes = {}

def lh_fde_start(path, off):
    """The first address of the FDE that covers off (link-time), or off."""
    if path not in lh_fdes:
        out = subprocess.run(["readelf", "-wf", path], capture_output=True, text=True).stdout
        lh_fdes[path] = [(int(a, 16), int(b, 16))
                         for a, b in re.findall(r"FDE .*pc=([0-9a-f]+)\.\.([0-9a-f]+)", out)]
    for lo, hi in lh_fdes[path]:
        if lo <= off < hi:
            return lo
    return off

def lh_maps():
    out = []
    for line in gdb.execute("info proc mappings", to_string=True).splitlines():
        w = line.split()
        if len(w) >= 6 and w[0].startswith("0x") and w[5].startswith("/"):
            out.append((int(w[0], 16), int(w[1], 16), w[5]))
    return out

def lh_name(f, lvl, maps):
    if f.name():
        return f.name()
    pc = f.pc() - (1 if lvl else 0)
    for lo, hi, path in maps:
        if lo <= pc < hi:
            base = min(m[0] for m in maps if m[2] == path)
            return "%s+0x%x" % (os.path.basename(path), lh_fde_start(path, pc - base))
    return "0x%x" % pc

def lh_frames():
    maps, out = lh_maps(), []
    f, lvl = gdb.newest_frame(), 0
    while f is not None and lvl < 64:
        out.append(lh_name(f, lvl, maps))
        f, lvl = f.older(), lvl + 1
    return out

def lh_bt(tag):
    print("GT %s - %s" % (tag, ";".join(reversed(lh_frames()))))

def lh_ra():
    sp = int(gdb.parse_and_eval("$sp"))
    return int(gdb.parse_and_eval("*(unsigned long *)%d" % sp))

def lh_lua_call():
    f = gdb.newest_frame()
    caller = f.older()
    tag = "c" if caller is not None and caller.name() == "c_call_back" else "d"
    frames, cpc = lh_frames(), caller.pc() if caller is not None else 0
    for _ in range(1000):
        if gdb.newest_frame().name() != "lua_call":
            break
        gdb.execute("nexti", to_string=True)
    print("GT %s %s %s" % (tag, "yes" if lh_ra() == cpc else "no", ";".join(reversed(frames))))

def lh_until_pcall(maxn=500):
    """Continue until the stop is below a lua_pcall (the script's code)."""
    for _ in range(maxn):
        f, names = gdb.newest_frame(), []
        while f is not None and len(names) < 64:
            names.append(f.name())
            f = f.older()
        if "lua_pcall" in names:
            return
        gdb.execute("continue", to_string=True)
    raise gdb.GdbError("no stop below lua_pcall")

def lh_trace_ra(tag):
    ra = lh_ra()
    where = [m[2] for m in lh_maps() if m[0] <= ra < m[1]]
    print("GT %s %s -" % (tag, os.path.basename(where[0]) if where else "anon"))
EOF
}

# unrecover FILE CAP PID FOLDED: FILE's frames in FOLDED that ljsnap named
# without a symbol of FILE's (a stripped LuaJIT's recovered names,
# symtab/funcs.h) back to FILE+0xSTART, as the gdb helper names them
# (tests/e2e/names_unrecover.py; the names are checked by names_stripped.sh).
unrecover() {
	"$LJSNAP" report -f pprof --pid "$3" -o "$TMPD/unrecover.pb.gz" "$2" 2> /dev/null ||
		fail "ljsnap report -f pprof of $2 failed"
	python3 "$top_srcdir/tests/e2e/names_unrecover.py" "$1" "$TMPD/unrecover.pb.gz" \
		< "$4" > "$4.unrecovered" || fail "names_unrecover.py $1 failed"
	mv "$4.unrecovered" "$4"
}

# tally CASE VIEW FOLDED: compare the folded stacks with $TMPD/CASE.expect
# (lines "branch<TAB>view<TAB>stack", root first, or a marker "@F": a sample
# with frame F belongs to the branch; "@!F": one whose last frame is F).
# Kernel frames after the leaf are dropped first.  Writes "branch samples
# exact" per branch (in the order of the expect file), "total N" and
# "other N" (samples of no branch) to $TMPD/CASE.VIEW.tally, and the stacks
# that are in a branch but not exact to $TMPD/CASE.VIEW.bad.
tally() {
	awk -F '\t' -v view="$2" -v bad="$TMPD/$1.$2.bad" '
	FILENAME != ARGV[2] {
		if ($2 != view) next
		if (!($1 in seen)) { seen[$1] = 1; order[++nb] = $1 }
		if (substr($3, 1, 2) == "@!") leafm[substr($3, 3)] = $1
		else if (substr($3, 1, 1) == "@") mark[substr($3, 2)] = $1
		else want[$1 SUBSEP $3] = 1
		next
	}
	{
		line = $0; c = line; sub(/.* /, "", c); sub(/ [0-9]+$/, "", line)
		total += c
		while (line ~ /;[^;]*_\[k\]$/) sub(/;[^;]*_\[k\]$/, "", line)
		n = split(line, f, ";"); b = ""
		for (j = 1; j <= n && b == ""; j++) if (f[j] in mark) b = mark[f[j]]
		if (b == "" && (f[n] in leafm)) b = leafm[f[n]]
		if (b == "") { other += c; next }
		cls[b] += c
		if ((b SUBSEP line) in want) ok[b] += c
		else printf "%d\t%s\t%s\n", c, b, line > bad
	}
	END {
		for (i = 1; i <= nb; i++) printf "%s %d %d\n", order[i], cls[order[i]], ok[order[i]]
		printf "total %d\nother %d\n", total, other
	}' "$TMPD/$1.expect" "$3" > "$TMPD/$1.$2.tally"
	touch "$TMPD/$1.$2.bad"
}

# check CASE VIEW: >= 95% of each branch's samples exact, and >= 50 samples
check() {
	note "$1 --$2: $(tr '\n' ' ' < "$TMPD/$1.$2.tally")(branch samples exact)"
	for b in $(awk '$1 != "total" && $1 != "other" { print $1 }' "$TMPD/$1.$2.tally"); do
		# shellcheck disable=SC2046
		set -- "$1" "$2" $(awk -v b="$b" '$1 == b { print $2, $3 }' "$TMPD/$1.$2.tally")
		n=$3; ok=$4
		if [ "$n" -lt 50 ] || [ $(( 100 * ok )) -lt $(( 95 * n )) ]; then
			echo "# $1 --$2: commonest stacks that are not exact:" >&2
			sort -t "$(printf '\t')" -k1,1 -rn "$TMPD/$1.$2.bad" | head -8 | cut -c1-400 >&2
			fail "$1 --$2: branch $b has $ok of $n samples exact (want >= 95% of >= 50)"
		fi
	done
}

# shares CASE: each branch's sample share (stitched) within 5 points of its CPU share
shares() {
	out=$TMPD/$1.out
	all=$(awk '$1 == "CPU" && $2 == "all" && $3 > 0 { print $3 }' "$out")
	[ -n "$all" ] || fail "$1: the script printed no total CPU time"
	total=$(awk '$1 == "total" { print $2 }' "$TMPD/$1.stitched.tally")
	for b in $(awk '$1 != "total" && $1 != "other" { print $1 }' "$TMPD/$1.stitched.tally"); do
		n=$(awk -v b="$b" '$1 == b { print $2 }' "$TMPD/$1.stitched.tally")
		d=$(awk -v b="$b" -v n="$n" -v t="$total" -v all="$all" '$1 == "CPU" && $2 == b {
			s = 1000 * n / t; c = 1000 * $3 / all; d = s - c
			printf "%d %d %d\n", s, c, d < 0 ? -d : d }' "$out")
		[ -n "$d" ] || fail "$1: the script printed no CPU time for branch $b"
		# shellcheck disable=SC2086
		set -- "$1" $d
		note "$1: branch $b: $(( $2 / 10 )).$(( $2 % 10 ))% of the samples, $(( $3 / 10 )).$(( $3 % 10 ))% of the CPU time"
		[ "$4" -le 50 ] || fail "$1: branch $b: sample share and CPU share differ by more than 5 points"
	done
}
