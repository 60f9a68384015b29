#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# E2E: stitched native + Lua stacks of `ljsnap report` against ground truth.
#
# tests/native/lhost.c embeds Debian's libluajit-5.1.so and runs
# tests/lua/stitch_host.lua: main -> host_run -> lua_pcall -> entry -> work ->
#   a  c_spin (lua_CFunction) -> spin_inner
#   b  FFI call ffi.C.lhost_ffi_spin
#   c  c_call_back (lua_CFunction) -> lua_call -> callback_lua (Lua)
#   d  table.sort -> (C) -> cmp (Lua comparator)
# built with frame pointers (lhost_fp) and without (lhost_nofp), run with the
# JIT off and on under `ljsnap record` (real BPF).
#
# Ground truth, independent of ljsnap:
#   - native frames: gdb's backtrace of the same binary at a breakpoint in each
#     branch (spin_inner, lhost_ffi_spin, lua_call from c_call_back and from
#     table.sort), every frame named like ljsnap names it: its symbol, or
#     FILE+0xSTART (START: the FDE that holds pc - 1 - load address for
#     return addresses) in the stripped libluajit (ljsnap's recovered names
#     for such functions are put back to that form: stitch_lib.sh
#     unrecover); after lua_call, gdb steps into the VM and reads the
#     return address on top of the stack: when it is lua_call's caller,
#     lua_call tail-jumped to the VM (Debian's build does), so no lua_call frame
#     exists while callback_lua runs, and none is expected;
#   - FFI from a trace (JIT on): the return address of lhost_ffi_spin lies in
#     no file mapping (machine code of a trace) once the call is compiled;
#   - Lua frames: line numbers from debug.getinfo, names as LuaJIT infers them
#     (debug.getinfo "n": entry, callback_lua and cmp are called from C and
#     have none: "function <chunk:line>"; work is the global "work");
#   - time per branch: os.clock() around each branch in the script.
#
# Expected stitched stacks (root first; NAT = gdb's frames root..lua_pcall,
# i.e. _start;__libc_start_main_impl;__libc_start_call_main;main;host_run;lua_pcall):
#   a  NAT;ENTRY;WORK;c_spin;spin_inner
#   b  NAT;ENTRY;WORK;ffi.meta.__call;LJ+X3;LJ+X2;LJ+X1;lhost_ffi_spin  (interpreter:
#      lj_cf_ffi_meta___call, lj_ccall_func, lj_vm_ffi_call in the stripped lib)
#      NAT;ENTRY;WORK_[j];lhost_ffi_spin                                 (JIT on, from the trace)
#   c  NAT;ENTRY;WORK;c_call_back;CALLBACK
#   d  NAT;ENTRY;WORK;table.sort;LJ+Y3;LJ+Y2;LJ+Y1;CMP   (lj_cf_table_sort, auxsort, sort_comp;
#      Y2 is one of auxsort's call sites: each variant gdb saw is allowed)
# The VM frame above lua_pcall is replaced by the Lua activation ENTRY;WORK
# (plus the builtin's own Lua-side frame, ffi.meta.__call / table.sort); the
# Lua-side frames of the lua_CFunctions c_spin and c_call_back are dropped,
# their native frames being there.  Allowed variation, nothing else: kernel
# frames (name_[k]) after the leaf (a sample taken in the kernel), and with
# the JIT on a "_[j]" suffix on the innermost Lua frame CALLBACK / CMP (running
# in a trace).  Checked per build and JIT mode: >= 95% of each branch's
# samples have exactly an expected stack, and each branch's share of the
# samples is within 5 points of its share of the CPU time.  Same for
# --native-only (VM frames as "[LuaJIT interpreter]", a trace as "[JIT code]")
# and --lua-only (comm;ENTRY;WORK;c_spin | ffi.meta.__call |
# c_call_back;CALLBACK | table.sort;CMP: the lua_CFunctions named by their
# symbols, which nm of the host gives for the addresses the host prints).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stitch_lib.sh"
need_bpf
need_prog gdb gdb
need_prog objdump binutils
need_prog python3 python3
SCRIPT=$top_srcdir/tests/lua/stitch_host.lua
SECS=${STITCH_SECONDS:-3}
gdb_helper

