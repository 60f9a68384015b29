#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: nginx (Debian's core package) with the Lua module and OpenResty's
# luajit2 (unpacked from Debian packages by tests/variants/prepare.sh, loaded
# by absolute path), 4 workers on 127.0.0.1, under `wrk -t2 -c8 -d5s`.  The
# handler (tests/nginx/ljsnap_work.lua) does CPU work in a known chain:
# content_by_lua chunk -> handle -> level1 -> level2 -> leaf.
# `ljsnap record -p MASTER` must cover the workers that already run, and the
# ones the master forks while recording (a reload, SIGHUP, replaces all 4).
# Checks, from `ljsnap report -f folded --pid WORKER`: every one of the 8
# workers has Lua samples; >= 95% of the samples with Lua code on CPU
# unwind to the content_by_lua chunk, >= 80% end in the designed chain;
# `ljsnap doctor WORKER` says openresty GC64, its live check passes and its
# offsets are the compiler's for the luajit2 source.  A third load on /re
# (ngx.re.find: Lua calling C, into PCRE): >= 80% of its samples show
# PCRE's exported functions below the Lua frame, named from the library.
# Everything started is killed at exit; loads are bounded in time.
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/variants/lib.sh"
need_bpf
need_prog nginx nginx
need_prog wrk wrk
need_prog pgrep procps
need_prog nm binutils
OR=$(variant or-deb) || exit 1
ORLIB=$OR/root/usr/lib/x86_64-linux-gnu
for m in ndk_http_module ngx_http_lua_module; do
	[ -r "$OR/root/usr/lib/nginx/modules/$m.so" ] || fail "$m.so missing in $OR"
done
MOD=$top_srcdir/tests/nginx/ljsnap_work.lua
P=$TMPD/ngx
mkdir -p "$P/logs" "$P/tmp"

# workers: the worker pids of the master, sorted
workers() { pgrep -P "$M" | sort -n | tr '\n' ' '; }

# start_nginx PORT: start the master; 0 once 4 workers listen
start_nginx() {
	sed -e "s|@ORROOT@|$OR/root|g" -e "s|@PREFIX@|$P|g" -e "s|@PORT@|$1|g" \
		-e "s|@TESTDIR@|$top_srcdir/tests/nginx|g" "$top_srcdir/tests/nginx/nginx.conf.in" \
		> "$P/nginx.conf"
	: > "$P/logs/error.log"
	LD_LIBRARY_PATH=$ORLIB nginx -p "$P" -c "$P/nginx.conf" > "$P/stdout" 2>&1 &
	M=$!
	PIDS_TO_KILL="$PIDS_TO_KILL $M"
	for _ in $(seq 50); do
		kill -0 "$M" 2>/dev/null || return 1
		[ "$(pgrep -c -P "$M")" = 4 ] && http /frames > "$TMPD/frames" 2>/dev/null &&
			grep -q '^FN leaf' "$TMPD/frames" && return 0
		sleep 0.1
	done
	return 1
}

# http PATH: body of GET http://127.0.0.1:$PORT/PATH (bash /dev/tcp)
http() {
	bash -c 'exec 3<>/dev/tcp/127.0.0.1/$0 && printf "GET $1 HTTP/1.0\r\nHost: x\r\n\r\n" >&3 &&
		sed "1,/^\r$/d" <&3' "$PORT" "$1"
}

PORT=
for try in 1 2 3 4 5; do
	PORT=$(( 20000 + ($$ * 7 + try * 7919) % 30000 ))
	start_nginx "$PORT" && break
	kill "$M" 2>/dev/null; wait "$M" 2>/dev/null
	PORT=
done
[ -n "$PORT" ] || { cat "$P/stdout" "$P/logs/error.log" >&2; fail "nginx did not start with 4 workers"; }
W1=$(workers)
note "nginx master $M on 127.0.0.1:$PORT, workers $W1"
for w in $W1; do
	grep -q "$ORLIB/libluajit-5.1.so" "/proc/$w/maps" || fail "worker $w does not map luajit2 from $ORLIB"
done
http / | grep -q '^ok ' || fail "the Lua handler does not answer"

