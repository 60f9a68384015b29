#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: a capture carries what report needs from the mapped files (EMBED
# records: unwind tables and symbols, once per build id).
#
# Two cases, each recorded from a copy of a LuaJIT file in $TMPD that the
# test then changes under the capture:
#   bin   a copy of /usr/bin/luajit (LuaJIT linked in) runs
#         tests/lua/record_remap.lua;
#   lib   tests/e2e/ljdlopen dlopen()s a copy of libluajit-5.1.so.2 and
#         runs the same script.
# Each capture is reported three times (folded): with the copy in place,
# replaced at its path by another build (OpenResty's luajit2, the or-deb
# variant: another build id), and deleted.  The three reports must be
# byte-identical; in the last two the report says it used the copy in the
# capture, in the first it does not.  And they must be good, not merely
# equal: >= 80% of the native stacks reach the outermost frame (report's
# note), >= 80% of the samples are rooted in the program's entry
# (`_start`).  Control: the same run recorded with --no-embed and reported
# with the file deleted reaches the outermost frame in < 20% of its stacks
# (so the copy is what makes the difference).  `ljsnap info` lists the copy
# of the file with its size and the names of LuaJIT's functions recovered
# from the stripped file (symtab/funcs.h: they come from code and data the
# copy lacks, so the copy carries them; tests/unit/test_funcs compares the
# copy's names with the file's per address); the bytes a copy adds to the
# capture are noted.
# Trace exits: a copy of luajit runs tests/lua/trace_exit.lua and is
# reported the same three ways; the samples in a trace exit must reach
# _start in >= 80% with the file deleted.
# Line tables and inline information: a copy of ljdlopen (built with -g;
# c_spin inlines lcg_burn) recorded with --debug-info, and recorded without
# it then given `ljsnap archive`: report --lines with the file deleted is
# byte-identical to the report with it in place, and names the inlined
# frame and its line (ljdlopen.c:N).
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/variants/lib.sh"
need_bpf
need_prog luajit luajit
OR=$(variant or-deb) || exit 1
HOST=$top_builddir/tests/e2e/ljdlopen
[ -x "$HOST" ] || fail "tests/e2e/ljdlopen not built (libluajit-5.1-dev missing?)"
SCRIPT=$top_srcdir/tests/lua/record_remap.lua
SYSLIB=$(ldconfig -p | awk '$1 == "libluajit-5.1.so.2" && /x86-64/ { print $NF; exit }')
[ -n "$SYSLIB" ] || fail "libluajit-5.1.so.2 not found by ldconfig"
mkdir -p "$TMPD/bin" "$TMPD/lib"

# pct_complete NAME: percent of the native stacks that reached the outermost frame
pct_complete() {
	sed -n 's/.*native stacks: \([0-9]*\) samples unwound, \([0-9]*\) (.*/\1 \2/p' "$TMPD/$1.err" |
		awk '{ print $1 ? int(100 * $2 / $1) : 0 }'
}

# rooted NAME: percent of the samples whose stack starts COMM;_start;
rooted() {
	awk -v c="$2" '{ n = $NF; t += n; if (index($0, c ";_start;") == 1) r += n }
		END { print t ? int(100 * r / t) : 0 }' "$TMPD/$1.folded"
}

# report NAME CAP: folded report, notes on stderr
report() {
	"$LJSNAP" report -f folded -o "$TMPD/$1.folded" "$2" 2> "$TMPD/$1.err" ||
		{ cat "$TMPD/$1.err" >&2; fail "$1: report failed"; }
}

# enough CASE: the recording of CASE has >= 100 samples (else say why not)
enough() {
	n=$("$LJSNAP" info "$TMPD/$1.ljsnap" | awk '$1 == "samples:" { print $2; exit }')
	[ "${n:-0}" -ge 100 ] || { cat "$TMPD/$1.rec" "$TMPD/$1.out" >&2
		fail "$1: only ${n:-0} samples recorded (want >= 100)"; }
}

