# SPDX-License-Identifier: GPL-2.0-or-later
# lib.sh -- helpers for the tests that run every LuaJIT build
# (tests/e2e/build_*.sh, nginx_*.sh, doctor_*.sh).  Source it after
# tests/e2e/lib.sh.
#
# The checks are computed from `ljsnap report -f folded` output, against the
# call structure the workload was written with (tests/lua/build_chain.lua:
# main chunk -> run -> level1 -> level2 -> leaf), never against an earlier
# ljsnap output.

CHAIN_LUA=$top_srcdir/tests/lua/build_chain.lua

# variant NAME: the directory of a prepared variant (built on first use,
# cached in $LJSNAP_VARIANTS_DIR; see tests/variants/prepare.sh)
variant() {
	sh "$top_srcdir/tests/variants/prepare.sh" "$1" 2> "$TMPD/prepare-$1.err" ||
		{ cat "$TMPD/prepare-$1.err" >&2; fail "cannot prepare the LuaJIT variant $1"; }
}

# wait_for FILE PATTERN SECONDS: until FILE has a line matching PATTERN
wait_for() {
	local i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le $(( $3 * 10 )) ] || return 1
		sleep 0.1
	done
}

# start_bg NAME CMD...: start CMD (killed at exit) with output in
# $TMPD/NAME.bg; BG_PID is its pid
start_bg() {
	local bn=$1; shift
	"$@" > "$TMPD/$bn.bg" 2>&1 &
	BG_PID=$!
	PIDS_TO_KILL="$PIDS_TO_KILL $BG_PID"
}

# record_chain NAME SECONDS CMD...: run `CMD build_chain.lua SECONDS` under
# ljsnap record; sets CAP (capture), FOLDED (report -f folded of the
# process), TEXT (report -f text) and CPID (the process's pid)
record_chain() {
	local n=$1 secs=$2; shift 2
	CAP=$TMPD/$n.ljsnap
	"$LJSNAP" record -F 499 -o "$CAP" -- "$@" "$CHAIN_LUA" "$secs" > "$TMPD/$n.out" \
		2> "$TMPD/$n.err" || { cat "$TMPD/$n.err" "$TMPD/$n.out" >&2; fail "$n: ljsnap record failed"; }
	grep -q '^done' "$TMPD/$n.out" || { cat "$TMPD/$n.out" >&2; fail "$n: the workload did not run"; }
	sed -n 's/^ljsnap: pid [0-9]* (\([^)]*\)): /\1: /p' "$TMPD/$n.err" | sed "s/^/# $n: /"
	CPID=$("$LJSNAP" info "$CAP" | awk '/^  pid [0-9]+ \(ppid/ { print $2; exit }')
	[ -n "$CPID" ] || { "$LJSNAP" info "$CAP" >&2; fail "$n: no process in the capture"; }
	report_of "$n" --pid "$CPID"
}

# report_of NAME [ARGS]: FOLDED and TEXT of $CAP (report options ARGS)
report_of() {
	local n=$1; shift
	FOLDED=$TMPD/$n.folded
	TEXT=$TMPD/$n.txt
	"$LJSNAP" report -f folded "$@" -o "$FOLDED" "$CAP" 2> "$TMPD/$n.rerr" ||
		{ cat "$TMPD/$n.rerr" >&2; fail "$n: ljsnap report -f folded failed"; }
	"$LJSNAP" report -f text "$@" "$CAP" > "$TEXT" 2>&1 ||
		{ cat "$TEXT" >&2; fail "$n: ljsnap report -f text failed"; }
}

# chain_frames CHUNK OUT: the expected frames "main CHUNK;run CHUNK:L;...;leaf CHUNK:L"
# from the "FN name line" lines the workload printed in OUT
chain_frames() {
	awk -v c="$1" 'BEGIN { s = "main " c }
		$1 == "FN" { s = s ";" $2 " " c ":" $3 }
		END { print s }' "$2"
}