CAP=$TMPD/nginx.ljsnap
"$LJSNAP" record -p "$M" -F 499 -d 30 -o "$CAP" > "$TMPD/rec.out" 2> "$TMPD/rec.err" &
R=$!
PIDS_TO_KILL="$PIDS_TO_KILL $R"
wait_for "$TMPD/rec.err" '^ljsnap: recording' 10 || { cat "$TMPD/rec.err" >&2; fail "ljsnap record did not start"; }
# 1. the workers that ran before recording started
wrk -t2 -c8 -d5s "http://127.0.0.1:$PORT/" > "$TMPD/wrk1" 2>&1 || fail "wrk failed"
# 2. a reload: the master forks 4 new workers, the old ones exit
kill -HUP "$M"
W2=
for _ in $(seq 100); do
	W2=$(workers)
	new=0
	for w in $W2; do case " $W1 " in *" $w "*) ;; *) new=$((new + 1)) ;; esac; done
	[ "$new" = 4 ] && [ "$(echo $W2 | wc -w)" = 4 ] && break
	sleep 0.1
done
[ "$new" = 4 ] || fail "the reload did not replace the workers ($W1 -> $W2)"
note "after the reload: workers $W2"
wrk -t2 -c8 -d5s "http://127.0.0.1:$PORT/" > "$TMPD/wrk2" 2>&1 || fail "wrk failed"
# 3. Lua calling C: ngx.re.find into PCRE (/re, tests/nginx/ljsnap_work.lua)
[ "$(http /re)" = "re 200" ] || fail "the /re handler does not answer 're 200'"
wrk -t2 -c8 -d3s "http://127.0.0.1:$PORT/re" > "$TMPD/wrk3" 2>&1 || fail "wrk failed"
kill -INT "$R"
wait "$R" || { cat "$TMPD/rec.err" >&2; fail "ljsnap record failed"; }
grep -E 'Requests/sec|requests in' "$TMPD/wrk1" "$TMPD/wrk2" | sed 's/^/# /'
sed -n 's/^ljsnap: pid/pid/p' "$TMPD/rec.err" | sed 's/^/# record: /'

# The designed frames: the content_by_lua chunk, then the module's chain.
ENTRY=$(awk '/content_by_lua_block/ { n++ } n == 2 { print "main content_by_lua(nginx.conf:" NR ")"; exit }' "$P/nginx.conf")
CHAIN=$ENTRY$(awk -v c="$MOD" '$1 == "FN" { printf ";%s %s:%s", $2, c, $3 }' "$TMPD/frames")
note "expected innermost frames: $CHAIN"
: > "$TMPD/all.folded"
: > "$TMPD/all_re.folded"
for w in $W1 $W2; do
	report_of "w$w" --pid "$w"
	# the /re handler (checked below) runs another chunk
	grep 'handle_re ' "$FOLDED" >> "$TMPD/all_re.folded"
	grep -v 'handle_re ' "$FOLDED" > "$FOLDED.main"
	FOLDED=$FOLDED.main
	st=$(unwind_stats "$FOLDED" "$ENTRY" "$CHAIN" "$MOD|content_by_lua(")
	note "worker $w: $st"
	assert_ge "$(echo "$st" | awk '{ print $2 }')" 10 "worker $w: too few samples with Lua code on CPU"
	cat "$FOLDED" >> "$TMPD/all.folded"
done
check_unwind nginx-workers "$TMPD/all.folded" "$ENTRY" "$CHAIN" "$MOD|content_by_lua(" 400 80

# One stack from the kernel to main(): the stitched stacks of the Lua samples
# run from nginx's main() through its event loop and the lua module's content
# handler into the Lua frames; [unknown] frames in at most 2% of all samples.
F=$TMPD/all.folded
sum() { awk -v re="$1" '$0 ~ re { s += $NF } END { print s + 0 }' "$F"; }
tot=$(sum '.')
lua=$(sum 'content_by_lua\\(')
loop=$(sum ';main;.*;ngx_process_events_and_timers;.*content_by_lua\\(')
unk=$(sum '\\[unknown')
kern=$(sum '_\\[k\\]')
note "native: $tot samples, $lua with the Lua handler, $loop of them from main() through the event loop, $unk with an [unknown] frame, $kern with kernel frames"
awk '/content_by_lua\(/ { print $NF "\t" $0 }' "$F" | sort -rn | head -3 | cut -f2 | cut -c1-400 | sed 's/^/#   /'
assert_ge "$(pct "$loop" "$lua")" 90 "Lua handler stacks do not run through main() and ngx_process_events_and_timers"
[ $(( 100 * unk )) -le $(( 2 * tot )) ] || fail "[unknown] frames in more than 2% of the samples ($unk of $tot)"
assert_ge "$kern" 1 "no kernel frames in any stack"

