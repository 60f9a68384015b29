#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# `ljsnap report -f pprof` read by its real consumer, `go tool pprof` (Debian's
# golang-go; no network).  For every golden capture (tests/golden/*.ljsnap.gz),
# with nothing of this machine's (--sysroot EMPTY), with this machine's files,
# and with --lines, the pprof file and the folded output of the same report:
#   - `go tool pprof -raw` parses it and its samples add up to the folded total;
#   - the stacks of `go tool pprof -traces`, root first, joined with ';' and the
#     comm label put back at the root, are exactly the folded lines with their
#     counts (as multisets);
#   - `-top` lists first a function with the largest self count of the folded
#     output (the leaf frames);
#   - `-tags` has pid, tid, comm and vm, each over every sample;
#   - tests/output/pprof_ids.go (a protobuf reader of its own) finds gzip,
#     string_table[0] = "", ids 1..N and the four labels on every sample.
# And a report that selects no sample (--pid 1) still gives a file pprof reads.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${top_srcdir:-$here/../..}
LJSNAP=${LJSNAP:-${top_builddir:-$top/build}/ljsnap}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

GO=$(command -v go || ls /usr/lib/go/bin/go 2>/dev/null || true)
if [ -z "$GO" ]; then
	if [ "${CI:-}" = true ]; then
		echo "FAIL: go (Debian's golang-go) is missing: run tests/install-deps.sh"
		exit 1
	fi
	echo "SKIP: no go tool pprof (apt-get install golang-go)"
	exit 77
fi
# pprof keeps nothing of the user's: a home, a build cache, no network, no toolchain download.
mkdir -p "$tmp/home" "$tmp/empty"
HOME=$tmp/home GOCACHE=$tmp/gocache GOPATH=$tmp/gopath GOPROXY=off GOTOOLCHAIN=local
GOFLAGS= PPROF_TMPDIR=$tmp PPROF_BINARY_PATH=$tmp/empty
export HOME GOCACHE GOPATH GOPROXY GOTOOLCHAIN GOFLAGS PPROF_TMPDIR PPROF_BINARY_PATH
pprof() {
	"$GO" tool pprof "$@" 2> "$tmp/pprof.err"
}
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# folded_from_traces: `pprof -traces -sample_index=samples` output on stdin ->
# folded lines (root first, the comm label as the root), one per sample.
# Label lines are "%10s:  VALUE", frame lines "%10s   NAME[ (inline)]" with
# the count on the first (pprof's report/report.go, printTraces).
folded_from_traces() {
	awk '
	function flush(   s, i) {
		if (n == 1 && fr[1] == comm)	# the root alone is its own location
			print comm " " count
		else if (n) {
			s = comm
			for (i = n; i >= 1; i--)
				s = s ";" fr[i]
			print s " " count
		}
		n = 0; comm = ""; count = 0
	}
	/^-----------\+/ { flush(); body = 1; next }
	!body { next }
	substr($0, 11, 1) == ":" {
		key = substr($0, 1, 10); sub(/^ +/, "", key)
		if (key == "comm")
			comm = substr($0, 14)
		next
	}
	{
		v = substr($0, 1, 10); gsub(/ /, "", v)
		if (v != "")
			count = v
		name = substr($0, 14)
		sub(/ \(inline\)$/, "", name)
		fr[++n] = name
	}
	END { flush() }'
}

# sum_lines: "stack COUNT" lines -> the same stacks once each, counts added, sorted.
sum_lines() {
	awk '{ c = $NF; sub(/ [0-9]+$/, ""); s[$0] += c } END { for (k in s) print k " " s[k] }' |
		LC_ALL=C sort
}

# check_one NAME PB FOLDED: every check of one pprof file against its folded twin.
check_one() {
	name=$1 pb=$2 folded=$3 before=$fails
	want_total=$(awk '{ t += $NF } END { print t + 0 }' "$folded")
	# The file itself: gzip, string_table[0], dense ids, labels (our reader).
	if ! ids=$("$GO" run "$here/pprof_ids.go" "$pb" 2>&1); then
		fail "$name: pprof_ids.go: $ids"
		return
	fi
	case "$ids" in
	"samples "*" total $want_total "*) ;;
	*) fail "$name: pprof_ids.go: $ids (want total $want_total)" ;;
	esac
	# -raw: pprof parses it; the samples (first value) add up to the folded total.
	if ! pprof -raw "$pb" > "$tmp/raw"; then
		fail "$name: go tool pprof -raw failed: $(cat "$tmp/pprof.err")"
		return
	fi
	raw_total=$(awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && /^ *[0-9]+ +[0-9]+:/ { t += $1 } END { print t + 0 }' "$tmp/raw")
	[ "$raw_total" = "$want_total" ] ||
		fail "$name: pprof -raw total $raw_total, folded total $want_total"
	# -traces: the same stacks with the same counts.
	if ! pprof -traces -sample_index=samples "$pb" > "$tmp/traces"; then
		fail "$name: go tool pprof -traces failed: $(cat "$tmp/pprof.err")"
		return
	fi
	folded_from_traces < "$tmp/traces" | sum_lines > "$tmp/got"
	sum_lines < "$folded" > "$tmp/want"
	if ! cmp -s "$tmp/got" "$tmp/want"; then
		fail "$name: pprof -traces stacks differ from the folded output:"
		diff "$tmp/want" "$tmp/got" | cut -c1-240 | head -20
	fi
	# -top: the first row is a function with the largest self count.
	if ! pprof -top -sample_index=samples "$pb" > "$tmp/top"; then
		fail "$name: go tool pprof -top failed: $(cat "$tmp/pprof.err")"
		return
	fi
	first=$(awk '/^ +flat +flat%/ { getline; print; exit }' "$tmp/top")
	flat=$(echo "$first" | awk '{ print $1 }')
	fn=$(echo "$first" | sed -E 's/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+  //; s/ \(inline\)$//')
	awk '{ c = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); self[f[n]] += c }
	     END { for (k in self) print self[k] "\t" k }' "$folded" | LC_ALL=C sort -rn > "$tmp/self"
	max=$(head -1 "$tmp/self" | cut -f1)
	if [ "$flat" != "$max" ] || ! awk -F '\t' -v m="$max" -v f="$fn" \
			'$1 == m && $2 == f { ok = 1 } END { exit !ok }' "$tmp/self"; then
		fail "$name: pprof -top first row '$first', folded top self: $(head -1 "$tmp/self")"
	fi
	# -tags: the four labels, each over every sample.
	if ! pprof -tags -sample_index=samples "$pb" > "$tmp/tags"; then
		fail "$name: go tool pprof -tags failed: $(cat "$tmp/pprof.err")"
		return
	fi
	for k in pid tid comm vm; do
		t=$(awk -v k="$k" '$1 == k ":" && $2 == "Total" { print $3 + 0 }' "$tmp/tags")
		[ "$t" = "$want_total" ] || fail "$name: pprof -tags: label $k over $t samples, want $want_total"
	done
	[ "$fails" = "$before" ] &&
		echo "ok: $name: $want_total samples, $(wc -l < "$folded") stacks; $ids"
}

