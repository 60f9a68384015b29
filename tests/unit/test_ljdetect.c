/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_ljdetect.c -- LuaJIT detection on real binaries and live processes.
 *
 * Files (Debian packages luajit, libluajit-5.1-2, tarantool):
 *   /usr/bin/luajit, libluajit-5.1.so.2: upstream GC64, disp2g -3968, 80-byte C frame
 *   /usr/bin/tarantool: Tarantool 2.6 non-GC64, disp2g -3144
 *   /bin/ls: not LuaJIT; truncated/corrupt copies: errors, no crash; a renamed
 *   copy of luajit: found all the same.
 * The .eh_frame parser is checked FDE by FDE against `readelf -wf`, and the
 * symbol-derived VM range of tarantool against its FDE.
 * Live: tests/unit/ljhost (system libluajit), /usr/bin/luajit and
 * /usr/bin/tarantool running a script; lj_detect__process finds the VM, and
 * process memory confirms the layout (GG_State self-references, the
 * dispatch table pointing at the VM, vmstate, cur_L, J->trace[] entries
 * whose prototypes carry our chunk name).
 * "--openresty": the same for the OpenResty luajit2 package unpacked
 * (dpkg -x) into $LJSNAP_LUAJIT2_DIR; exit 77 when that is absent.
 * "--binary PATH FAMILY GC64": the same for any interpreter binary built with
 * default options (e.g. "--binary src/luajit upstream-head 1"); with a 6th
 * argument ("live") for a build no table describes: the layout then comes
 * from lj_detect__calibrate_live and is checked against process memory.
 * Otherwise exit 77 only when a Debian binary is missing and CI is not "true".
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unwind/detect/livemem.h"
#include "unwind/detect/ljdetect.h"
#include "symtab/ehframe.h"
#include "symtab/elf.h"
#include "tests/unit/check.h"
#include "tests/unit/ljdetect_test.h"

int failures, checks;
static int skipped, ci;
static char tmpdir[PATH_MAX];
static char selfdir[PATH_MAX];

#define LJSO "/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2"

/* Is a required file there?  Missing: skip (fail on CI). */
static int need(const char *path, const char *pkg)
{
	if (access(path, R_OK) == 0)
		return 1;
	if (ci) {
		CHECKF(0, "%s missing on CI: install the Debian package '%s'", path, pkg);
	} else {
		fprintf(stderr, "SKIP: %s missing (Debian package '%s')\n", path, pkg);
		skipped = 1;
	}
	return 0;
}

/* Print what detection said (for the test log). */
static void dump(const char *path, const struct lj_detect *d)
{
	unsigned i;

	printf("%s: luajit %d family %s gc64 %d vm %#lx-%#lx disp2g %d g2j %d\n", path, d->is_luajit,
	       lj_layout__family_name(d->family), d->gc64, (unsigned long)d->vm_lo,
	       (unsigned long)d->vm_hi, d->layout.disp2g, d->layout.g2j);
	for (i = 0; i < d->nnotes; i++)
		printf("  note: %s\n", d->notes[i]);
	for (i = 0; i < d->nwarnings; i++)
		printf("  warning: %s\n", d->warnings[i]);
}

/* Copy the first n bytes of src into dst (n == -1: all). */
static int copy_file(const char *src, const char *dst, long n)
{
	char buf[65536];
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	long done = 0;
	size_t r;
	int err = 0;

	if (!in || !out) {
		err = -1;
		goto out;
	}
	while ((n < 0 || done < n) && (r = fread(buf, 1, sizeof(buf), in)) > 0) {
		if (n >= 0 && done + (long)r > n)
			r = (size_t)(n - done);
		if (fwrite(buf, 1, r, out) != r) {
			err = -1;
			break;
		}
		done += (long)r;
	}
out:
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	return err;
}

/* -- Static files -------------------------------------------------------- */

