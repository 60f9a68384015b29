#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: code mapped while the recording runs.  tests/lua/record_remap.lua
# spins in Lua (lua_spin), then ffi.load()s zlib and spins in crc32()
# (zlib_spin), one CPU second each.  Three cases:
#   dlopen   tests/e2e/ljdlopen spins in C (c_spin) for 300 ms, then
#            dlopen()s libluajit-5.1.so.2 and runs the script: neither
#            LuaJIT nor zlib is mapped when the process is first inspected;
#   luajit   /usr/bin/luajit runs it: LuaJIT is there from the start, zlib
#            comes later;
#   exec     ljdlopen spins in C, then execs /usr/bin/luajit (same pid):
#            report must name each image's frames with its own mappings.
#
# Ground truth: the script's structure and the CPU time each phase took
# (os.clock, printed by the script), at the sampling frequency:
#   - the recorder finds LuaJIT in the library once it is mapped: >= 80% of
#     the samples that lua_spin's CPU time predicts carry its Lua frame
#     (under the main chunk);
#   - zlib's frames are named: >= 80% of the samples zlib_spin's CPU time
#     predicts carry its frame, and >= 90% of those continue into a frame
#     named by a symbol zlib exports (nm -D), <= 2% into an [unknown] one;
#   - where ljdlopen ran c_spin: >= 80% of the samples its CPU time predicts
#     carry the frame c_spin (its own symbol, nm) under main, in a stack
#     rooted at "ljdlopen" (its comm before any exec);
#   - c_spin calls clock_gettime(CLOCK_MONOTONIC), which the vDSO answers:
#     >= 10 samples there, and >= 90% of them name the vDSO frame (two
#     frames below c_spin, under libc's clock_gettime) with a name the
#     vDSO's own symbol table gives that function (dlsym on
#     linux-vdso.so.1, printed by ljdlopen as "VDSO name"), not [vdso]+0x...;
#   - c_spin's other work is lcg_burn(), always inlined into it: >= 90% of
#     the c_spin samples not in clock_gettime show "c_spin;lcg_burn_[i]",
#     and with --lines "c_spin ljdlopen.c:C;lcg_burn ljdlopen.c:L_[i]",
#     C and L the lines of the call and of the loop in the source.
. "$(dirname "$0")/lib.sh"
need_bpf
need_prog nm binutils
need_prog luajit luajit
HOST=$top_builddir/tests/e2e/ljdlopen
[ -x "$HOST" ] || fail "tests/e2e/ljdlopen not built (libluajit-5.1-dev missing?)"
SCRIPT=$top_srcdir/tests/lua/record_remap.lua
ZLIB=$(ldconfig -p | awk '$1 == "libz.so.1" && /x86-64/ { print $NF; exit }')
[ -n "$ZLIB" ] || fail "libz.so.1 not found by ldconfig"
nm -D --defined-only "$ZLIB" | awk '{ sub(/@.*/, "", $3); print $3 }' > "$TMPD/zsyms"
grep -qx crc32 "$TMPD/zsyms" || fail "$ZLIB exports no crc32"
nm "$HOST" | grep -q ' [tT] c_spin$' || fail "$HOST has no symbol c_spin"
HZ=499
line() { awk -v k="$2" '$1 == "FN" && $2 == k { print $3 }' "$TMPD/$1.out"; }
cpu() { awk -v k="$2" '$1 == "CPU" && $2 == k { printf "%d\n", $3 * 1000 }' "$TMPD/$1.out"; }

