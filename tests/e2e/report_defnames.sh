#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: Lua functions are named by where they are defined, not by their call
# site (docs/architecture.md, "Frames as users see them").  The ground truth
# is tests/lua/report_defnames.lua's source: `local function g` (only
# tail-called, from f), `function M.h`, `function M:m`, the global
# `function gfun` (called through a table slot), and, in a module whose
# main chunk has returned, `local function kk` (recursive, tail-called from
# L.k) and `function L.w`.  Each does the same work, so each is the
# innermost frame of about a sixth of the samples; each must be the
# innermost frame of >= 8% under its definition name, and of none under its
# call-site name.  With --callsite-names the call-site names come back: g as
# "f", M.h as "h", M:m as "m", gfun as "function <chunk:line>", kk as "k".
# L.w's defining prototype is gone, so it is "w" both ways.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit
SCRIPT=$top_srcdir/tests/lua/report_defnames.lua

# share CASE NAME LINE FILE: percent of the samples whose innermost frame
# is "NAME chunk:LINE" (or, NAME "-", "function <chunk:LINE>")
share() {
	awk -v want="$2" -v ln="$3" -v chunk="$SCRIPT" '
		{ n = $NF; tot += n; sub(/ [0-9]+$/, ""); k = split($0, fr, ";")
		  f = fr[k]; sub(/_\[[ij]\]$/, "", f)
		  if (want == "-") { if (f == "function <" chunk ":" ln ">") hit += n }
		  else if (f == want " " chunk ":" ln || f == want " defnames_lib:" ln) hit += n }
		END { print (tot ? int(100 * hit / tot) : 0) }' "$4"
}

run_case() {	# name, luajit flags
	case=$1; shift
	cap=$TMPD/$case.ljsnap
	"$LJSNAP" record -q -F 499 -o "$cap" -- luajit "$@" "$SCRIPT" 3 > "$TMPD/$case.out" \
		2> "$TMPD/$case.err" || { cat "$TMPD/$case.err" >&2; fail "$case: ljsnap record failed"; }
	grep -q '^done' "$TMPD/$case.out" || fail "$case: the script did not run"
	pid=$("$LJSNAP" info "$cap" | awk '/^  pid [0-9]+ \(ppid/ && /luajit/ { print $2; exit }')
	[ -n "$pid" ] || fail "$case: no luajit process in the capture"
	for mode in def callsite; do
		opt=; [ $mode = callsite ] && opt=--callsite-names
		"$LJSNAP" report -f folded --lua-only $opt --pid "$pid" -o "$TMPD/$case.$mode" "$cap" \
			2> "$TMPD/$case.rerr" || { cat "$TMPD/$case.rerr" >&2; fail "$case: report failed"; }
	done
	while read -r tag def site ln; do
		[ "$tag" = FN ] || continue
		d=$(share "$case" "$def" "$ln" "$TMPD/$case.def")
		c=$(share "$case" "$site" "$ln" "$TMPD/$case.callsite")
		note "$case: line $ln: '$def' $d% by definition, '$site' $c% by call site"
		assert_ge "$d" 8 "$case: '$def' (line $ln) not named by its definition"
		assert_ge "$c" 8 "$case: '$site' (line $ln) not named by its call site with --callsite-names"
		if [ "$def" != "$site" ]; then
			w=$(share "$case" "$site" "$ln" "$TMPD/$case.def")
			[ "$w" -eq 0 ] || fail "$case: line $ln still named '$site' by default ($w%)"
		fi
	done < "$TMPD/$case.out"
}

run_case joff -joff
run_case jon
exit 0