# unwind_stats FOLDED ENTRY CHAIN CHUNKPAT: counts over the folded stacks
#   lua     samples with Lua code on CPU: a frame of the workload (its frame
#           text contains CHUNKPAT, or one of its "|"-separated parts), an
#           [unknown: ...] frame, or a native frame of the LuaJIT VM or of
#           JIT code ([JIT code], [LuaJIT interpreter], lj_BC_*, lj_vm_*,
#           lj_ff_*: Lua was running even if no Lua frame was found)
#   entry   of those, the ones that reach ENTRY with no [unknown] frame
#   chain   of those, the ones whose innermost workload frames are exactly
#           CHAIN (native frames called from the leaf, e.g. lj_vm_modi from
#           a trace, may follow)
#   nolua   samples with none of these (native code, no LuaJIT state)
# A frame run in a JIT trace carries "_[j]" (inlined "_[i]"): stripped.
unwind_stats() {
	awk -v entry="$2" -v chain="$3" -v pat="$4" '
		BEGIN { np = split(pat, pp, "|") }
		{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		  k = split(line, f, ";"); lua = 0; unk = 0; hit = 0; last = 0
		  for (i = 1; i <= k; i++) {
			sub(/_\[[ji]\]$/, "", f[i])
			if (index(f[i], "[unknown") == 1) unk = 1
			else for (j = 1; j <= np; j++) if (index(f[i], pp[j])) { lua = 1; last = i }
			if (f[i] == "[JIT code]" || f[i] == "[LuaJIT interpreter]" ||
			    f[i] ~ /^lj_(BC|vm|ff)_/) lua = 1
			if (f[i] == entry) hit = 1
		  }
		  if (!lua && !unk) { nolua += n; next }
		  L += n
		  if (hit && !unk) E += n
		  m = split(chain, c, ";")
		  if (last && m <= last) {
			ok = 1
			for (i = 1; i <= m; i++) if (f[last - m + i] != c[i]) ok = 0
			if (ok && !unk) C += n
		  }
		}
		END { printf "lua %d entry %d chain %d nolua %d\n", L, E, C, nolua }' "$1"
}

# check_unwind NAME FOLDED ENTRY CHAIN CHUNKPAT MINLUA CHAINPCT [MAXNOLUAPCT]:
# >= MINLUA Lua samples, >= 95% of them unwound to ENTRY, >= CHAINPCT% with
# exactly CHAIN innermost, and (if given) samples without Lua <= MAXNOLUAPCT%
check_unwind() {
	local st lua ent chn nol
	st=$(unwind_stats "$2" "$3" "$4" "$5")
	lua=$(echo "$st" | awk '{ print $2 }'); ent=$(echo "$st" | awk '{ print $4 }')
	chn=$(echo "$st" | awk '{ print $6 }'); nol=$(echo "$st" | awk '{ print $8 }')
	note "$1: samples with Lua code on CPU: $lua; unwound to the entry function: $ent" \
		"($(pct "$ent" "$lua")%); designed chain innermost: $chn ($(pct "$chn" "$lua")%);" \
		"samples without Lua: $nol"
	if [ "$(pct "$ent" "$lua")" -lt 95 ] || [ "$(pct "$chn" "$lua")" -lt "$7" ]; then
		echo "# $1: stacks (most frequent first):"
		awk '{ print $NF "\t" $0 }' "$2" | sort -rn | head -12 | cut -f2 | cut -c1-300 | sed 's/^/#   /'
	fi
	assert_ge "$lua" "$6" "$1: too few samples with Lua code on CPU"
	assert_ge "$(( 100 * ent ))" "$(( 95 * lua ))" "$1: < 95% of the Lua samples unwound to '$3'"
	assert_ge "$(( 100 * chn ))" "$(( $7 * lua ))" "$1: < $7% of the Lua samples end in the designed chain"
	if [ -n "${8:-}" ]; then
		assert_ge "$(( $8 * (lua + nol) ))" "$(( 100 * nol ))" \
			"$1: > $8% of the samples carry no Lua state ($nol of $((lua + nol)))"
	fi
}

# check_chain_run NAME: check_unwind for a record_chain capture of
# build_chain.lua run by its path
check_chain_run() {
	check_unwind "$1" "$FOLDED" "main $CHAIN_LUA" "$(chain_frames "$CHAIN_LUA" "$TMPD/$1.out")" \
		"$CHAIN_LUA" 300 80 10
}

# doctor_check NAME PID FAMILY MODE NUMMODE: `ljsnap doctor PID` names the
# build (FAMILY "upstream"/"openresty"/"tarantool-2.6", MODE "GC64" or
# "non-GC64", NUMMODE "single-number"/"dual-number"), its live
# calibration confirms (or, with LIVE=recalibrated, fixes) the layout, and
# the real BPF program's samples of the process carry a valid LuaJIT state
doctor_check() {
	local d=$TMPD/$1.doctor fr2
	"$LJSNAP" doctor "$2" 2 > "$d" 2>&1 || { cat "$d" >&2; fail "$1: ljsnap doctor $2 failed"; }
	grep -E '^  (LuaJIT|number mode|live check|live calibration|result):' "$d" | sed "s/^/# $1: doctor:/"
	grep -qE "^  LuaJIT: +$3, $4 \\(FR2 (on|off)\\), in " "$d" ||
		{ cat "$d" >&2; fail "$1: doctor does not say '$3, $4'"; }
	[ "$4" = GC64 ] && fr2=on || fr2=off
	grep -qE "^  LuaJIT: .*\\(FR2 $fr2\\)" "$d" || fail "$1: doctor's FR2 does not match $4"
	grep -qE "^  number mode: $5" "$d" || { cat "$d" >&2; fail "$1: doctor does not say $5"; }
	case ${LIVE:-confirmed} in
	confirmed)
		grep -qE '^  live calibration: (g 0x[0-9a-f]+ confirms every offset|done during detection)' "$d" ||
			{ cat "$d" >&2; fail "$1: live calibration does not confirm the detected layout"; } ;;
	recalibrated)
		grep -qE '^  live calibration: g 0x[0-9a-f]+ found from DISPATCH; [0-9]+ offsets differ' "$d" ||
			{ cat "$d" >&2; fail "$1: live calibration did not recalibrate the layout"; } ;;
	esac
	grep -qE '^  global_State 0x[0-9a-f]+: valid \(GG_State self-references hold\)' "$d" ||
		{ cat "$d" >&2; fail "$1: doctor found no valid global_State"; }
	grep -q '^  result:      samples of this process carry the LuaJIT state' "$d" ||
		{ cat "$d" >&2; fail "$1: doctor's live check failed"; }
}