/* Detection of one LuaJIT file against known facts. */
static void expect_luajit(const char *path, enum lj_family fam, int gc64, int32_t disp2g,
			  uint32_t gg_ofs_g, int src, struct lj_detect *d)
{
	const struct lj_layout *t = lj_layout__builtin(fam, gc64);
	int32_t funcc_state = t->vmst.cfunc ? t->vmst.cfunc : t->vmst.c;
	int err = lj_detect__elf(path, d);

	dump(path, d);
	CHECKF(err == 0, "%s: lj_detect__elf %d", path, err);
	CHECKF(d->is_luajit, "%s: not detected", path);
	CHECKF(d->gc64 == gc64, "%s: gc64 %d", path, d->gc64);
	CHECKF(d->family == fam, "%s: family %s", path, lj_layout__family_name(d->family));
	CHECKF(d->layout_ok, "%s: no layout", path);
	CHECKF(d->layout.disp2g == disp2g, "%s: disp2g %d, want %d", path, d->layout.disp2g, disp2g);
	CHECKF(d->layout.gg_ofs_g == gg_ofs_g, "%s: gg_ofs_g %u", path, d->layout.gg_ofs_g);
	CHECKF(d->layout.cf_size == t->cf_size && d->fde_cfa == t->cf_size, "%s: cf_size %u fde %u",
	      path, d->layout.cf_size, d->fde_cfa);
	CHECKF(!!(d->layout.flags & LJ_LAYOUT_F_GC64) == gc64, "%s: layout GC64 flag", path);
	CHECKF(src < 0 || d->vm_src == (enum lj_detect_vm_src)src, "%s: VM range source %d", path,
	      d->vm_src);
	CHECKF(d->vm_hi - d->vm_lo > 8192 && d->vm_ffi > d->vm_lo && d->vm_ffi < d->vm_hi,
	      "%s: VM range %#lx-%#lx ffi %#lx", path, (unsigned long)d->vm_lo,
	      (unsigned long)d->vm_hi, (unsigned long)d->vm_ffi);
	CHECKF((d->code.have & (LJ_DETECT_C_FUNCC | LJ_DETECT_C_CUR_L | LJ_DETECT_C_JLOOP)) ==
	      (LJ_DETECT_C_FUNCC | LJ_DETECT_C_CUR_L | LJ_DETECT_C_JLOOP), "%s: code patterns %#x",
	      path, d->code.have);
	CHECKF(d->code.funcc_hits == 1 && !d->code.funcc_conflicts, "%s: BC_FUNCC hits %u", path,
	      d->code.funcc_hits);
	CHECKF(d->code.funcc_state == funcc_state, "%s: BC_FUNCC stores vmstate %d, want %d", path,
	      d->code.funcc_state, funcc_state);
	CHECKF(d->code.gc64 == gc64, "%s: code shape gc64 %d", path, d->code.gc64);
	/* The Debian builds match their tables exactly: no warnings. */
	CHECKF(d->nwarnings == 0 && d->mismatches == 0, "%s: %u warnings (first: %s)", path,
	      d->nwarnings, d->nwarnings ? d->warnings[0] : "");
	CHECKF(d->nnotes > 5 && strstr(d->notes[0], "VM range"), "%s: notes", path);
	CHECKF(d->build_id_len == 20, "%s: build id length %d", path, d->build_id_len);
}

struct fde_list {
	uint64_t lo[65536], hi[65536];
	size_t n;
};

/* foreach callback collecting FDE ranges. */
static int collect_fde(const struct ehf_fde *fde, const struct ehf_cie *cie, void *arg)
{
	struct fde_list *l = arg;

	(void)cie;
	if (l->n < 65536) {
		l->lo[l->n] = fde->pc_lo;
		l->hi[l->n] = fde->pc_hi;
	}
	l->n++;
	return 0;
}

