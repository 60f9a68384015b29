#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The html format in a real browser: pages written by `ljsnap report -f html`
# from golden captures (tests/golden/), from a synthetic profile of 100,000
# distinct stacks (tests/output/html_many) and from an empty selection are
# loaded from file:// in Debian's chromium, headless, driven by
# playwright-core (npm, installed into $top_builddir/node on first use).
# tests/output/html_check.js checks that frames are drawn, that a regular
# expression search highlights its frames and reports the share the folded
# output of the same profile gives, that a click zooms, the tooltip, the
# icicle view, the header against the text report, that no request leaves
# file:// and that the console has no error.  The screenshot of one page is
# kept: $top_builddir/tests/output/html.png.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
LJSNAP=${LJSNAP:-$top_builddir/ljsnap}
CHROMIUM=${LJSNAP_CHROMIUM:-/usr/bin/chromium}
PLAYWRIGHT=playwright-core@1.65.1
node_dir=$top_builddir/node

# skip WHY: 77, but a failure on CI (tests/install-deps.sh installs it all)
skip() {
	echo "SKIP: $1"
	[ "${CI:-}" = true ] && exit 1
	exit 77
}
[ -x "$CHROMIUM" ] || skip "no $CHROMIUM (apt-get install chromium)"
command -v node > /dev/null && command -v npm > /dev/null || skip "no node/npm (apt-get install npm)"
if [ ! -d "$node_dir/node_modules/playwright-core" ]; then
	mkdir -p "$node_dir"
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --prefix "$node_dir" \
		"$PLAYWRIGHT" > "$node_dir/install.log" 2>&1 ||
		{ tail -5 "$node_dir/install.log"; skip "cannot install $PLAYWRIGHT"; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/empty" "$top_builddir/tests/output"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# folded_stats FOLDED ERE: "total matched root searchframe zoomframe" of
# the folded lines: all samples, the samples of the stacks with a frame
# matching ERE (each stack once), the first line's root, the widest frame
# matching ERE, and the widest frame narrower than everything (not the root).
folded_stats() {
	awk -v re="$2" '
	{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); total += n
	  if (NR == 1) root = f[1]
	  hit = 0; delete seen
	  for (i = 1; i <= k; i++) {
		if (f[i] ~ re) hit = 1
		if (!(f[i] in seen)) { seen[f[i]] = 1; w[f[i]] += n; if (i > 1) notroot[f[i]] = 1 }
	  }
	  if (hit) matched += n }
	END {
	  best = ""; zoom = ""
	  for (x in w) {
		if (x ~ re && (best == "" || w[x] > w[best] || (w[x] == w[best] && x < best))) best = x
		if ((x in notroot) && w[x] < total &&
		    (zoom == "" || w[x] > w[zoom] || (w[x] == w[zoom] && x < zoom))) zoom = x
	  }
	  printf "%d\t%d\t%s\t%s\t%s\n", total, matched, root, best, zoom }' "$1"
}

# json_str S: S as a JSON string
json_str() {
	printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$/"/'
}

# page_case LABEL PAGE FOLDED ERE [SCREENSHOT] [HEADER...]: one entry of cases.json
page_case() {
	label=$1 page=$2 folded=$3 re=$4 shot=$5
	shift 5
	stats=$(folded_stats "$folded" "$re")
	IFS='	' read -r total matched root sframe zoom <<EOF
$stats
EOF
	[ -n "$sframe" ] && [ -n "$zoom" ] || fail "$label: no frame matches /$re/ or none to zoom into"
	hdr=""
	for h in "$@"; do
		hdr="$hdr${hdr:+,}$(json_str "$h")"
	done
	printf '%s{"label":%s,"page":%s,"total":%s,"matched":%s,"root":%s,"search":%s,"searchFrame":%s,"zoom":%s,"screenshot":%s,"header":[%s]}\n' \
		"$sep" "$(json_str "$label")" "$(json_str "$page")" "$total" "$matched" \
		"$(json_str "$root")" "$(json_str "$re")" "$(json_str "$sframe")" "$(json_str "$zoom")" \
		"$([ -n "$shot" ] && json_str "$shot" || echo null)" "$hdr" >> "$tmp/cases.json"
	sep=,
}