# doctor_chain NAME FAMILY MODE NUMMODE CMD...: run `CMD build_chain.lua 6`
# in the background and doctor_check it; doctor also decodes a live sample
# into a traceback (innermost first) that follows the workload's call
# structure: a tail of leaf, level2, level1, run, main chunk (at least run
# and the main chunk), below at most one other function (the builtin run
# calls, os.clock)
doctor_chain() {
	local n=$1 fam=$2 mode=$3 num=$4 d; shift 4
	start_bg "$n-doc" "$@" "$CHAIN_LUA" 6
	wait_for "$TMPD/$n-doc.bg" '^FN leaf' 10 || { cat "$TMPD/$n-doc.bg" >&2; fail "$n: workload did not start"; }
	doctor_check "$n" "$BG_PID" "$fam" "$mode" "$num"
	kill "$BG_PID" 2>/dev/null
	wait "$BG_PID" 2>/dev/null || true
	d=$TMPD/$n.doctor
	grep '^  decoded:' "$d" | sed "s/^/# $n: doctor:/"
	grep -qE '^  decoded: +[1-9][0-9]* of ' "$d" || { cat "$d" >&2; fail "$n: doctor decoded no live sample"; }
	awk '/^  decoded:/ { on = 1; next } /^  result:/ { on = 0 } on' "$d" | awk '
		BEGIN { n = split("leaf|level2|level1|run|main", chain, "|"); for (i = 1; i <= n; i++) at[chain[i]] = i }
		/in main chunk/ { f[++k] = "main"; next }
		match($0, /in function \047[^\047]*\047/) { f[++k] = substr($0, RSTART + 13, RLENGTH - 14) }
		END {
			i = (k && !(f[1] in at)) ? 2 : 1	# one other function innermost
			if (k - i + 1 < 2) exit 1
			for (j = i; j <= k; j++)		# a tail of the chain
				if (!(f[j] in at) || at[f[j]] != n - (k - j)) exit 1
			exit 0
		}' ||
		{ cat "$d" >&2; fail "$n: doctor's decoded stack does not follow leaf -> level2 -> level1 -> run -> main chunk"; }
}

# ground_truth NAME DIR [XCFLAGS]: build tests/variants/ljoffsets.c against
# the source tree of the built variant in DIR, with its XCFLAGS or the ones
# given (e.g. "" for the tree's default build, as Debian packages it); the
# output (the doctor-style "offsets:" line, then "key value" lines) goes to
# $TMPD/NAME.gt
ground_truth() {
	local fl
	if [ $# -ge 3 ]; then fl=$3; else fl=$(cat "$2/xcflags"); fi
	# shellcheck disable=SC2086
	${CC:-cc} -I"$2/src/src" $fl -o "$TMPD/$1.ljoffsets" \
		"$top_srcdir/tests/variants/ljoffsets.c" 2> "$TMPD/$1.gterr" ||
		{ cat "$TMPD/$1.gterr" >&2; fail "$1: cannot build ljoffsets against $2/src"; }
	"$TMPD/$1.ljoffsets" > "$TMPD/$1.gt" || fail "$1: ljoffsets failed"
}

# doctor_offsets NAME: the "offsets:" line of $TMPD/NAME.doctor is the
# compiler's (ground_truth NAME DIR first)
doctor_offsets() {
	local want got
	want=$(grep '^  offsets:' "$TMPD/$1.gt")
	got=$(grep '^  offsets:' "$TMPD/$1.doctor")
	[ "$want" = "$got" ] || fail "$1: doctor's offsets differ from the source's:
  doctor: $got
  source: $want"
	note "$1: doctor's offsets match the ground truth (offsetof() from the source, or DWARF)"
}
