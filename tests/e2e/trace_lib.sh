# SPDX-License-Identifier: GPL-2.0-or-later
# trace_lib.sh -- helpers for the trace end-to-end tests (sourced after lib.sh).

# record_folded NAME CMD...: record CMD with real BPF at 499 Hz, then report
# the capture as folded stacks into $TMPD/NAME.folded.
record_folded() {
	name=$1; shift
	"$LJSNAP" record -q -F 499 -o "$TMPD/$name.ljsnap" -- "$@" > "$TMPD/$name.out" \
		2> "$TMPD/$name.err" || { cat "$TMPD/$name.err" >&2; fail "$name: ljsnap record failed"; }
	"$LJSNAP" report -f folded -o "$TMPD/$name.folded" "$TMPD/$name.ljsnap" \
		2> "$TMPD/$name.rerr" || { cat "$TMPD/$name.rerr" >&2; fail "$name: ljsnap report failed"; }
	[ -s "$TMPD/$name.folded" ] || fail "$name: empty folded report"
}

# leaf_share FOLDED REGEX: per mille of all samples whose innermost frame
# (without its _[j] / _[i] suffix) matches REGEX (awk syntax).
leaf_share() {
	awk -v re="$2" '{
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";"); leaf = f[k]; sub(/_\[[jik]\]$/, "", leaf)
		if (leaf ~ re) m += n; t += n
	} END { print t ? int(1000 * m / t + 0.5) : 0 }' "$1"
}

# stack_count FOLDED REGEX: samples whose whole stack line matches REGEX.
stack_count() {
	awk -v re="$2" '{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line); if (line ~ re) m += n }
		END { print m + 0 }' "$1"
}

# total FOLDED: all samples.
total() { awk '{ t += $NF } END { print t + 0 }' "$1"; }

# line_of FILE PATTERN: the first line number of FILE matching PATTERN (grep -E).
line_of() { grep -n -E -m1 "$2" "$1" | cut -d: -f1; }

# same_share NAME REGEX JON JOFF: fail unless the leaf shares of REGEX in two
# reports are within 5 points (50 per mille) and each is at least 1%.
same_share() {
	a=$(leaf_share "$3" "$2"); b=$(leaf_share "$4" "$2")
	note "$1: $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f%% with the JIT, %.1f%% with -joff", a / 10, b / 10 }')"
	[ "$a" -ge 10 ] && [ "$b" -ge 10 ] || fail "$1: share below 1% (JIT $a, -joff $b per mille)"
	d=$((a - b)); [ $d -lt 0 ] && d=$((-d))
	[ $d -le 50 ] || fail "$1: shares differ by more than 5 points (JIT $a, -joff $b per mille)"
}