# check_inline NAME: the inlined lcg_burn under c_spin, by name and by line
check_inline() {
	local src=$top_srcdir/tests/e2e/ljdlopen.c cl ll st
	cl=$(grep -n 'lcg_burn(&x);' "$src" | cut -d: -f1)
	ll=$(grep -n 'LCG_LINE' "$src" | cut -d: -f1)
	"$LJSNAP" report -f folded --lines -o "$TMPD/$1.lines" "$TMPD/$1.ljsnap" 2> /dev/null ||
		fail "$1: report --lines failed"
	st=$(awk -v want="c_spin;lcg_burn_[i]" -v wantl="c_spin ljdlopen.c:$cl;lcg_burn ljdlopen.c:${ll}_[i]" '
		FILENAME ~ /lines$/ { if (index($0, wantl)) LL += $NF; next }
		{ line = $0; sub(/ [0-9]+$/, "", line)
		  if (line !~ /^ljdlopen;/ || !index(line, ";main;c_spin")) next
		  if (index(line, "clock_gettime")) next
		  T += $NF; if (index(line, want)) I += $NF }
		END { print T + 0, I + 0, LL + 0 }' "$TMPD/$1.folded" "$TMPD/$1.lines")
	set -- "$1" $st
	note "$1: c_spin samples outside clock_gettime: $2; with lcg_burn_[i]: $3; by line (:$cl, :$ll): $4"
	assert_ge "$2" 50 "$1: too few c_spin samples outside clock_gettime"
	assert_ge "$(( 100 * $3 ))" "$(( 90 * $2 ))" "$1: < 90% of them show the inlined lcg_burn"
	assert_ge "$(( 100 * $4 ))" "$(( 90 * $2 ))" "$1: < 90% of them name the lines of the call and the loop"
}

# run_case NAME COMM BUILD CMD...: record `CMD SCRIPT 1`, check as above
run_case() {
	local n=$1 comm=$2 build=$3 cap=$TMPD/$1.ljsnap pid lua zl exp_l exp_z LS ZS
	shift 3
	"$LJSNAP" record -F $HZ -o "$cap" -- "$@" "$SCRIPT" 1 \
		> "$TMPD/$n.out" 2> "$TMPD/$n.err" || { cat "$TMPD/$n.err" >&2; fail "$n: ljsnap record failed"; }
	grep -q '^done' "$TMPD/$n.out" || { cat "$TMPD/$n.out" "$TMPD/$n.err" >&2; fail "$n: the workload did not run"; }
	grep -q "($comm): upstream GC64 in .*$build" "$TMPD/$n.err" ||
		{ cat "$TMPD/$n.err" >&2; fail "$n: the recorder did not find LuaJIT in $build"; }
	pid=$("$LJSNAP" info "$cap" | awk -v c="$comm" '/^  pid [0-9]+ \(ppid/ && index($0, c) { print $2; exit }')
	[ -n "$pid" ] || fail "$n: no $comm process in the capture"
	"$LJSNAP" report -f folded --pid "$pid" -o "$TMPD/$n.folded" "$cap" 2> "$TMPD/$n.rerr" ||
		{ cat "$TMPD/$n.rerr" >&2; fail "$n: ljsnap report failed"; }

	LS="lua_spin $SCRIPT:$(line "$n" lua_spin)"
	ZS="zlib_spin $SCRIPT:$(line "$n" zlib_spin)"
	awk '$1 == "VDSO" { print $2 }' "$TMPD/$n.out" > "$TMPD/$n.vdso"
	awk -v ls="$LS" -v zs="$ZS" -v main="main $SCRIPT" -v syms="$TMPD/zsyms" -v vs="$TMPD/$n.vdso" '
		BEGIN { while ((getline s < syms) > 0) z[s] = 1; while ((getline s < vs) > 0) v[s] = 1 }
		{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		  k = split(line, f, ";"); hm = 0; at = 0
		  for (i = 1; i <= k; i++) {
			sub(/_\[[ji]\]$/, "", f[i])
			if (f[i] == main) hm = 1
			if (hm && (f[i] == ls || f[i] == zs)) at = i
		  }
		  if (f[1] == "ljdlopen") for (i = 2; i <= k; i++) if (f[i] == "c_spin" && f[i - 1] == "main") {
			C += n
			if (i + 2 <= k && (f[i + 2] in v)) VN += n
			for (j = i + 1; j <= k; j++) if (index(f[j], "[vdso]") == 1) { VU += n; break }
			break
		  }
		  if (!at) next
		  if (f[at] == ls) { L += n; next }
		  Z += n; named = 0; unk = 0
		  for (i = at + 1; i <= k; i++) {
			if (f[i] in z) named = 1
			if (index(f[i], "[unknown") == 1) unk = 1
		  }
		  if (named && !unk) ZN += n
		  if (unk) { ZU += n; if (shown++ < 3) print "unknown: " line > "/dev/stderr" }
		}
		END { printf "lua %d\nzlib %d\nzlib_named %d\nzlib_unknown %d\nc_spin %d\nvdso_named %d\nvdso_unnamed %d\n",
		      L, Z, ZN, ZU, C, VN, VU }' \
		"$TMPD/$n.folded" > "$TMPD/$n.check"
	sed "s/^/# $n: /" "$TMPD/$n.check"
	lua=$(value lua "$TMPD/$n.check"); zl=$(value zlib "$TMPD/$n.check")
	exp_l=$(( $(cpu "$n" lua_spin) * HZ / 1000 )); exp_z=$(( $(cpu "$n" zlib_spin) * HZ / 1000 ))
	note "$n: expected from CPU time: lua_spin $exp_l, zlib_spin $exp_z samples"
	assert_ge "$exp_l" 200 "$n: lua_spin ran too short"
	assert_ge "$exp_z" 200 "$n: zlib_spin ran too short"
	assert_ge "$(( 100 * lua ))" "$(( 80 * exp_l ))" "$n: lua_spin: < 80% of its samples carry its Lua frame"
	assert_ge "$(( 100 * zl ))" "$(( 80 * exp_z ))" "$n: zlib_spin: < 80% of its samples carry its Lua frame"
	assert_ge "$(( 100 * $(value zlib_named "$TMPD/$n.check") ))" "$(( 90 * zl ))" \
		"$n: zlib_spin: < 90% of its samples continue into a frame named by zlib's symbols"
	assert_ge "$(( 2 * zl ))" "$(( 100 * $(value zlib_unknown "$TMPD/$n.check") ))" \
		"$n: zlib_spin: > 2% of its samples have [unknown] frames"
	if grep -q '^CPU c ' "$TMPD/$n.out"; then
		exp_c=$(( $(cpu "$n" c) * HZ / 1000 ))
		note "$n: expected from CPU time: c_spin $exp_c samples"
		assert_ge "$exp_c" 100 "$n: c_spin ran too short"
		assert_ge "$(( 100 * $(value c_spin "$TMPD/$n.check") ))" "$(( 80 * exp_c ))" \
			"$n: c_spin: < 80% of its samples carry its frame under main"
		check_inline "$n"
		[ -s "$TMPD/$n.vdso" ] || fail "$n: ljdlopen found no vDSO symbol for clock_gettime"
		vn=$(value vdso_named "$TMPD/$n.check"); vu=$(value vdso_unnamed "$TMPD/$n.check")
		assert_ge "$(( vn + vu ))" 10 "$n: too few samples in the vDSO"
		assert_ge "$(( 100 * vn ))" "$(( 90 * (vn + vu) ))" "$n: < 90% of the vDSO frames named"
	fi
}

run_case dlopen ljdlopen libluajit-5.1.so "$HOST" 300 libluajit-5.1.so.2
LUAJIT=$(readlink -f "$(command -v luajit)")
run_case luajit luajit "$LUAJIT" "$LUAJIT"
run_case exec luajit "$LUAJIT" "$HOST" 300 --exec "$LUAJIT"
# one pid, two images: ljdlopen's, then a higher-numbered one of luajit
"$LJSNAP" info "$TMPD/exec.ljsnap" | awk '
	/^  pid [0-9]+ \(ppid/ { im = 0; if (match($0, /\(image [0-9]+/)) im = substr($0, RSTART + 7, RLENGTH - 7) + 0
		if ($5 == "ljdlopen" && (!sd || im > dl)) { sd = 1; dl = im }
		if ($5 == "luajit" && (!sl || im < lj)) { sl = 1; lj = im } }
	END { exit !(sd && sl && lj > dl) }' ||
	{ "$LJSNAP" info "$TMPD/exec.ljsnap" >&2; fail "exec: the capture does not describe ljdlopen, then luajit as a later image"; }
exit 0