# report CAPTURE NAME ARGS...: NAME.html, NAME.folded and NAME.txt of one capture
report() {
	cap=$1 name=$2
	shift 2
	"$LJSNAP" report -f html -o "$tmp/$name.html" --sysroot "$tmp/empty" "$@" "$cap" 2> "$tmp/err" &&
		"$LJSNAP" report -f folded -o "$tmp/$name.folded" --sysroot "$tmp/empty" "$@" "$cap" 2> "$tmp/err" &&
		"$LJSNAP" report -f text -o "$tmp/$name.txt" --sysroot "$tmp/empty" "$@" "$cap" 2> "$tmp/err" ||
		{ cat "$tmp/err"; fail "ljsnap report $* $cap"; }
	grep -q '</script' "$tmp/$name.html" &&
		[ "$(grep -c '</script' "$tmp/$name.html")" != 2 ] && fail "$name.html: a stray </script"
}

# header_of TXT: what the page's header must say, from the text report: the
# unwinding line, and the processes ("comm (pid P, N samples", or for
# several with the same name and build "comm × K (pid P1, P2, N samples")
header_of() {
	sed -n 's/^  \(unwound to the main chunk with no unknown frame: [0-9]* of [0-9]*\) .*/\1/p' "$1"
	sed -n 's/^  pid \([0-9]*\) \([^:]*\): \([0-9]*\) samples, \(.*\)/\1\t\2\t\3\t\4/p' "$1" |
		awk -F'\t' '{ k = $2 "\t" $4; if (!(k in n)) o[++m] = k
			     p[k] = p[k] (n[k]++ ? ", " : "") $1; s[k] += $3 }
			END { for (i = 1; i <= m; i++) { k = o[i]; split(k, c, "\t")
				printf "%s%s (pid %s, %d samples\n", c[1],
					(n[k] > 1 ? " \303\227 " n[k] : ""), p[k], s[k] } }'
}

printf '[' > "$tmp/cases.json"
sep=
gzip -dc "$top_srcdir/tests/golden/luajit-jon.ljsnap.gz" > "$tmp/jon.ljsnap"
gzip -dc "$top_srcdir/tests/golden/nginx.ljsnap.gz" > "$tmp/nginx.ljsnap"
report "$tmp/jon.ljsnap" jon
report "$tmp/nginx.ljsnap" nginx --lines
"$LJSNAP" report -f html -o "$tmp/none.html" --pid 999999999 "$tmp/jon.ljsnap" 2> /dev/null ||
	fail "report of an empty selection"
"$top_builddir/tests/output/html_many" 100000 "$tmp/many.html" "$tmp/many.folded" ||
	fail "tests/output/html_many"
[ "$(wc -l < "$tmp/many.folded")" = 100000 ] || fail "many.folded: not 100000 distinct stacks"
[ "$(grep -c '</script' "$tmp/many.html")" = 2 ] || fail "many.html: a stray </script"

IFS='
'
# shellcheck disable=SC2046
page_case "luajit-jon" "$tmp/jon.html" "$tmp/jon.folded" '^leaf ' "" $(header_of "$tmp/jon.txt")
# shellcheck disable=SC2046
page_case "nginx --lines" "$tmp/nginx.html" "$tmp/nginx.folded" '^tcp_' \
	"$top_builddir/tests/output/html.png" $(header_of "$tmp/nginx.txt")
page_case "100000 stacks" "$tmp/many.html" "$tmp/many.folded" '^hot |</script' "" "synthetic"
unset IFS
printf ',{"label":"empty","page":"%s","empty":true,"header":["samples0"]}]\n' "$tmp/none.html" >> "$tmp/cases.json"

node "$top_srcdir/tests/output/html_check.js" "$node_dir" "$tmp/cases.json" || fails=$((fails + 1))
[ "$fails" = 0 ] || { echo "$fails failures"; exit 1; }
echo "all html checks passed"