/* Our .eh_frame walk must list the same FDEs as binutils' readelf. */
static void check_ehframe_vs_readelf(const char *path, uint64_t vm_lo, uint64_t vm_main_hi)
{
	static struct fde_list ours;
	char cmd[PATH_MAX + 64], line[512];
	struct elf_section sec;
	struct elf_file *ef;
	struct ehframe eh;
	struct ehf_lj_vm vm;
	const uint8_t *data;
	size_t size, n = 0, bad = 0;
	int saw_vm = 0, pending_vm = 0, in_eh = 0;
	FILE *p;

	if (access("/usr/bin/readelf", X_OK) != 0) {
		if (!need("/usr/bin/readelf", "binutils"))
			return;
	}
	CHECKF(elf_file__open(path, &ef) == 0, "%s: open", path);
	if (!ef)
		return;
	CHECKF(elf_file__section_data(ef, ".eh_frame", &sec, &data, &size) == 0, "%s: .eh_frame", path);
	ehframe__init(&eh, data, size, sec.addr);
	ours.n = 0;
	CHECKF(ehframe__foreach_fde(&eh, collect_fde, &ours) == 0, "%s: FDE walk failed", path);
	CHECKF(ehframe__find_lj_vm(&eh, &vm) == 0 && vm.lo == vm_lo && vm.main_hi == vm_main_hi &&
	      vm.cfa_offset == 80 && vm.ncandidates == 1, "%s: VM FDE %#lx-%#lx", path,
	      (unsigned long)vm.lo, (unsigned long)vm.main_hi);
	snprintf(cmd, sizeof(cmd), "readelf -wf '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	CHECKF(p != NULL, "popen readelf");
	while (p && fgets(line, sizeof(line), p)) {
		unsigned long lo, hi;
		char *pc = strstr(line, " pc=");

		if (strstr(line, "Contents of the ")) {
			in_eh = strstr(line, "Contents of the .eh_frame section") != NULL;
			continue;
		}
		if (!in_eh)
			continue;	/* .debug_frame (tarantool has one) */
		if (pending_vm) {
			/* The VM FDE's program starts with def_cfa_offset 80. */
			if (strstr(line, "DW_CFA_def_cfa_offset: 80"))
				saw_vm = 1;
			pending_vm = 0;
		}
		if (!strstr(line, " FDE cie=") || !pc || sscanf(pc, " pc=%lx..%lx", &lo, &hi) != 2)
			continue;
		if (n >= ours.n || ours.lo[n] != lo || ours.hi[n] != hi)
			bad++;
		if (lo == vm_lo && hi == vm_main_hi)
			pending_vm = 1;
		n++;
	}
	if (p)
		pclose(p);
	CHECKF(n == ours.n && n > 10, "%s: readelf lists %zu FDEs, we list %zu", path, n, ours.n);
	CHECKF(bad == 0, "%s: %zu FDE ranges differ from readelf", path, bad);
	CHECKF(saw_vm, "%s: readelf shows no def_cfa_offset 80 FDE at %#lx-%#lx", path,
	      (unsigned long)vm_lo, (unsigned long)vm_main_hi);
	elf_file__delete(ef);
}

/* Tarantool keeps its symbols: they and the FDE must give the same VM. */
static void check_tarantool_symbols(const struct lj_detect *d)
{
	struct elf_symbol begin, ffi, s;
	struct elf_file *ef;

	CHECKF(elf_file__open("/usr/bin/tarantool", &ef) == 0, "open tarantool");
	if (!ef)
		return;
	CHECKF(elf_file__has_symtab(ef), "tarantool has .symtab");
	CHECKF(elf_file__sym_lookup(ef, "lj_vm_asm_begin", &begin) == 0 && begin.value == d->vm_lo,
	      "lj_vm_asm_begin %#lx", (unsigned long)begin.value);
	CHECKF(elf_file__sym_lookup(ef, "lj_vm_ffi_call", &ffi) == 0 && ffi.value == d->vm_ffi &&
	      ffi.value + ffi.size == d->vm_hi, "lj_vm_ffi_call %#lx+%lu", (unsigned long)ffi.value,
	      (unsigned long)ffi.size);
	CHECKF(elf_file__sym_lookup(ef, "lj_BC_JLOOP", &s) == 0, "lj_BC_JLOOP");
	CHECKF(d->code.jloop_at == s.value, "JLOOP pattern at %#lx, symbol at %#lx",
	      (unsigned long)d->code.jloop_at, (unsigned long)s.value);
	CHECKF(elf_file__sym_lookup(ef, "lj_BC_FUNCC", &s) == 0 && d->code.funcc_at > s.value &&
	      d->code.funcc_at < s.value + s.size, "FUNCC store %#lx inside lj_BC_FUNCC",
	      (unsigned long)d->code.funcc_at);
	CHECKF(elf_file__sym_at(ef, s.value + 3, &begin) == 0 && !strcmp(begin.name, "lj_BC_FUNCC"),
	      "sym_at(lj_BC_FUNCC+3)");
	CHECKF(elf_file__sym_lookup(ef, "lua_gettop", &s) == 0 && s.dynamic && s.type == STT_FUNC,
	      "lua_gettop exported");
	CHECKF(elf_file__sym_lookup(ef, "no_such_symbol_hopefully", &s) == -ENOENT, "missing symbol");
	elf_file__delete(ef);
	check_ehframe_vs_readelf("/usr/bin/tarantool", d->vm_lo, d->vm_ffi);
}

/* Truncated, garbage and bit-flipped copies never crash detection. */
static void check_corrupt(const char *src, const struct lj_detect *good)
{
	static const long cuts[] = { 0, 10, 63, 64, 1000, 4096 };
	static struct lj_detect d;
	char path[PATH_MAX + 32];
	struct stat st;
	unsigned seed = 12345;
	size_t i;
	int err, k;

	if (stat(src, &st) != 0)
		return;
	snprintf(path, sizeof(path), "%s/trunc", tmpdir);
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		CHECKF(copy_file(src, path, cuts[i]) == 0, "copy");
		err = lj_detect__elf(path, &d);
		CHECKF(err == -ENOEXEC && !d.is_luajit, "%ld-byte copy: err %d luajit %d", cuts[i], err,
		      d.is_luajit);
	}
	for (k = 1; k < 8; k++) {
		long cut = (long)st.st_size * k / 8;

		CHECKF(copy_file(src, path, cut) == 0, "copy");
		err = lj_detect__elf(path, &d);
		/* Cut before the section headers: no symbols, no .eh_frame, no LuaJIT. */
		CHECKF(err < 0 || !d.is_luajit, "cut at %ld: err %d luajit %d", cut, err, d.is_luajit);
	}
	/* Garbage with an ELF magic. */
	{
		FILE *f = fopen(path, "wb");
		unsigned char buf[8192];

		for (i = 0; i < sizeof(buf); i++)
			buf[i] = (unsigned char)(rand_r(&seed) >> 7);
		memcpy(buf, "\177ELF\2\1\1", 7);
		CHECKF(f && fwrite(buf, 1, sizeof(buf), f) == sizeof(buf), "write");
		if (f)
			fclose(f);
		err = lj_detect__elf(path, &d);
		CHECKF(err < 0 || !d.is_luajit, "garbage ELF: err %d", err);
	}
	/* Flip bytes inside .eh_frame and the VM code: must stay bounded. */
	for (k = 0; k < 60; k++) {
		struct elf_file *ef;
		struct elf_section sec;
		uint64_t off;
		int fd, j;

		CHECKF(copy_file(src, path, -1) == 0, "copy");
		if (elf_file__open(path, &ef) != 0)
			break;
		CHECKF(elf_file__section(ef, ".eh_frame", &sec) == 0, ".eh_frame");
		elf_file__delete(ef);
		fd = open(path, O_WRONLY);
		for (j = 0; fd >= 0 && j < 8; j++) {
			unsigned char b = (unsigned char)rand_r(&seed);

			off = (k & 1) ? sec.offset + (uint64_t)rand_r(&seed) % sec.size
				      : good->vm_lo_off + (uint64_t)rand_r(&seed) % (good->vm_hi - good->vm_lo);
			CHECKF(pwrite(fd, &b, 1, (off_t)off) == 1, "pwrite");
		}
		if (fd >= 0)
			close(fd);
		err = lj_detect__elf(path, &d);
		CHECKF(err == 0, "bit flips #%d: err %d", k, err);
	}
	unlink(path);
}

