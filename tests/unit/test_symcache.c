/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The shared symbol tables against libdw itself, on real files of this
 * machine: for every symbol's edges and a pc every few bytes of each
 * module, the cached lookup names exactly what dwfl_module_addrinfo names;
 * one table serves two Dwfls (or two unwinders) mapping the same file, a
 * copy of the file (same build-id, another inode) gets its own, and the
 * byte bound evicts or refuses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc/native_unwind.h"
#include "proc/symcache.h"

#define LIBZ "/usr/lib/x86_64-linux-gnu/libz.so.1"
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define PYTHON "/usr/bin/python3.11"

static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks callbacks = { .find_debuginfo = no_debuginfo };

struct loaded {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct symcache_file file;
	Dwarf_Addr start, end;
};

/* path as a module at base, the way the unwinder reports a mapped file. */
static void load(struct loaded *l, const char *path, Dwarf_Addr base)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	symcache__file_of(&st, &l->file);
	l->dwfl = dwfl_begin(&callbacks);
	assert_non_null(l->dwfl);
	l->mod = dwfl_report_elf(l->dwfl, path, path, -1, base, true);
	assert_non_null(l->mod);
	assert_int_equal(dwfl_report_end(l->dwfl, NULL, NULL), 0);
	dwfl_module_info(l->mod, NULL, &l->start, &l->end, NULL, NULL, NULL, NULL);
}

/* 1 if libdw names pc, into name. */
static int libdw_name(Dwfl_Module *mod, uint64_t pc, char *name, size_t len)
{
	GElf_Off off = 0;
	const char *s;
	GElf_Sym sym;

	s = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
	if (!s || !*s)
		return 0;
	snprintf(name, len, "%s", s);
	return 1;
}

static int checked, named, differ;

static void compare_at(struct symcache *c, struct loaded *l, uint64_t pc)
{
	char want[512] = "", got[512] = "";
	int w, g;

	if (pc < l->start || pc >= l->end)
		return;
	w = libdw_name(l->mod, pc, want, sizeof(want));
	g = symcache__name(c, l->mod, &l->file, pc, got, sizeof(got));
	checked++;
	named += w;
	if (w != g || strcmp(want, got)) {
		if (differ++ < 10)
			print_message("%s @%#lx: libdw %s, cache %s\n",
				      dwfl_module_info(l->mod, NULL, NULL, NULL, NULL, NULL, NULL,
						       NULL),
				      (unsigned long)(pc - l->start), w ? want : "-",
				      g ? got : "-");
	}
}

/* pcs of a module's grid compared at most (beyond its symbols' edges) */
#define COMPARE_GRID 100000

/* Every symbol's edges, and a pc every stride bytes of the module. */
static void compare_file(const char *path, uint64_t stride)
{
	struct symcache *c = symcache__new(SYMCACHE_DEFAULT_BYTES);
	struct loaded l;
	int n, i;
	uint64_t pc;

	assert_non_null(c);
	load(&l, path, 0x7f0000000000ull);
	checked = named = differ = 0;
	n = dwfl_module_getsymtab(l.mod);
	for (i = 1; i < n; i++) {
		GElf_Addr v = 0;
		GElf_Sym s;

		if (!dwfl_module_getsym_info(l.mod, i, &s, &v, NULL, NULL, NULL))
			continue;
		compare_at(c, &l, v - 1);
		compare_at(c, &l, v);
		compare_at(c, &l, v + 1);
		compare_at(c, &l, v + s.st_size / 2);
		compare_at(c, &l, v + s.st_size - 1);
		compare_at(c, &l, v + s.st_size);
	}
	/*
	 * The grid is a sample, not the whole: at most COMPARE_GRID pcs (an odd
	 * stride, not to fall in step with alignment). The sanitizer build of
	 * this binary is ten times the plain one's size, and libdw's lookups
	 * made it a 5-minute test where every symbol's edges take seconds.
	 */
	if ((l.end - l.start) / stride > COMPARE_GRID)
		stride = ((l.end - l.start) / COMPARE_GRID) | 1;
	for (pc = l.start; pc < l.end; pc += stride)
		compare_at(c, &l, pc);
	print_message("%s: %d symbols, %d pcs, %d named, %d differ\n", path, n, checked, named,
		      differ);
	assert_int_equal(differ, 0);
	assert_true(named > 1000);
	dwfl_end(l.dwfl);
	symcache__free(c);
}

