#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: report's Lua walks remembered across samples (unwind/ljwalk_memo.c)
# change no output.  A sample whose rip and sections match an earlier one's,
# whose registers that walk read hold the same values, and every byte of
# whose memory reads gives the same answer (in the interpreter or in a JIT
# trace), gets that walk's frames instead of a walk of its own; LJSNAP_REPORT_NO_MEMO=1
# walks every sample, the reference.  Three captures, interpreter and JIT:
# tests/lua/stitch_builtin.lua (two coroutines, string.gsub calling back
# into Lua: most samples repeat an earlier one's registers) and
# tests/lua/report_gen.lua (prototypes freed by the GC and others allocated
# at their addresses, ~20 ms each: the same registers over other bytes).
# The folded output (by function, by line, by call-site name) and the text
# summary must be byte-identical with and without.  On stitch_builtin.lua
# (LJSNAP_REPORT_MEMO_STATS=1: report says how many walks it remembered) at
# least 80% of the walks are remembered, with -jon where at least half of the
# samples run in JIT traces; tests/harness checks remembered walks against
# LuaJIT's own traceback (the second walk of each capture).
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog luajit luajit

i=0
for c in "-joff stitch_builtin.lua 2" "-jon stitch_builtin.lua 2" "-joff report_gen.lua 2" \
	 "-jon report_gen.lua 2"; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	set -- $c
	"$LJSNAP" record -q -F 999 -o "$TMPD/c$i.ljsnap" -- luajit "$1" "$top_srcdir/tests/lua/$2" "$3" \
		> /dev/null 2> "$TMPD/rec.err" || { cat "$TMPD/rec.err" >&2; fail "record luajit $c failed"; }
	for view in "-f folded" "-f folded --lines" "-f folded --callsite-names" "-f text --by-trace"; do
		# shellcheck disable=SC2086
		LJSNAP_REPORT_MEMO_STATS=1 "$LJSNAP" report $view "$TMPD/c$i.ljsnap" > "$TMPD/memo" \
			2> "$TMPD/merr" || { cat "$TMPD/merr" >&2; fail "luajit $c: report $view failed"; }
		# shellcheck disable=SC2086
		LJSNAP_REPORT_NO_MEMO=1 "$LJSNAP" report $view "$TMPD/c$i.ljsnap" > "$TMPD/walked" 2> "$TMPD/err" ||
			{ cat "$TMPD/err" >&2; fail "luajit $c: report $view (LJSNAP_REPORT_NO_MEMO=1) failed"; }
		cmp -s "$TMPD/memo" "$TMPD/walked" ||
			{ diff "$TMPD/walked" "$TMPD/memo" | head -20 >&2; fail "luajit $c: report $view differs with the walk memo"; }
		note "luajit $c: report $view: the same ($(wc -l < "$TMPD/walked") lines)"
		if [ "$view" = "-f folded" ]; then
			assert_ge "$(awk '{ s += $NF } END { print s + 0 }' "$TMPD/walked")" 500 \
				"luajit $c: too few samples"
		fi
		[ "$2" = stitch_builtin.lua ] || continue
		# stitch_builtin.lua repeats itself: at least 80% of its walks are
		# remembered, in the interpreter and (-jon) in JIT traces.
		# shellcheck disable=SC2046
		set -- $(sed -n 's/^ljsnap report: \([0-9]*\) of \([0-9]*\) Lua walks remembered$/\1 \2/p' \
			"$TMPD/merr") "$@"
		[ $# -ge 5 ] || fail "luajit $c: report $view did not say how many walks it remembered"
		assert_ge "$(( $1 * 10 ))" "$(( $2 * 8 ))" "luajit $c: report $view remembered $1 of $2 walks"
		if [ "$view" = "-f text --by-trace" ] && [ "$3" = -jon ]; then
			jit=$(awk '$1 == "JIT-compiled" { print $3; exit }' "$TMPD/memo")
			assert_ge "$(( ${jit:-0} * 2 ))" "$2" "luajit $c: $jit of $2 walks in JIT traces"
			note "luajit $c: $1 of $2 walks remembered; $jit samples in JIT traces"
		fi
		shift 2
	done
done
exit 0