/* Write the Lua script used by the interpreter-based live checks. */
static void write_script(const char *path)
{
	FILE *f = fopen(path, "w");

	CHECKF(f != NULL, "create %s", path);
	if (!f)
		return;
	fputs("local co = coroutine.create(function() end)\n"
	      "assert(loadstring([[\n"
	      "local s = 0\n"
	      "for i = 1, 100000 do s = s + i end\n"
	      "return s]], '=ljsnaptest'))()\n"
	      "io.write('L ', (tostring(co):match('0x%x+')), '\\nready\\n')\n"
	      "io.flush()\n"
	      "io.read('*a')\n"
	      "return co\n", f);
	fclose(f);
}

/* -- Suites -------------------------------------------------------------- */

/* Debian luajit, libluajit and tarantool. */
static void suite_debian(struct lj_detect_cache *cache)
{
	static struct lj_detect d, d2;
	char script[PATH_MAX + 16], ren[PATH_MAX + 32], host[PATH_MAX + 16];
	char *argv[4];
	int err;

	snprintf(script, sizeof(script), "%s/t.lua", tmpdir);
	write_script(script);
	if (need("/usr/bin/luajit", "luajit")) {
		expect_luajit("/usr/bin/luajit", LJ_FAMILY_UPSTREAM, 1, -3968, 96, LJ_DETECT_VM_FDE, &d);
		check_ehframe_vs_readelf("/usr/bin/luajit", d.vm_lo, d.vm_ffi);
		/* A renamed copy is the same LuaJIT. */
		snprintf(ren, sizeof(ren), "%s/definitely-not-lua", tmpdir);
		CHECKF(copy_file("/usr/bin/luajit", ren, -1) == 0, "copy");
		err = lj_detect__elf(ren, &d2);
		CHECKF(err == 0 && d2.is_luajit && d2.family == d.family && d2.gc64 == d.gc64 &&
		      d2.vm_lo == d.vm_lo && d2.vm_hi == d.vm_hi &&
		      !memcmp(&d2.layout, &d.layout, sizeof(d.layout)), "renamed copy: err %d", err);
		unlink(ren);
		check_corrupt("/usr/bin/luajit", &d);
		argv[0] = (char *)"/usr/bin/luajit";
		argv[1] = script;
		argv[2] = NULL;
		check_live("luajit", argv, NULL, "/usr/bin/luajit", LJ_FAMILY_UPSTREAM, 1, 1, cache);
	}
	if (need(LJSO, "libluajit-5.1-2")) {
		expect_luajit(LJSO, LJ_FAMILY_UPSTREAM, 1, -3968, 96, LJ_DETECT_VM_FDE, &d);
		check_ehframe_vs_readelf(LJSO, d.vm_lo, d.vm_ffi);
		/* §6.1: the Debian .so's VM FDE covers 0x8d70-0xcdb5. */
		CHECKF(d.vm_lo == 0x8d70 && d.vm_ffi == 0xcdb5, "libluajit VM %#lx-%#lx",
		      (unsigned long)d.vm_lo, (unsigned long)d.vm_ffi);
		snprintf(host, sizeof(host), "%s/ljhost", selfdir);
		if (need(host, "libluajit-5.1-dev (to build tests/unit/ljhost)")) {
			argv[0] = host;
			argv[1] = NULL;
			check_live("ljhost", argv, NULL, LJSO, LJ_FAMILY_UPSTREAM, 1, 1, cache);
		}
	}
	if (need("/usr/bin/tarantool", "tarantool")) {
		expect_luajit("/usr/bin/tarantool", LJ_FAMILY_TARANTOOL_26, 0, -3144, 64,
			      LJ_DETECT_VM_SYMS, &d);
		CHECKF((d.markers & LJ_DETECT_M_TARANTOOL) && !(d.markers & LJ_DETECT_M_OPENRESTY),
		      "tarantool markers %#x", d.markers);
		check_tarantool_symbols(&d);
		argv[0] = (char *)"/usr/bin/tarantool";
		argv[1] = script;
		argv[2] = NULL;
		check_live("tarantool", argv, NULL, "/usr/bin/tarantool", LJ_FAMILY_TARANTOOL_26, 0, 1,
			   cache);
	}
	if (need("/bin/ls", "coreutils")) {
		err = lj_detect__elf("/bin/ls", &d);
		CHECKF(err == 0 && !d.is_luajit && !d.layout_ok && d.build_id_len == 20,
		      "/bin/ls: err %d luajit %d", err, d.is_luajit);
	}
	err = lj_detect__elf("/nonexistent/ljsnap-test", &d);
	CHECKF(err == -ENOENT, "missing file: %d", err);
	err = lj_detect__elf("/proc/self", &d);
	CHECKF(err == -ENOEXEC || err == -EISDIR, "directory: %d", err);
	err = lj_detect__process(999999999, cache, &(struct lj_proc_detect){ 0 });
	CHECKF(err == -ENOENT, "no such pid: %d", err);
	unlink(script);
}