n=0
for gz in "$top"/tests/golden/*.ljsnap.gz; do
	cap=$tmp/$(basename "$gz" .gz)
	gzip -dc "$gz" > "$cap" || { fail "cannot unpack $gz"; continue; }
	for view in "--sysroot $tmp/empty" "" "--lines"; do
		name="$(basename "$cap" .ljsnap)${view:+ $view}"
		name=$(echo "$name" | sed "s|$tmp/||")
		# shellcheck disable=SC2086
		if ! "$LJSNAP" report -f pprof $view -o "$tmp/p.pb.gz" "$cap" 2> "$tmp/err" ||
		   ! "$LJSNAP" report -f folded $view -o "$tmp/p.folded" "$cap" 2>> "$tmp/err"; then
			fail "$name: ljsnap report failed: $(cat "$tmp/err")"
			continue
		fi
		check_one "$name" "$tmp/p.pb.gz" "$tmp/p.folded"
		n=$((n + 1))
	done
	# The file name chooses the format and says how to look at it; the same
	# report written twice (here once to stdout) is the same bytes.
	if [ "$cap" = "$tmp/luajit-jon.ljsnap" ]; then
		"$LJSNAP" report -o "$tmp/by-name.pb.gz" "$cap" 2> "$tmp/err"
		grep -q "go tool pprof -http=127.0.0.1:8080 $tmp/by-name.pb.gz" "$tmp/err" ||
			fail "-o X.pb.gz: no view hint: $(cat "$tmp/err")"
		"$LJSNAP" report -f pprof "$cap" > "$tmp/stdout.pb.gz" 2> /dev/null
		cmp -s "$tmp/by-name.pb.gz" "$tmp/stdout.pb.gz" ||
			fail "-o X.pb.gz and -f pprof to stdout differ"
	fi
done
[ "$n" -gt 0 ] || fail "no golden captures under $top/tests/golden"

# Every kind of frame, inlined native frames on every machine, labels of two
# processes, a root-only stack, an unknown frequency (99 Hz: the period is
# 1e9 / 99 ns).
synth=${top_builddir:-$top/build}/tests/output/pprof_synth
if [ ! -x "$synth" ]; then
	fail "no $synth (make check builds it)"
elif ! "$synth" "$tmp/s.pb.gz" "$tmp/s.folded"; then
	fail "pprof_synth failed"
else
	check_one synthetic "$tmp/s.pb.gz" "$tmp/s.folded"
	grep -qx 'Period: 10101010' "$tmp/raw" || fail "synthetic: no 'Period: 10101010' in pprof -raw"
	grep -q ' (inline)$' "$tmp/traces" || fail "synthetic: pprof -traces shows no inlined frame"
fi

# No sample selected: a valid, empty profile.
cap=$tmp/luajit-joff.ljsnap
if "$LJSNAP" report -f pprof --pid 1 -o "$tmp/empty.pb.gz" "$cap" 2> "$tmp/err"; then
	if ! pprof -raw "$tmp/empty.pb.gz" > "$tmp/raw"; then
		fail "empty profile: go tool pprof -raw failed: $(cat "$tmp/pprof.err")"
	elif grep -qE '^ *[0-9]+ +[0-9]+:' "$tmp/raw"; then
		fail "empty profile: pprof -raw lists samples"
	fi
	ids=$("$GO" run "$here/pprof_ids.go" "$tmp/empty.pb.gz" 2>&1) &&
		case "$ids" in "samples 0 total 0 "*) true ;; *) false ;; esac ||
		fail "empty profile: pprof_ids.go: $ids"
	pprof -top "$tmp/empty.pb.gz" > /dev/null || fail "empty profile: pprof -top failed: $(cat "$tmp/pprof.err")"
	echo "ok: empty profile (--pid 1): $ids"
else
	fail "ljsnap report --pid 1 failed: $(cat "$tmp/err")"
fi

[ "$fails" = 0 ] || { echo "$fails failures"; exit 1; }
echo "all pprof checks passed"