# ground_truth BIN: gdb runs (JIT off: every branch; JIT on: where the FFI
# call returns to once compiled) into $TMPD/BASENAME.gt
ground_truth() {
	gt=$TMPD/$(basename "$1").gt
	timeout 120 gdb -q -batch -nx -ex 'set pagination off' -ex 'set confirm off' \
		-ex 'set backtrace past-main on' -ex "source $TMPD/gt.py" \
		-ex 'break spin_inner' -ex run -ex 'python lh_bt("a")' -ex delete \
		-ex 'break lhost_ffi_spin' -ex continue -ex 'python lh_bt("b")' -ex delete \
		-ex 'break c_call_back' -ex continue -ex delete -ex 'break *lua_call' \
		-ex continue -ex 'python lh_lua_call()' -ex continue -ex 'python lh_lua_call()' \
		-ex continue -ex 'python lh_lua_call()' -ex continue -ex 'python lh_lua_call()' \
		-ex continue -ex 'python lh_lua_call()' -ex kill \
		--args "$1" "$SCRIPT" 2 joff > "$TMPD/gdb1.log" 2>&1
	timeout 120 gdb -q -batch -nx -ex 'set pagination off' -ex 'set confirm off' \
		-ex "source $TMPD/gt.py" -ex 'break *lhost_ffi_spin' -ex 'ignore 1 400' -ex run \
		-ex 'python lh_trace_ra("bjit")' -ex kill \
		--args "$1" "$SCRIPT" 4 > "$TMPD/gdb2.log" 2>&1
	grep -h '^GT ' "$TMPD/gdb1.log" "$TMPD/gdb2.log" | sort -u > "$gt"
	for t in a b c d; do
		grep -q "^GT $t " "$gt" || { cat "$TMPD/gdb1.log" >&2; fail "$1: gdb gave no stack for branch $t"; }
	done
	grep -q '^GT bjit anon' "$gt" ||
		{ cat "$TMPD/gdb2.log" >&2; fail "$1: the compiled FFI call does not return into a trace"; }
	note "$(basename "$1"): gdb ground truth:"
	sed 's/^/#   /' "$gt"
}

# frame_pointers BIN WANT(1|0): the binary's functions do (not) set up rbp
frame_pointers() {
	for fn in main host_run c_spin c_call_back; do
		objdump -d --no-show-raw-insn --disassemble="$fn" "$1" > "$TMPD/dis" 2>/dev/null ||
			fail "objdump cannot disassemble $fn in $1"
		has=0
		grep -q 'mov  *%rsp,%rbp' "$TMPD/dis" && has=1
		[ "$has" = "$2" ] || fail "$1: $fn sets up a frame pointer: $has, want $2"
	done
}

# expect CASE MODE COMM GTFILE: expected stacks ("branch<TAB>view<TAB>stack") and
# markers ("branch<TAB>view<TAB>@frame", a frame that puts a sample in a branch).
# csym BIN ADDR REF_ADDR REF_SYM: nm's symbol of BIN at runtime address ADDR,
# the load bias taken from REF_SYM at REF_ADDR (a PIE: runtime = bias + value)
csym() {
	rv=$(nm "$1" | awk -v s="$4" '$3 == s { print $1; exit }')
	[ -n "$rv" ] || { echo "?"; return; }
	x=$(printf '%016x' $(( $2 - ($3 - 0x$rv) )))
	nm "$1" | awk -v x="$x" '$1 == x && $2 ~ /^[tT]$/ { print $3; found = 1; exit } END { if (!found) print "?" }'
}