/* OpenResty luajit2 unpacked into $LJSNAP_LUAJIT2_DIR. */
static void suite_openresty(struct lj_detect_cache *cache)
{
	static struct lj_detect d;
	const char *dir = getenv("LJSNAP_LUAJIT2_DIR");
	char bin[PATH_MAX], so[PATH_MAX + 32], libdir[PATH_MAX], env[PATH_MAX + 32];
	char script[PATH_MAX + 16], host[PATH_MAX + 16];
	char *argv[3];

	if (!dir || !*dir) {
		fprintf(stderr, "SKIP: set LJSNAP_LUAJIT2_DIR to a directory where the Debian packages "
			"luajit2 and libluajit2-5.1-2 are unpacked (apt-get download ...; dpkg -x)\n");
		skipped = 1;
		return;
	}
	snprintf(bin, sizeof(bin), "%s/usr/bin/luajit", dir);
	snprintf(libdir, sizeof(libdir), "%s/usr/lib/x86_64-linux-gnu", dir);
	snprintf(so, sizeof(so), "%s/libluajit-5.1.so.2.1.0", libdir);
	if (access(bin, R_OK) || access(so, R_OK)) {
		fprintf(stderr, "SKIP: %s or %s missing: unpack luajit2 and libluajit2-5.1-2 there\n",
			bin, so);
		skipped = 1;
		return;
	}
	expect_luajit(bin, LJ_FAMILY_OPENRESTY, 1, -4008, 112, LJ_DETECT_VM_FDE, &d);
	CHECKF(d.markers & LJ_DETECT_M_OPENRESTY, "lua_getexdata marker");
	check_ehframe_vs_readelf(bin, d.vm_lo, d.vm_ffi);
	expect_luajit(so, LJ_FAMILY_OPENRESTY, 1, -4008, 112, LJ_DETECT_VM_FDE, &d);
	/* §6.1: luajit2's .so VM FDE 0x9e40-0xde92, ffi_call FDE to 0xdf32. */
	CHECKF(d.vm_lo == 0x9e40 && d.vm_ffi == 0xde92 && d.vm_hi == 0xdf32, "luajit2 .so VM range");
	check_ehframe_vs_readelf(so, d.vm_lo, d.vm_ffi);

	snprintf(script, sizeof(script), "%s/t.lua", tmpdir);
	write_script(script);
	argv[0] = bin;
	argv[1] = script;
	argv[2] = NULL;
	check_live("openresty luajit", argv, NULL, bin, LJ_FAMILY_OPENRESTY, 1, 1, cache);
	snprintf(host, sizeof(host), "%s/ljhost", selfdir);
	if (access(host, X_OK) == 0) {
		snprintf(env, sizeof(env), "LD_LIBRARY_PATH=%s", libdir);
		argv[0] = host;
		argv[1] = NULL;
		check_live("ljhost+luajit2", argv, env, so, LJ_FAMILY_OPENRESTY, 1, 1, cache);
	}
	unlink(script);
}

