/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_native_sym.c -- symbolization details (symtab/symbolize.c,
 * objfile.c, buildid.c) against ground truth from outside the code:
 *   - demangling: names from the Itanium C++ ABI examples, and a mangled
 *     .dynsym symbol of libstdc++ looked up by address;
 *   - libc's own getpid: the symbol found at &getpid starts exactly there;
 *   - libc's separate debug file (libc6-dbg): found by build id exactly
 *     when /usr/lib/debug/.build-id/xx/yyyy.debug exists, and its CRC32
 *     equals the one glibc's packaging stored in .gnu_debuglink;
 *   - the same lookups when the binary is gone (recorded path missing):
 *     reported missing, still named from the debug file if there is one,
 *     else "libc.so.6+0xfileoffset" with the right offset;
 *   - a copy of the machine's files under a sysroot, and a debuglink found
 *     in <dir>/.debug/ when the build-id directory has nothing;
 *   - the vDSO as an in-memory image (objcache__add_image): the address
 *     dlsym() gives for __vdso_clock_gettime in linux-vdso.so.1 is named
 *     by one of the names the vDSO gives it, only for a mapping that
 *     carries the image's build id.
 * Parts that need libc6-dbg or libstdc++ say so and are skipped when those
 * are absent (CI installs both).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symtab/buildid.h"
#include "symtab/elf.h"
#include "symtab/objfile.h"
#include "symtab/symbolize.h"
#include "tests/unit/check.h"

int failures, checks;

/* One mapping line of ours, with the file's build id. */
struct map1 {
	struct procmap_desc m;
	char path[512];
	uint8_t id[BUILDID_MAX];
};

/* The mappings of the file that holds addr (all of them, as recorded). */
static size_t maps_of(uint64_t addr, struct map1 *out, size_t cap)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024], want[512] = "";
	size_t n = 0, pass;

	for (pass = 0; f && pass < 2; pass++, rewind(f)) {
		while (fgets(line, sizeof(line), f)) {
			unsigned long long lo, hi, off;
			char prot[8], path[512] = "";

			if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %511[^\n]", &lo, &hi, prot, &off,
				   path) < 5)
				continue;
			if (pass == 0 && lo <= addr && addr < hi)
				snprintf(want, sizeof(want), "%s", path);
			if (pass == 1 && want[0] && strcmp(path, want) == 0 && n < cap) {
				struct map1 *e = &out[n++];
				struct elf_file *ef;
				int len;

				memset(e, 0, sizeof(*e));
				e->m.start = lo;
				e->m.end = hi;
				e->m.offset = off;
				e->m.prot = (prot[0] == 'r' ? PROCMAP_PROT_READ : 0) |
					    (prot[1] == 'w' ? PROCMAP_PROT_WRITE : 0) |
					    (prot[2] == 'x' ? PROCMAP_PROT_EXEC : 0);
				snprintf(e->path, sizeof(e->path), "%s", path);
				if (elf_file__open(path, &ef) == 0) {
					len = elf_file__build_id(ef, e->id, sizeof(e->id));
					if (len > 0)
						e->m.build_id_len = (uint32_t)len;
					elf_file__delete(ef);
				}
			}
		}
	}
	if (f)
		fclose(f);
	for (size_t i = 0; i < n; i++) {	/* pointers only after the copy is final */
		out[i].m.path = out[i].path;
		out[i].m.build_id = out[i].m.build_id_len ? out[i].id : NULL;
	}
	return n;
}

