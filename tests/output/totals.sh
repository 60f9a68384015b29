#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The five outputs of one capture count the same samples: folded (the sum of
# its lines), text ("samples: N"), pprof (read by go tool pprof -raw),
# speedscope (the weights, read by python3's json) and html (the total its
# page embeds, read by python3 from the page's JSON).  On the golden nginx
# capture (4 workers, kernel frames) and the JIT-on luajit one, with and
# without --lines.  No BPF needed.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
LJSNAP=${LJSNAP:-${top_builddir:-$top/build}/ljsnap}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
GO=$(command -v go || ls /usr/lib/go/bin/go 2>/dev/null || true)
if [ -z "$GO" ] || ! python3 -c 'import json' 2>/dev/null; then
	[ "${CI:-}" = true ] && { echo "FAIL: go or python3 missing: run tests/install-deps.sh"; exit 1; }
	echo "SKIP: needs go (golang-go) and python3"; exit 77
fi
mkdir -p "$tmp/home" "$tmp/empty"
export HOME=$tmp/home GOCACHE=$tmp/gocache GOPATH=$tmp/gopath GOPROXY=off GOTOOLCHAIN=local \
	PPROF_TMPDIR=$tmp PPROF_BINARY_PATH=$tmp/empty
fails=0
for n in nginx luajit-jon; do
	gzip -dc "$top/tests/golden/$n.ljsnap.gz" > "$tmp/$n.ljsnap" || { echo "FAIL: $n: gzip"; exit 1; }
	for view in "" --lines; do
		r() { "$LJSNAP" report $view --sysroot "$tmp/empty" "$@" "$tmp/$n.ljsnap" 2>> "$tmp/err"; }
		folded=$(r -f folded | awk '{ t += $NF } END { print t + 0 }')
		text=$(r -f text | awk '/^samples: / { print $2; exit }')
		r -f pprof -o "$tmp/p.pb.gz"
		pprof=$("$GO" tool pprof -raw "$tmp/p.pb.gz" 2>> "$tmp/err" | awk '/^Samples:/ { s = 1; next }
			/^Locations/ { s = 0 } s && /^ *[0-9]+ +[0-9]+:/ { t += $1 } END { print t + 0 }')
		r -f speedscope -o "$tmp/s.json"
		speedscope=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(sum(p["weights"]) for p in d["profiles"]))' "$tmp/s.json")
		r -f html -o "$tmp/h.html"
		html=$(python3 -c 'import re, sys
t = open(sys.argv[1], encoding="utf-8", errors="replace").read()
m = re.search(r"\"total\":([0-9]+)", t)
print(m.group(1) if m else "none")' "$tmp/h.html")
		line="$n ${view:-(functions)}: folded $folded, text $text, pprof $pprof, speedscope $speedscope, html $html"
		if [ "$folded" -gt 0 ] && [ "$text" = "$folded" ] && [ "$pprof" = "$folded" ] &&
		   [ "$speedscope" = "$folded" ] && [ "$html" = "$folded" ]; then
			echo "ok: $line"
		else
			echo "FAIL: $line"; cat "$tmp/err"; fails=$((fails + 1))
		fi
	done
done
[ "$fails" = 0 ]