static void test_same_as_libdw_self(void **state)
{
	(void)state;
	/* this binary has a full .symtab: local, global, weak and unsized symbols */
	compare_file("/proc/self/exe", 13);
}

static void test_same_as_libdw_libs(void **state)
{
	(void)state;
	compare_file(LIBZ, 7);
	compare_file(LIBC, 61);
	if (access(PYTHON, R_OK) == 0)
		compare_file(PYTHON, 97);
}

/*
 * This binary stripped, its functions named only in an xz-compressed
 * .gnu_debugdata (as Fedora ships libraries): libdw's auxiliary table.
 */
static void test_same_as_libdw_gnu_debugdata(void **state)
{
	char dir[] = "/tmp/test_symcache_mini.XXXXXX", cmd[1024];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; cp /proc/%d/exe lib; "
		 "nm --defined-only lib | awk '$2 ~ /[tT]/ {print $3}' > keep; "
		 "objcopy -S --remove-section .comment --keep-symbols=keep lib mini; xz mini; "
		 "strip --strip-all lib; objcopy --add-section .gnu_debugdata=mini.xz lib; "
		 "! nm lib 2>/dev/null | grep -q compare_file",
		 dir, (int)getpid());
	if (system(cmd)) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		assert_int_equal(system(cmd), 0);
		skip();
	}
	snprintf(cmd, sizeof(cmd), "%s/lib", dir);
	compare_file(cmd, 13);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void name_in(struct symcache *c, struct loaded *l, uint64_t off, const char *want)
{
	char name[256];

	assert_int_equal(symcache__name(c, l->mod, &l->file, l->start + off, name, sizeof(name)),
			 1);
	assert_string_equal(name, want);
}

/* The offset of the function fn in l's module. */
static uint64_t offset_of(struct loaded *l, const char *fn)
{
	int n = dwfl_module_getsymtab(l->mod), i;

	for (i = 1; i < n; i++) {
		GElf_Addr v = 0;
		GElf_Sym s;
		const char *name = dwfl_module_getsym_info(l->mod, i, &s, &v, NULL, NULL, NULL);

		if (name && !strcmp(name, fn) && s.st_size > 4)
			return v - l->start + 3;
	}
	fail_msg("%s not in the module", fn);
	return 0;
}

/* Two processes' worth of the same file at other bases: one table. */
static void test_shared_between_bases(void **state)
{
	struct symcache *c = symcache__new(SYMCACHE_DEFAULT_BYTES);
	struct symcache_stats s;
	struct loaded a, b;
	uint64_t off;

	(void)state;
	load(&a, LIBZ, 0x7f1000000000ull);
	load(&b, LIBZ, 0x7f2345678000ull);
	off = offset_of(&a, "deflate");
	name_in(c, &a, off, "deflate");
	name_in(c, &b, off, "deflate");
	name_in(c, &b, offset_of(&b, "inflate"), "inflate");
	symcache__stats(c, &s);
	assert_int_equal(s.built, 1);
	assert_int_equal(s.hits, 2);
	assert_int_equal(s.tables, 1);
	assert_true(s.bytes > 0);
	dwfl_end(a.dwfl);
	dwfl_end(b.dwfl);
	symcache__free(c);
}

/* Two unwinders of one process: the run's cache builds this binary's table once. */
static void test_shared_between_unwinders(void **state)
{
	struct native_unwinder *u1, *u2;
	struct symcache_stats before, after;
	char name[256], file[4096];

	(void)state;
	u1 = native_unwinder__new(getpid(), 0, 0);
	u2 = native_unwinder__new(getpid(), 0, 0);
	assert_non_null(u1);
	assert_non_null(u2);
	symcache__stats(symcache__shared(), &before);
	assert_int_equal(native_unwinder__name(u1, (uintptr_t)offset_of + 1, name, sizeof(name),
					       file, sizeof(file)),
			 0);
	assert_string_equal(name, "offset_of");
	assert_int_equal(native_unwinder__name(u2, (uintptr_t)name_in + 1, name, sizeof(name), file,
					       sizeof(file)),
			 0);
	assert_string_equal(name, "name_in");
	symcache__stats(symcache__shared(), &after);
	assert_true(after.built - before.built <= 1);
	assert_true(after.hits - before.hits >= 1);
	assert_int_equal(after.built + after.hits - before.built - before.hits, 2);
	native_unwinder__free(u1);
	native_unwinder__free(u2);
}