/* Demangling against the C++ ABI's own examples. */
static void check_demangle(void)
{
	static const char *const cases[][2] = {
		{ "_ZN3foo3barEi", "foo::bar(int)" },
		{ "_Z1fv", "f()" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = symbolizer__demangle(cases[i][0]);

		CHECKF(d && strcmp(d, cases[i][1]) == 0, "%s -> %s", cases[i][0], d ? d : "NULL");
		free(d);
	}
	CHECKF(symbolizer__demangle("main") == NULL, "plain C names are not mangled");
}

/* A mangled .dynsym symbol of libstdc++, by address. */
static void check_cxx(struct objcache *oc, struct symbolizer *sym)
{
	static const char lib[] = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
	struct elf_symbol es;
	const struct sym_info *si = NULL;
	struct objfile *obj;

	if (access(lib, R_OK) != 0) {
		fprintf(stderr, "note: %s missing, C++ lookup skipped\n", lib);
		return;
	}
	obj = objcache__get(oc, lib, NULL, 0);
	CHECKF(obj && obj->status == OBJFILE_OK && obj->ef, "libstdc++ opened");
	if (!obj || !obj->ef || elf_file__sym_lookup(obj->ef, "_ZNSt9exceptionD1Ev", &es) != 0) {
		CHECKF(0, "no _ZNSt9exceptionD1Ev in libstdc++");
		return;
	}
	CHECKF(symbolizer__obj(sym, obj, es.value + 2, &si) == 0 && si->status == SYM_OK &&
	      si->name && strcmp(si->name, "std::exception::~exception()") == 0 && si->offset == 2,
	      "libstdc++ symbol: %s", si && si->name ? si->name : "-");
}

/* libc: getpid by address, the debug file, the CRC, the missing binary. */
static void check_libc(struct objcache *oc, struct symbolizer *sym)
{
	struct map1 maps[16];
	size_t n = maps_of((uint64_t)(uintptr_t)&getpid, maps, 16), i;
	uint64_t pc = (uint64_t)(uintptr_t)&getpid;
	const struct sym_info *si = NULL;
	struct procmap *pm = NULL;
	char want[BUILDID_PATH_MAX], link[256];
	struct stat stt;
	uint32_t crc = 0, fcrc = 1;
	int has_debug;

	CHECKF(n >= 2 && maps[0].m.build_id_len == 20, "libc's mappings: %zu", n);
	if (n < 2)
		return;
	{
		struct procmap_desc v[16];

		for (i = 0; i < n; i++)
			v[i] = maps[i].m;
		if (procmap__new(oc, v, n, &pm) != 0) {
			CHECKF(0, "procmap");
			return;
		}
	}
	CHECKF(symbolizer__pc(sym, pm, pc, 0, &si) == 0 && si->status == SYM_OK && si->offset == 0 &&
	      si->raw_name && strstr(si->raw_name, "getpid") &&
	      si->sym_addr + procmap__find(pm, pc)->bias == pc, "getpid: %s+%#llx",
	      si && si->raw_name ? si->raw_name : "-", si ? (unsigned long long)si->offset : 0ull);
	/* The debug file, by build id, exactly when it is installed. */
	buildid__path("/usr/lib/debug", maps[0].id, 20, ".debug", want, sizeof(want));
	has_debug = stat(want, &stt) == 0;
	CHECKF(si && si->obj && (!!si->obj->debug == has_debug) &&
	      (!has_debug || (strcmp(si->obj->debug, want) == 0 &&
			      si->obj->debug_how == BUILDID_BY_ID)),
	      "debug file %s (installed: %d)", si && si->obj && si->obj->debug ? si->obj->debug : "-",
	      has_debug);
	if (!has_debug)
		fprintf(stderr, "note: libc6-dbg not installed: debug-file checks skipped\n");
	if (has_debug && si && si->obj) {
		CHECKF(buildid__debuglink(si->obj->ef, link, sizeof(link), &crc) == 0, "debuglink");
		CHECKF(buildid__file_crc(want, &fcrc) == 0 && fcrc == crc,
		      "CRC of %s: %#x, .gnu_debuglink says %#x", want, fcrc, crc);
	}
	procmap__delete(pm);
	pm = NULL;

	/* The binary is gone: reported, named from the debug file if any. */
	{
		struct procmap_desc v[16];
		const struct procmap_ent *e;

		for (i = 0; i < n; i++) {
			v[i] = maps[i].m;
			v[i].path = "/nonexistent/lib/libc.so.6";
		}
		if (procmap__new(oc, v, n, &pm) != 0) {
			CHECKF(0, "procmap (missing binary)");
			return;
		}
		e = procmap__find(pm, pc + 5);
		CHECKF(e && e->obj && e->obj->status == OBJFILE_MISSING && !e->has_bias,
		      "missing binary: %s",
		      e && e->obj ? objfile_status__name(e->obj->status) : "-");
		CHECKF(symbolizer__pc(sym, pm, pc + 5, 0, &si) == 0, "lookup");
		if (has_debug)
			CHECKF(si->status == SYM_OK && si->bias_guessed && si->from_debug &&
			      si->raw_name && strstr(si->raw_name, "getpid") && si->offset == 5,
			      "missing binary, debug file: %s+%#llx", si->raw_name ? si->raw_name : "-",
			      (unsigned long long)si->offset);
		else
			CHECKF(si->status == SYM_NO_OBJECT && !si->name && e &&
			      si->file_off == pc + 5 - e->start + e->offset &&
			      strcmp(si->module, "libc.so.6") == 0, "missing binary: %s+%#llx",
			      si->module, (unsigned long long)si->file_off);
		procmap__delete(pm);
	}
}

/* The vDSO, from our own memory, named through an in-memory image. */
static void check_vdso(void)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	struct symbolizer *sym = symbolizer__new(NULL);
	void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *f = h ? dlsym(h, "__vdso_clock_gettime") : NULL;
	struct objcache *oc = objcache__new(NULL);
	struct map1 maps[4];
	struct procmap *pm = NULL;
	const struct sym_info *si = NULL;
	struct elf_file *ef = NULL;
	uint8_t id[BUILDID_MAX];
	int idlen = 0;
	size_t n;

	if (!base) {
		fprintf(stderr, "note: no vDSO in this process (valgrind?): vDSO checks skipped\n");
		goto out;
	}
	n = maps_of(base, maps, 4);
	CHECKF(sym && f && n == 1 && strcmp(maps[0].path, "[vdso]") == 0 && oc, "vDSO at %#llx: %zu maps",
	      (unsigned long long)base, n);
	if (!sym || !f || n != 1 || !oc)
		goto out;
	if (elf_file__open_mem((const void *)(uintptr_t)base, maps[0].m.end - maps[0].m.start,
			       "[vdso]", &ef) == 0)
		idlen = elf_file__build_id(ef, id, sizeof(id));
	elf_file__delete(ef);
	CHECKF(idlen > 0, "the vDSO has no build id");
	CHECKF(objcache__add_image(oc, "[vdso]", id, (size_t)idlen, (const uint8_t *)(uintptr_t)base,
				  maps[0].m.end - maps[0].m.start) == 0, "add image");
	/* A mapping without the build id is not given the image. */
	CHECKF(procmap__new(oc, &maps[0].m, 1, &pm) == 0 && !procmap__find(pm, base)->obj,
	      "a [vdso] mapping without build id got an object");
	procmap__delete(pm);
	pm = NULL;
	maps[0].m.build_id = id;
	maps[0].m.build_id_len = (uint32_t)idlen;
	if (procmap__new(oc, &maps[0].m, 1, &pm) != 0) {
		CHECKF(0, "procmap of the vDSO");
		goto out;
	}
	CHECKF(symbolizer__pc(sym, pm, (uint64_t)(uintptr_t)f + 1, 0, &si) == 0 && si->status == SYM_OK &&
	      si->raw_name && (strcmp(si->raw_name, "__vdso_clock_gettime") == 0 ||
			       (strcmp(si->raw_name, "clock_gettime") == 0 &&
				dlsym(h, "clock_gettime") == f)) && si->offset == 1,
	      "vDSO clock_gettime+1: %s+%#llx", si && si->raw_name ? si->raw_name : "-",
	      si ? (unsigned long long)si->offset : 0ull);
out:
	procmap__delete(pm);
	symbolizer__delete(sym);
	objcache__delete(oc);
}