/* Any LuaJIT interpreter binary built with default options (e.g. a fresh
 * upstream or tarantool/luajit build): --binary PATH FAMILY-NAME GC64. */
static void suite_binary(const char *path, const char *famname, int gc64, int exact,
			 struct lj_detect_cache *cache)
{
	static struct lj_detect d;
	char script[PATH_MAX + 16];
	char *argv[3];
	int f;

	for (f = LJ_FAMILY_UPSTREAM; f < LJ_FAMILY__MAX; f++)
		if (!strcmp(lj_layout__family_name((enum lj_family)f), famname))
			break;
	CHECKF(f < LJ_FAMILY__MAX, "unknown family %s", famname);
	if (f == LJ_FAMILY__MAX)
		return;
	if (exact) {
		expect_luajit(path, (enum lj_family)f, gc64,
			      lj_layout__builtin((enum lj_family)f, gc64)->disp2g,
			      lj_layout__builtin((enum lj_family)f, gc64)->gg_ofs_g, -1, &d);
	} else {
		CHECKF(lj_detect__elf(path, &d) == 0 && d.is_luajit && d.layout_ok && d.gc64 == gc64 &&
		      d.mismatches > 0, "%s: not detected, or not flagged as unknown", path);
		dump(path, &d);
	}
	snprintf(script, sizeof(script), "%s/t.lua", tmpdir);
	write_script(script);
	argv[0] = (char *)path;
	argv[1] = script;
	argv[2] = NULL;
	check_live(path, argv, NULL, path, (enum lj_family)f, gc64, exact, cache);
	unlink(script);
}

/* Run the Debian suite, the OpenResty one (--openresty), or one binary. */
int main(int argc, char **argv)
{
	struct lj_detect_cache *cache = lj_detect_cache__new();
	const char *c = getenv("CI");
	char *slash;

	ci = c && !strcmp(c, "true");
	if (!realpath(argv[0], selfdir))
		snprintf(selfdir, sizeof(selfdir), "%s", argv[0]);
	slash = strrchr(selfdir, '/');
	if (slash)
		*slash = 0;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ljsnap-test-ljdetect-XXXXXX");
	if (!mkdtemp(tmpdir) || !cache) {
		perror("mkdtemp");
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "--openresty"))
		suite_openresty(cache);
	else if ((argc == 5 || argc == 6) && !strcmp(argv[1], "--binary"))
		suite_binary(argv[2], argv[3], atoi(argv[4]), argc == 5, cache);
	else
		suite_debian(cache);
	lj_detect_cache__delete(cache);
	rmdir(tmpdir);
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("test_ljdetect%s%s: all checks passed%s\n", argc > 1 ? " " : "", argc > 1 ? argv[1] : "",
	       skipped ? " (some parts skipped)" : "");
	return skipped ? 77 : 0;
}