expect() {
	out=$TMPD/$1.out
	fn_line() { awk -v k="$1" '$1 == "FN" && $2 == k { print $3 }' "$out"; }
	lname() {	# name line: LuaJIT's name for fn, or "function <chunk:line>"
		n=$(awk -v k="$1" '$1 == "NAME" && $2 == k { print $3 }' "$out")
		[ -n "$n" ] || fail "$1: the script printed no NAME for $1"
		if [ "$n" = "?" ]; then echo "function <$SCRIPT:$2>"; else echo "$n $SCRIPT:$2"; fi
	}
	for f in entry work callback_lua cmp; do
		[ -n "$(fn_line $f)" ] || fail "$1: the script printed no FN line for $f"
	done
	ENTRY=$(lname entry "$(fn_line entry)")
	WORK=$(lname work "$(fn_line work)")
	CALLBACK=$(lname callback_lua "$(fn_line callback_lua)")
	CMP=$(lname cmp "$(fn_line cmp)")
	# The C functions' names: nm's symbol at the offset of the address the
	# host printed (its load bias from the host's own "BASE" line, or from a
	# symbol it printed: c_spin's address minus nm's c_spin value).
	ASPIN=$(awk '$1 == "ADDR" && $2 == "c_spin" { print $3 }' "$out")
	ACB=$(awk '$1 == "ADDR" && $2 == "c_call_back" { print $3 }' "$out")
	aspin=$(csym "$BIN" "$ASPIN" "$ASPIN" c_spin)
	acb=$(csym "$BIN" "$ACB" "$ASPIN" c_spin)
	[ "$aspin" = c_spin ] && [ "$acb" = c_call_back ] ||
		fail "$1: nm names the host's functions '$aspin' and '$acb'"
	awk -v mode="$2" -v comm="$3" -v E="$ENTRY" -v W="$WORK" -v CB="$CALLBACK" -v CMP="$CMP" \
	    -v aspin="$aspin" -v acb="$acb" '
	function out(b, v, s) { printf "%s\t%s\t%s\n", b, v, s }
	$1 != "GT" { next }
	$2 == "bjit" { next }
	{
		tag = $2; tail = $3; n = split($4, f, ";"); vm = 0
		for (j = 1; j <= n; j++) if (f[j] == "lua_pcall") { vm = j + 1; break }
		if (!vm || vm > n || f[vm] !~ /^libluajit-5\.1\.so[.0-9]*\+0x/) {
			print "bad ground truth: " $0 > "/dev/stderr"; exit 1
		}
		bi = tag == "b" ? ";ffi.meta.__call" : tag == "d" ? ";table.sort" : ""
		leaf = tag == "c" ? CB : tag == "d" ? CMP : ""
		s = comm; nat = comm; pre = comm
		for (j = 1; j <= n; j++) {
			if (j == vm) {
				s = s ";" E ";" W bi; nat = nat ";[LuaJIT interpreter]"
			} else if (j == n && leaf != "") {	# lua_call: the VM runs leaf
				if (tail == "no") { s = s ";lua_call"; nat = nat ";lua_call" }
				s = s ";" leaf; nat = nat ";[LuaJIT interpreter]"
			} else {
				s = s ";" f[j]; nat = nat ";" f[j]
			}
			if (j < vm) pre = pre ";" f[j]
		}
		out(tag, "stitched", s); out(tag, "native", nat)
		if (mode == "jon" && leaf != "") {
			out(tag, "stitched", s "_[j]")
			sub(/;\[LuaJIT interpreter\]$/, ";[JIT code]", nat); out(tag, "native", nat)
		}
		if (mode == "jon" && tag == "b") {	# the compiled call, from the trace
			out(tag, "stitched", pre ";" E ";" W "_[j];" f[n])
			out(tag, "native", pre ";[JIT code];" f[n])
		}
		# markers: the leaf and the frame the VM calls (native view)
		out(tag, "native", "@" f[vm + 1]); if (leaf == "") out(tag, "native", "@" f[n])
	}
	END {
		out("a", "stitched", "@spin_inner"); out("a", "stitched", "@c_spin")
		out("b", "stitched", "@lhost_ffi_spin"); out("b", "stitched", "@ffi.meta.__call")
		out("c", "stitched", "@c_call_back"); out("c", "stitched", "@" CB)
		out("d", "stitched", "@table.sort"); out("d", "stitched", "@" CMP)
		out("a", "lua", comm ";" E ";" W ";" aspin); out("a", "lua", "@" aspin)
		out("b", "lua", comm ";" E ";" W ";ffi.meta.__call"); out("b", "lua", "@ffi.meta.__call")
		out("c", "lua", comm ";" E ";" W ";" acb ";" CB); out("c", "lua", "@" acb)
		out("d", "lua", comm ";" E ";" W ";table.sort;" CMP); out("d", "lua", "@table.sort")
		if (mode == "jon") {
			out("c", "stitched", "@" CB "_[j]"); out("d", "stitched", "@" CMP "_[j]")
			out("b", "lua", comm ";" E ";" W "_[j]"); out("b", "lua", "@!" W "_[j]")
			out("c", "lua", comm ";" E ";" W ";" acb ";" CB "_[j]")
			out("d", "lua", comm ";" E ";" W ";table.sort;" CMP "_[j]")
		}
	}' "$4" > "$TMPD/$1.expect" || fail "$1: cannot build the expected stacks"
}

