# SPDX-License-Identifier: GPL-2.0-or-later
# stitch_order.awk -- how many samples of a mixed folded profile keep the
# native order of --native-only's (tests/e2e/stitch_reenter.sh).
#
#   awk [-v entry=SYMBOL] -f stitch_order.awk NATIVE.folded MIXED.folded [LUAONLY.folded]
#
# With entry set, only the stacks whose second frame (after the process) is
# that symbol count, in both views: the samples whose native unwind reached
# the program's entry (_start), since one that stopped early has its Lua
# frames below what was unwound, an order of its own.
# Both views come from the same samples and the same native unwind.  A
# sample's mixed stack, with every maximal run of Lua-side frames (Lua
# functions, builtins, pseudo frames: see lua()) collapsed into one "VM"
# token and every "[LuaJIT interpreter]" / "[JIT code]" frame written as
# "VM" too, must be one of the native-only stacks, whose VM frames are
# "[LuaJIT interpreter]" / "[JIT code]": then every native frame sits between
# the same VM activations in both views.  A sample whose collapsed stack
# matches no native-only stack (beyond the samples of that stack) is
# misordered: its native frames were spliced around the wrong activation,
# e.g. the parser's frames (lua_loadx) above the main chunk instead of below
# `load`.  One activation has no frame in the mixed view: the one
# lua_cpcall enters to run luajit's pmain, a C function whose Lua-side frame
# is dropped since its native frame is there; its VM token is dropped from
# both views (a sample without Lua frames keeps it in the mixed view).
# The same holds for every activation that runs a C function alone:
# `require` calls its searchers through lua_call, so --native-only has
# require;VM;searcher and the mixed view require;searcher.  With the
# --lua-only view (the Lua walk alone, no stitching) as a third file, a VM
# token of a native-only stack between two native frames is dropped when
# those two are C functions next to each other in a --lua-only stack.
# Prints "samples N misordered M".
function lua(f) {
	if (f ~ /\.lua(:[0-9]+)?(_\[[ij]\])?$/ || f ~ /^main / || f ~ /^function </) return 1
	# 'name chunk:line' of a chunk named otherwise (/usr/bin/ldoc, =stdin,
	# a load()ed string: [string "..."])
	if (f ~ /^[^ ]+ [^ ]+:[0-9]+>?(_\[[ij]\])?$/) return 1
	if (f ~ /^[^ ]+ \[string ".*"\]:[0-9]+>?(_\[[ij]\])?$/) return 1
	if (f ~ /_\[[ij]\]$/ && f !~ /^lj_|^luaJIT_/) return 1
	if (f ~ /^\[(JIT compiler|GC|trace exit)\]$/ || f ~ /^\[unknown/) return 1
	if (f ~ /^(builtin#[0-9]+|C:0x[0-9a-f]+)$/) return 1
	if (f ~ /^[a-z_]+(\.[a-z_]+)+$/) return 1	# library builtins: table.sort, ffi.meta.__eq
	# the base library's builtins (unwind/ljwalk_ffnames.c), require and module
	return f ~ /^(assert|collectgarbage|dofile|error|gcinfo|getfenv|getmetatable|ipairs|ipairs_aux|load|loadfile|loadstring|newproxy|next|pairs|pcall|print|rawequal|rawget|rawset|select|setfenv|setmetatable|tonumber|tostring|type|unpack|xpcall|require|module)$/
}
function collapse(line,    n, i, k, fr, out, prev, tok) {
	k = split(line, fr, ";")
	out = ""; prev = ""
	for (i = 1; i <= k; i++) {
		if (fr[i] == "[LuaJIT interpreter]" || fr[i] == "[JIT code]") tok = "VM"
		else if (lua(fr[i])) { if (prev == "L") continue; tok = "VM"; prev = "L"; out = out ";" tok; continue }
		else tok = fr[i]
		prev = ""
		out = out ";" tok
	}
	return out
}
FILENAME == ARGV[3] {
	sub(/ [0-9]+$/, ""); k = split($0, t, ";")
	for (i = 2; i < k; i++) if (!lua(t[i]) && !lua(t[i + 1])) cadj[t[i] ";" t[i + 1]] = 1
	next
}
{
	n = $NF; sub(/ [0-9]+$/, "")
	if (entry != "" && index($0, ";" entry ";") != index($0, ";")) next
	key = collapse($0)
	sub(/;lua_cpcall;VM;/, ";lua_cpcall;", key)
	if (FILENAME == ARGV[1]) nat0[key] += n
	else { mix[key] += n; total += n }
}
END {
	for (key in nat0) {
		k = split(key, t, ";"); out = ""
		for (i = 2; i <= k; i++) {
			if (t[i] == "VM" && i > 2 && i < k && ((t[i - 1] ";" t[i + 1]) in cadj)) continue
			out = out ";" t[i]
		}
		nat[out] += nat0[key]
	}
	bad = 0
	for (k in mix) if (mix[k] > nat[k]) bad += mix[k] - nat[k]
	printf "samples %d misordered %d\n", total, bad
}