# three CASE FILE OTHER COMM: the three reports of $TMPD/CASE.ljsnap
three() {
	cap=$TMPD/$1.ljsnap
	enough "$1"
	report "$1.same" "$cap"
	grep -q "used the copy in the capture" "$TMPD/$1.same.err" &&
		fail "$1: the copy was used although the file is in place"
	cp "$3" "$2"
	report "$1.other" "$cap"
	grep -q "$2: build-id mismatch (build id [0-9a-f]*): used the copy in the capture" \
		"$TMPD/$1.other.err" || { cat "$TMPD/$1.other.err" >&2; fail "$1: no note on the copy used for another build"; }
	rm -f "$2"
	report "$1.gone" "$cap"
	grep -q "$2: missing (build id [0-9a-f]*): used the copy in the capture" "$TMPD/$1.gone.err" ||
		{ cat "$TMPD/$1.gone.err" >&2; fail "$1: no note on the copy used for a missing file"; }
	cmp -s "$TMPD/$1.same.folded" "$TMPD/$1.other.folded" ||
		{ diff "$TMPD/$1.same.folded" "$TMPD/$1.other.folded" | head -20 >&2
		  fail "$1: the report changed when the file was replaced by another build"; }
	cmp -s "$TMPD/$1.same.folded" "$TMPD/$1.gone.folded" ||
		{ diff "$TMPD/$1.same.folded" "$TMPD/$1.gone.folded" | head -20 >&2
		  fail "$1: the report changed when the file was deleted"; }
	c=$(pct_complete "$1.gone"); r=$(rooted "$1.gone" "$4")
	note "$1: 3 reports identical ($(wc -l < "$TMPD/$1.gone.folded") stacks); $c% complete, $r% rooted in _start"
	assert_ge "$c" 80 "$1: native stacks reaching the outermost frame, %"
	assert_ge "$r" 80 "$1: samples rooted in $4;_start, %"
	line=$("$LJSNAP" info "$cap" | grep "^  $2  build id ") ||
		fail "$1: ljsnap info does not list the copy of $2"
	case $line in *" bytes of function names") ;;
		*) fail "$1: the copy of $2 carries no recovered function names" ;; esac
	note "$1: info:$line"
}

# bin: a copy of the luajit executable
cp /usr/bin/luajit "$TMPD/bin/luajit"
"$LJSNAP" record -F 499 -o "$TMPD/bin.ljsnap" -- "$TMPD/bin/luajit" "$SCRIPT" 0.5 \
	> "$TMPD/bin.out" 2> "$TMPD/bin.rec" || { cat "$TMPD/bin.rec" >&2; fail "bin: record failed"; }
"$LJSNAP" record -q --no-embed -F 499 -o "$TMPD/ctl.ljsnap" -- "$TMPD/bin/luajit" "$SCRIPT" 0.5 \
	> "$TMPD/ctl.out" 2> "$TMPD/ctl.rec" || { cat "$TMPD/ctl.rec" >&2; fail "ctl: record failed"; }
three bin "$TMPD/bin/luajit" "$OR/root/usr/bin/luajit" luajit
note "bin: record said: $(grep 'mapped files copied' "$TMPD/bin.rec")"
enough ctl
report ctl.gone "$TMPD/ctl.ljsnap"
c=$(pct_complete ctl.gone)
note "control (--no-embed, file deleted): $c% complete"
[ "$c" -lt 20 ] || fail "control: $c% of the stacks complete without the file nor its copy"
"$LJSNAP" info "$TMPD/ctl.ljsnap" | grep -q "^embedded:" && fail "control: --no-embed embedded files"

# exit: trace exits (tests/lua/trace_exit.lua), whose handler's frame report
# steps with where the handler returns from lj_trace_exit, found in the code
# that the copy lacks: the recorder saves it with the process
mkdir -p "$TMPD/exit"
cp /usr/bin/luajit "$TMPD/exit/luajit"
"$LJSNAP" record -F 499 -o "$TMPD/exit.ljsnap" -- "$TMPD/exit/luajit" \
	"$top_srcdir/tests/lua/trace_exit.lua" 0.5 > "$TMPD/exit.out" 2> "$TMPD/exit.rec" ||
	{ cat "$TMPD/exit.rec" >&2; fail "exit: record failed"; }