/* path copied to a new temporary file (same bytes, same build-id, another inode). */
static void copy_file(const char *path, char *tmp)
{
	char buf[65536];
	int in, out;
	ssize_t n;

	strcpy(tmp, "/tmp/test_symcache.XXXXXX");
	out = mkstemp(tmp);
	in = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(out >= 0 && in >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

/* A file claiming another's build-id is not given (nor gives) its table. */
static void test_same_build_id_other_file(void **state)
{
	struct symcache *c = symcache__new(SYMCACHE_DEFAULT_BYTES);
	const unsigned char *ida, *idb;
	struct symcache_stats s;
	struct loaded a, b;
	struct stat st;
	GElf_Addr va;
	char tmp[64];
	int la, lb;

	(void)state;
	copy_file(LIBZ, tmp);
	load(&a, LIBZ, 0x7f1000000000ull);
	load(&b, tmp, 0x7f1000000000ull);
	la = dwfl_module_build_id(a.mod, &ida, &va);
	lb = dwfl_module_build_id(b.mod, &idb, &va);
	assert_true(la > 0);
	assert_int_equal(la, lb);
	assert_memory_equal(ida, idb, (size_t)la);
	name_in(c, &a, offset_of(&a, "deflate"), "deflate");
	name_in(c, &b, offset_of(&b, "deflate"), "deflate");
	symcache__stats(c, &s);
	assert_int_equal(s.built, 2);
	assert_int_equal(s.hits, 0);
	/* the same inode changed in place (even with its mtime kept): a new ctime, a new table */
	assert_int_equal(chmod(tmp, 0640), 0);
	assert_int_equal(stat(tmp, &st), 0);
	symcache__file_of(&st, &b.file);
	name_in(c, &b, offset_of(&b, "inflate"), "inflate");
	symcache__stats(c, &s);
	assert_int_equal(s.built, 3);
	unlink(tmp);
	dwfl_end(a.dwfl);
	dwfl_end(b.dwfl);
	symcache__free(c);
}

/* Without a build-id, the file's identity alone is the key: still shared. */
static void test_no_build_id(void **state)
{
	struct symcache *c = symcache__new(SYMCACHE_DEFAULT_BYTES);
	const unsigned char *id;
	struct symcache_stats s;
	struct loaded a, b;
	char tmp[64], cmd[256];
	GElf_Addr va;

	(void)state;
	copy_file(LIBZ, tmp);
	snprintf(cmd, sizeof(cmd), "objcopy --remove-section .note.gnu.build-id %s 2>/dev/null",
		 tmp);
	if (system(cmd)) {
		unlink(tmp);
		skip();
	}
	load(&a, tmp, 0x7f1000000000ull);
	load(&b, tmp, 0x7f3000000000ull);
	assert_true(dwfl_module_build_id(a.mod, &id, &va) <= 0);
	name_in(c, &a, offset_of(&a, "deflate"), "deflate");
	name_in(c, &b, offset_of(&b, "deflate"), "deflate");
	symcache__stats(c, &s);
	assert_int_equal(s.built, 1);
	assert_int_equal(s.hits, 1);
	unlink(tmp);
	dwfl_end(a.dwfl);
	dwfl_end(b.dwfl);
	symcache__free(c);
}

/* Room for libz's or libc's table, not both: each evicts the other; a bound below either refuses both. */
static void test_bounds(void **state)
{
	struct symcache *c;
	struct symcache_stats s;
	struct loaded z, libc;
	size_t zbytes, cbytes;

	(void)state;
	load(&z, LIBZ, 0x7f1000000000ull);
	load(&libc, LIBC, 0x7f2000000000ull);
	c = symcache__new(SYMCACHE_DEFAULT_BYTES);
	name_in(c, &z, offset_of(&z, "deflate"), "deflate");
	symcache__stats(c, &s);
	zbytes = s.bytes;
	name_in(c, &libc, offset_of(&libc, "malloc"), "malloc");
	symcache__stats(c, &s);
	cbytes = s.bytes - zbytes;
	symcache__free(c);
	assert_true(zbytes > 1000 && cbytes > zbytes);

	/* either fits, not both */
	c = symcache__new(cbytes + zbytes / 2);
	name_in(c, &z, offset_of(&z, "deflate"), "deflate");
	name_in(c, &libc, offset_of(&libc, "malloc"), "malloc");
	symcache__stats(c, &s);
	assert_int_equal(s.built, 2);
	assert_int_equal(s.evicted, 1);
	assert_int_equal(s.tables, 1);
	assert_int_equal(s.bytes, cbytes);
	/* libz again: built anew, evicting libc */
	name_in(c, &z, offset_of(&z, "inflate"), "inflate");
	symcache__stats(c, &s);
	assert_int_equal(s.built, 3);
	assert_int_equal(s.evicted, 2);
	symcache__free(c);

	/* too small for any: refused once each, and named by libdw all the same */
	c = symcache__new(1024);
	name_in(c, &z, offset_of(&z, "deflate"), "deflate");
	name_in(c, &z, offset_of(&z, "inflate"), "inflate");
	name_in(c, &libc, offset_of(&libc, "malloc"), "malloc");
	symcache__stats(c, &s);
	assert_int_equal(s.built, 0);
	assert_int_equal(s.refused, 2);
	assert_int_equal(s.hits, 1);
	assert_int_equal(s.bytes, 0);
	symcache__free(c);
	dwfl_end(z.dwfl);
	dwfl_end(libc.dwfl);
}

/*
 * A hostile library: NESTED global functions all starting at one place,
 * each one byte shorter than the one before. libdw names the shortest
 * holding the pc; the cache looks at a bounded number of them, names one
 * that holds the pc, and counts the lookup as capped.
 */
#define NESTED 3000

static void test_nested_capped(void **state)
{
	struct symcache *c = symcache__new(SYMCACHE_DEFAULT_BYTES);
	char src[] = "/tmp/test_symcache_nested.XXXXXX.s", lib[64], cmd[256], name[256];
	struct symcache_stats s;
	struct loaded l;
	uint64_t off;
	FILE *f;
	int fd, i;

	(void)state;
	fd = mkstemps(src, 2);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, ".text\n");
	for (i = 0; i < NESTED; i++)
		fprintf(f, ".globl n%d\n.type n%d,@function\n.size n%d,%d\nn%d:\n", i, i, i,
			NESTED + 16 - i, i);
	fprintf(f, ".fill %d,1,0xc3\n", NESTED + 16);
	fclose(f);
	snprintf(lib, sizeof(lib), "%s.so", src);
	snprintf(cmd, sizeof(cmd), "cc -shared -nostdlib -o %s %s 2>/dev/null", lib, src);
	if (system(cmd)) {
		unlink(src);
		skip();
	}
	load(&l, lib, 0x7f4000000000ull);
	off = offset_of(&l, "n0") - 3;
	/* far into the nest: only n0-n49 hold it, n49 the shortest */
	name_in(c, &l, off + 16 + NESTED - 50, "n49");
	assert_int_equal(libdw_name(l.mod, l.start + off + 16 + NESTED - 50, name, sizeof(name)),
			 1);
	assert_string_equal(name, "n49");
	symcache__stats(c, &s);
	assert_int_equal(s.capped, 0);
	/* at the start all 3000 hold it: libdw's is the shortest, n2999; the cache's is capped */
	assert_int_equal(libdw_name(l.mod, l.start + off, name, sizeof(name)), 1);
	assert_string_equal(name, "n2999");
	assert_int_equal(symcache__name(c, l.mod, &l.file, l.start + off, name, sizeof(name)), 1);
	assert_true(name[0] == 'n');
	symcache__stats(c, &s);
	assert_int_equal(s.capped, 1);
	unlink(src);
	unlink(lib);
	dwfl_end(l.dwfl);
	symcache__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_as_libdw_self),
		cmocka_unit_test(test_same_as_libdw_libs),
		cmocka_unit_test(test_same_as_libdw_gnu_debugdata),
		cmocka_unit_test(test_shared_between_bases),
		cmocka_unit_test(test_shared_between_unwinders),
		cmocka_unit_test(test_same_build_id_other_file),
		cmocka_unit_test(test_no_build_id),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_nested_capped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