# Every request runs in a coroutine the Lua module resumes from C
# (ngx_http_lua_run_thread -> lua_resume): such a stack is complete.  Of
# the samples with Lua code on CPU (not "not inside Lua"), >= 90% unwind to
# the content_by_lua chunk as resumed from C, and "ended in a coroutine
# without resumer" stays under 5% of them.
"$LJSNAP" report -f text "$CAP" > "$TMPD/all.txt" 2>/dev/null || fail "report -f text failed"
val() { awk -v k="$1" 'index($0, k) == 3 { print $NF; exit }' "$TMPD/all.txt"; }
state=$(val "with LuaJIT state"); idle=$(val "not inside Lua"); cres=$(val "of them: coroutines resumed from C")
nores=$(val "ended in a coroutine without resumer")
inlua=$(( ${state:-0} - ${idle:-0} ))
note "coroutines: $inlua samples in Lua, ${cres:-?} of them in coroutines resumed from C, ${nores:-?} without resumer"
assert_ge "$inlua" 100 "too few samples in Lua"
assert_ge "$(pct "${cres:-0}" "$inlua")" 90 "< 90% of the Lua samples seen as coroutines resumed from C"
[ $(( 100 * ${nores:-0} )) -le $(( 5 * inlua )) ] || fail "coroutines without resumer in more than 5% of the Lua samples"
grep -q 'unwound to the main chunk with no unknown frame: 0 of' "$TMPD/all.txt" &&
	fail "report says no sample unwound to the main chunk"

# Lua -> C: below handle_re's frame, PCRE's own frames, named by the symbols
# the library exports (nm -D of the libpcre the Lua module links), in >= 80%
# of its samples, and no [unknown] frame in >= 98%.
PCRE=$(LD_LIBRARY_PATH=$ORLIB ldd "$OR/root/usr/lib/nginx/modules/ngx_http_lua_module.so" |
	awk '/libpcre/ { print $3; exit }')
[ -n "$PCRE" ] || fail "the Lua module links no libpcre"
nm -D --defined-only "$PCRE" | awk '{ sub(/@.*/, "", $3); print $3 }' > "$TMPD/pcre.syms"
RE="handle_re $MOD:$(grep -n '^function M.handle_re' "$MOD" | cut -d: -f1)"
st=$(awk -v re="$RE" -v syms="$TMPD/pcre.syms" '
	BEGIN { while ((getline s < syms) > 0) z[s] = 1 }
	{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line); k = split(line, f, ";"); at = 0
	  for (i = 1; i <= k; i++) { sub(/_\[[ji]\]$/, "", f[i]); if (f[i] == re) at = i }
	  if (!at) next
	  T += n; p = 0; u = 0
	  for (i = at + 1; i <= k; i++) { if (f[i] in z) p = 1; if (index(f[i], "[unknown") == 1) u = 1 }
	  P += p * n; U += u * n }
	END { print T + 0, P + 0, U + 0 }' "$TMPD/all_re.folded")
set -- $st
note "Lua -> C: $1 samples under $RE, $2 of them in PCRE ($(basename "$PCRE")), $3 with [unknown]"
awk -v re="$RE" 'index($0, re) { print $NF "\t" $0 }' "$TMPD/all_re.folded" | sort -rn | head -2 | cut -f2 | cut -c1-400 | sed 's/^/#   /'
assert_ge "$1" 50 "too few samples under handle_re"
assert_ge "$(( 100 * $2 ))" "$(( 80 * $1 ))" "< 80% of handle_re's samples show PCRE's frames below it"
[ $(( 100 * $3 )) -le $(( 2 * $1 )) ] || fail "[unknown] frames in more than 2% of handle_re's samples"

# doctor on a worker under load
wrk -t2 -c8 -d5s "http://127.0.0.1:$PORT/" > "$TMPD/wrk3" 2>&1 &
WRK=$!
PIDS_TO_KILL="$PIDS_TO_KILL $WRK"
sleep 0.5
doctor_check nginx-worker "$(echo $W2 | awk '{ print $1 }')" openresty GC64 single-number
wait "$WRK"
# offsets: the compiler's for the luajit2 source of the same Debian version
DN=$(variant or-dualnum) || exit 1
ver=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^luajit2=/) { sub(/^luajit2=/, "", $i); print $i } }' "$OR/.stamp")
ver=${ver%+b[0-9]*}
grep -q " luajit2 $ver " "$DN/.stamp" || fail "luajit2 source ($(cat "$DN/.stamp")) is not version $ver"
ground_truth nginx-worker "$DN" ""
doctor_offsets nginx-worker
kill "$M"
wait "$M" 2>/dev/null
exit 0