three exit "$TMPD/exit/luajit" "$OR/root/usr/bin/luajit" luajit
x=$(awk '/\[trace exit\]/ { n = $NF; t += n; if (index($0, "luajit;_start;") == 1) r += n }
	END { print t + 0, t ? int(100 * r / t) : 0 }' "$TMPD/exit.gone.folded")
note "exit: samples in a trace exit, and % of them rooted in _start with the file deleted: $x"
assert_ge "${x% *}" 10 "exit: samples in a trace exit"
assert_ge "${x#* }" 80 "exit: trace exit samples rooted in luajit;_start (file deleted), %"

# lib: a copy of libluajit, dlopen()ed by ljdlopen
cp "$SYSLIB" "$TMPD/lib/libluajit-5.1.so.2"
"$LJSNAP" record -F 499 -o "$TMPD/lib.ljsnap" -- "$HOST" 100 "$TMPD/lib/libluajit-5.1.so.2" \
	"$SCRIPT" 0.5 > "$TMPD/lib.out" 2> "$TMPD/lib.rec" || { cat "$TMPD/lib.rec" >&2; fail "lib: record failed"; }
three lib "$TMPD/lib/libluajit-5.1.so.2" "$OR/root/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2" ljdlopen
grep -q ';lua_pcall;' "$TMPD/lib.gone.folded" || fail "lib: no frame named by libluajit's symbols"
# dbg: line tables and inlines, from --debug-info and from `ljsnap archive`
# lines NAME CAP: report --lines
lines() {
	"$LJSNAP" report -f folded --lines -o "$TMPD/$1.folded" "$2" 2> "$TMPD/$1.err" ||
		{ cat "$TMPD/$1.err" >&2; fail "$1: report --lines failed"; }
}
for how in debug-info archive; do
	cp "$HOST" "$TMPD/bin/ljdlopen"
	opt=--debug-info; [ $how = archive ] && opt=--freq=499
	"$LJSNAP" record -F 499 $opt -o "$TMPD/$how.ljsnap" -- "$TMPD/bin/ljdlopen" 400 "$SYSLIB" \
		"$SCRIPT" 0.1 > "$TMPD/$how.out" 2> "$TMPD/$how.rec" ||
		{ cat "$TMPD/$how.rec" >&2; fail "$how: record failed"; }
	enough "$how"
	if [ $how = archive ]; then
		"$LJSNAP" archive "$TMPD/$how.ljsnap" 2> "$TMPD/$how.arc" ||
			{ cat "$TMPD/$how.arc" >&2; fail "archive failed"; }
		note "archive: $(cat "$TMPD/$how.arc")"
	fi
	lines "$how.same" "$TMPD/$how.ljsnap"
	rm -f "$TMPD/bin/ljdlopen"
	lines "$how.gone" "$TMPD/$how.ljsnap"
	grep -q "ljdlopen: missing (build id [0-9a-f]*): used the copy" "$TMPD/$how.gone.err" ||
		{ cat "$TMPD/$how.gone.err" >&2; "$LJSNAP" info "$TMPD/$how.ljsnap" | grep -A9 '^embedded' >&2
		  fail "$how: no note on the copy used"; }
	cmp -s "$TMPD/$how.same.folded" "$TMPD/$how.gone.folded" ||
		fail "$how: report --lines changed when ljdlopen was deleted"
	grep -q ';c_spin ljdlopen\.c:[0-9]*;lcg_burn ljdlopen\.c:[0-9]*_\[i\]' "$TMPD/$how.gone.folded" ||
		fail "$how: no inlined lcg_burn with its line from the copy"
	note "$how: report --lines identical with ljdlopen deleted, inlined frames and lines named"
done
echo "PASS"