/* Copy a file.  0 or -1. */
static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;
	int err = in && out ? 0 : -1;

	while (!err && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			err = -1;
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		err = -1;
	return err;
}

/* A sysroot holding libc, its debug file only behind a debuglink in .debug/. */
static void check_sysroot(void)
{
	struct map1 maps[16];
	size_t n = maps_of((uint64_t)(uintptr_t)&getpid, maps, 16);
	char root[] = "/tmp/ljsnap-sysroot-XXXXXX", dir[600], p[1024], dbg[BUILDID_PATH_MAX],
	     link[256];
	struct buildid_opts o = { 0 };
	struct objcache *oc;
	struct objfile *obj;
	struct elf_file *ef = NULL;
	uint32_t crc;
	char *slash;

	if (n < 1 || buildid__path("/usr/lib/debug", maps[0].id, 20, ".debug", dbg, sizeof(dbg)) ||
	    access(dbg, R_OK) != 0 || !mkdtemp(root))
		return;
	snprintf(dir, sizeof(dir), "%s%s", root, maps[0].path);
	slash = strrchr(dir, '/');
	*slash = 0;
	snprintf(p, sizeof(p), "mkdir -p '%s/.debug'", dir);
	if (system(p) != 0)
		goto out;
	snprintf(p, sizeof(p), "%s%s", root, maps[0].path);
	if (copy_file(maps[0].path, p) != 0 || elf_file__open(p, &ef) != 0 ||
	    buildid__debuglink(ef, link, sizeof(link), &crc) != 0)
		goto out;
	snprintf(p, sizeof(p), "%s/.debug/%s", dir, link);
	if (copy_file(dbg, p) != 0)
		goto out;
	o.sysroot = root;
	o.debug_dirs = "/nonexistent-debug";
	oc = objcache__new(&o);
	obj = oc ? objcache__get(oc, maps[0].path, maps[0].id, 20) : NULL;
	CHECKF(obj && obj->status == OBJFILE_OK && obj->found &&
	      strncmp(obj->found, root, strlen(root)) == 0, "sysroot: found %s",
	      obj && obj->found ? obj->found : "-");
	CHECKF(obj && obj->debug && strcmp(obj->debug, p) == 0 && obj->debug_how == BUILDID_BY_LINK,
	      "debuglink in .debug/: %s", obj && obj->debug ? obj->debug : "-");
	objcache__delete(oc);
out:
	elf_file__delete(ef);
	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	if (system(p) != 0)
		fprintf(stderr, "note: could not remove %s\n", root);
}

/* Run every check. */
int main(void)
{
	struct objcache *oc = objcache__new(NULL);
	struct symbolizer *sym = symbolizer__new(NULL);

	if (!oc || !sym)
		return 1;
	check_demangle();
	check_cxx(oc, sym);
	check_libc(oc, sym);
	check_sysroot();
	check_vdso();
	symbolizer__delete(sym);
	objcache__delete(oc);
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	printf("ok: symbolization\n");
	return 0;
}