for build in fp nofp; do
	BIN=$top_builddir/tests/native/lhost_$build
	[ -x "$BIN" ] || fail "$BIN not built (libluajit-5.1-dev missing?)"
	LIBLJ=$(readlink -f "$(ldd "$BIN" | awk '/libluajit/ { print $3; exit }')")
	[ -f "$LIBLJ" ] || fail "$BIN: no libluajit in ldd's list"
	frame_pointers "$BIN" "$([ $build = fp ] && echo 1 || echo 0)"
	ground_truth "$BIN"
	for mode in joff jon; do
		case=${build}_$mode
		cap=$TMPD/$case.ljsnap
		"$LJSNAP" record -q -F 999 -o "$cap" -- "$BIN" "$SCRIPT" "$SECS" "$mode" \
			> "$TMPD/$case.out" 2> "$TMPD/$case.err" ||
			{ cat "$TMPD/$case.err" >&2; fail "$case: ljsnap record failed"; }
		grep -q '^ROUNDS ' "$TMPD/$case.out" || { cat "$TMPD/$case.err" >&2; fail "$case: lhost did not finish"; }
		pid=$("$LJSNAP" info "$cap" | awk '/^  pid [0-9]+ \(ppid/ && /lhost_/ { print $2; exit }')
		[ -n "$pid" ] || fail "$case: no lhost process in the capture"
		comm=$(basename "$BIN" | cut -c1-15)
		expect "$case" "$mode" "$comm" "$TMPD/lhost_$build.gt"
		for view in stitched native lua; do
			case $view in
			stitched) opt= ;;
			native) opt=--native-only ;;
			*) opt=--lua-only ;;
			esac
			# Lua names as LuaJIT gives them (the call site), as gdb's ground truth has them
			# shellcheck disable=SC2086
			"$LJSNAP" report -f folded --callsite-names --pid "$pid" $opt -o "$TMPD/$case.$view.folded" "$cap" \
				2> "$TMPD/$case.$view.rerr" ||
				{ cat "$TMPD/$case.$view.rerr" >&2; fail "$case: ljsnap report $opt failed"; }
			unrecover "$LIBLJ" "$cap" "$pid" "$TMPD/$case.$view.folded"
			tally "$case" "$view" "$TMPD/$case.$view.folded"
			check "$case" "$view"
		done
		shares "$case"
	done
done
exit 0
