/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The pure parts of target discovery: /proc/PID/maps lines, the ELF reader
 * (on this test's own executable, whose symbols and load address are known
 * from the inside), string transcoding, the version table and its messages,
 * and the kernel-feature check's sentence.
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/bus_guard.h"
#include "proc/elf_file.h"
#include "session/session.h"
#include "proc/procfs.h"
#include "cpython/target.h"
#include "cpython/py_layout.h"
#include "cpython/remote_mem.h"

static void test_maps_line(void **state)
{
	struct map_entry e;

	(void)state;
	assert_int_equal(maps_parse_line("00400000-00452000 r-xp 00001000 fe:01 1311 "
					 "/usr/bin/python3.11\n",
					 &e),
			 0);
	assert_true(e.start == 0x400000 && e.end == 0x452000 && e.off == 0x1000);
	assert_true(e.inode == 1311);
	assert_string_equal(e.perms, "r-xp");
	assert_string_equal(e.path, "/usr/bin/python3.11");
	/* paths keep their spaces; anonymous mappings have none */
	assert_int_equal(maps_parse_line("7f00-8f00 rw-p 00000000 00:00 0   "
					 "/tmp/my dir/lib x.so (deleted)",
					 &e),
			 0);
	assert_string_equal(e.path, "/tmp/my dir/lib x.so (deleted)");
	assert_int_equal(maps_parse_line("7f00-8f00 rw-p 00000000 00:00 0\n", &e), 0);
	assert_string_equal(e.path, "");
	assert_int_equal(maps_parse_line("garbage", &e), -EINVAL);
	assert_int_equal(maps_parse_line("9000-8000 rw-p 0 00:00 0", &e), -EINVAL);
}

/*
 * A mapped file's name longer than a line buffer: read whole, it is one
 * entry with no path, and its tail (which the target chose to look like a
 * libpython mapping) is never an entry of its own.
 */
static void test_maps_long_line(void **state)
{
	const char *forged = "7f0000000000-7f0000001000 r-xp 00000000 fe:01 42 /libpython3.9.so";
	size_t len = 9000, cap = 0, n = 0, i;
	char *text = malloc(len + 512), *line = NULL, *p;
	struct map_entry e;
	FILE *f;

	(void)state;
	assert_non_null(text);
	p = text + sprintf(text, "00400000-00452000 r-xp 00000000 fe:01 1311 /");
	/* "/d/d/.../d/" then the forged entry as the last components, for any cut */
	for (i = 0; i < len / 2; i++)
		p += sprintf(p, "d/");
	p += sprintf(p, "%s\n", forged);
	p += sprintf(p, "00600000-00601000 rw-p 00000000 fe:01 7 /usr/bin/python3.11\n");
	f = fmemopen(text, p - text, "r");
	assert_non_null(f);
	while (maps_next(f, &line, &cap, &e)) {
		n++;
		assert_false(strstr(e.path, "libpython"));
		if (n == 1) {
			assert_true(e.long_path && e.start == 0x400000 && e.inode == 1311);
			assert_string_equal(e.path, "");
		} else {
			assert_false(e.long_path);
			assert_string_equal(e.path, "/usr/bin/python3.11");
		}
	}
	assert_int_equal(n, 2);
	fclose(f);
	free(line);
	free(text);
}

/* The start time is field 22, counted from the last ')' whatever comm holds. */
static void test_stat_start_ticks(void **state)
{
	struct target t = { .pid = getpid() };
	int fd, status;
	pid_t child;

	(void)state;
	assert_true(proc_stat_start_ticks("42 (a) b) c) S 1 42 42 0 -1 4194560 100 0 0 0 5 6 0 0 "
					  "20 0 1 0 123456 1000 200 18446744073709551615\n") ==
		    123456);
	assert_true(proc_stat_start_ticks("42 (x) S 1 2 3") == 0);
	assert_true(proc_stat_start_ticks("42 (x 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 "
					  "19 20 21 22 23") == 0);
	assert_true(proc_stat_start_ticks("") == 0);

	/* our own pidfd: alive; with another start time, some other process */
	t.start_ticks = proc_start_ticks(getpid());
	assert_true(t.start_ticks > 0);
	fd = target__pidfd(&t);
	assert_true(fd >= 0);
	assert_false(proc_pidfd_exited(fd));
	close(fd);
	t.start_ticks++;
	assert_int_equal(target__pidfd(&t), -ESRCH);

	/* a child's pidfd says when it has exited, before and after it is reaped */
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		pause();
		_exit(0);
	}
	fd = proc_pidfd_open(child);
	assert_true(fd >= 0);
	assert_false(proc_pidfd_exited(fd));
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(proc_pidfd_exited(fd));
	close(fd);
	assert_int_equal(proc_pidfd_open(child), -ESRCH);
}

/* A mapped file truncated under a guarded call: an error, not a dead test. */
static int touch_truncated(void *ctx)
{
	const char *path = ctx;
	volatile char *p;
	int fd = open(path, O_RDWR);
	char c;

	if (fd < 0 || ftruncate(fd, 8192))
		return -EIO;
	p = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -EIO;
	if (ftruncate(fd, 0))
		return -EIO;
	close(fd);
	c = p[4096];
	return c;
}

static int returns_seven(void *ctx)
{
	(void)ctx;
	return 7;
}

static void test_bus_guard(void **state)
{
	char path[] = "/tmp/pybpfprof-bus-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(bus_guard__call(touch_truncated, path), -EFAULT);
	/* and again: the handler is armed for each call, SIGBUS unblocked after the jump */
	assert_int_equal(bus_guard__call(touch_truncated, path), -EFAULT);
	assert_int_equal(bus_guard__call(returns_seven, NULL), 7);
	unlink(path);
}

/* A FIFO named by a target is refused at once, not waited on for a writer. */
static void test_elf_fifo(void **state)
{
	char dir[] = "/tmp/pybpfprof-fifo-XXXXXX", path[64];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/libpython3.11.so", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_null(elf_file__open(path));
	assert_int_equal(errno, ENOEXEC);
	unlink(path);
	rmdir(dir);
}

/* Initialised data of our own executable, looked up through the ELF reader. */
/* Under ASan a global's symbol size would include its redzone: not this one's. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
__attribute__((no_sanitize("address")))
#endif
#endif
const uint64_t test_target_marker = 0x1122334455667788ULL;

static void test_elf_self(void **state)
{
	struct elf_file *ef = elf_file__open("/proc/self/exe");
	uint64_t vaddr = 0, size = 0, got = 0, bias = 0;
	char line[4200];
	FILE *maps;
	int found = 0;

	(void)state;
	assert_non_null(ef);
	assert_int_equal(elf_file__symbol(ef, "test_target_marker", &vaddr, &size), 0);
	assert_int_equal(size, 8);
	assert_int_equal(elf_file__read(ef, vaddr, &got, sizeof(got)), 0);
	assert_true(got == test_target_marker);
	assert_int_equal(elf_file__symbol(ef, "no_such_symbol_here", &vaddr, NULL), -ENOENT);
	assert_int_equal(elf_file__read(ef, 0x7ff000000000ULL, &got, sizeof(got)), -EFAULT);

	/* The bias from our first mapping must place the symbol where it really is. */
	maps = fopen("/proc/self/maps", "r");
	assert_non_null(maps);
	while (!found && fgets(line, sizeof(line), maps)) {
		struct map_entry e;
		char exe[4096];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = '\0';
		if (maps_parse_line(line, &e) || strcmp(e.path, exe))
			continue;
		assert_int_equal(elf_file__bias(ef, e.start, e.off, &bias), 0);
		found = 1;
	}
	fclose(maps);
	assert_true(found);
	assert_int_equal(elf_file__symbol(ef, "test_target_marker", &vaddr, NULL), 0);
	assert_true(bias + vaddr == (uint64_t)(uintptr_t)&test_target_marker);
	elf_file__close(ef);
	assert_null(elf_file__open("/nonexistent/file"));
	assert_null(elf_file__open("/proc/self/status"));
}

static void test_ucs(void **state)
{
	const uint8_t latin1[] = { 'c', 0xe9 };	   /* "cé" */
	const uint16_t ucs2[] = { 0x3b1, 0x20ac }; /* "α€" */
	const uint32_t ucs4[] = { 0x1f600, 'x' };  /* "😀x" */
	const uint32_t bad[] = { 0x110000 };
	const uint16_t escaped2[] = { 'c', 'a', 'f', 0xdce9, '/', 0xdcff };
	const uint32_t escaped4[] = { 0xdce9, 0x1f600 };
	const uint16_t lone[] = { 0xdc00 };
	char out[16];

	(void)state;
	assert_int_equal(ucs_to_utf8(latin1, 2, 1, out, sizeof(out)), 3);
	assert_string_equal(out, "c\xc3\xa9");
	assert_int_equal(ucs_to_utf8(ucs2, 2, 2, out, sizeof(out)), 5);
	assert_string_equal(out, "\xce\xb1\xe2\x82\xac");
	assert_int_equal(ucs_to_utf8(ucs4, 2, 4, out, sizeof(out)), 5);
	assert_string_equal(out, "\xf0\x9f\x98\x80x");
	assert_int_equal(ucs_to_utf8(bad, 1, 4, out, sizeof(out)), -1);
	assert_int_equal(ucs_to_utf8(ucs2, 2, 3, out, sizeof(out)), -1);
	/* too small for the second character: cut at a character boundary */
	assert_int_equal(ucs_to_utf8(ucs2, 2, 2, out, 4), 2);
	assert_string_equal(out, "\xce\xb1");
	/* os.fsdecode(b"caf\xe9/\xff"): its escapes are the bytes again, in both kinds */
	assert_int_equal(ucs_to_utf8(escaped2, 6, 2, out, sizeof(out)), 6);
	assert_string_equal(out, "caf\xe9/\xff");
	assert_int_equal(ucs_to_utf8(escaped4, 2, 4, out, sizeof(out)), 5);
	assert_string_equal(out, "\xe9\xf0\x9f\x98\x80");
	/* a lone surrogate that is no escape stays as Python holds it (not UTF-8) */
	assert_int_equal(ucs_to_utf8(lone, 1, 2, out, sizeof(out)), 3);
	assert_string_equal(out, "\xed\xb0\x80");
}

/* Invariants every table must keep: what BPF reads covers every field it uses. */
static void check_layout(const struct py_layout *L)
{
	const struct py_offsets *o = &L->bpf;
	unsigned id_end = o->code_id_start + o->code_id_size;

	assert_true(o->frame_read_size <= PYPROF_FRAME_READ);
	assert_true(o->frame_code + 8u <= o->frame_read_size);
	assert_true(o->frame_previous + 8u <= o->frame_read_size);
	assert_true(o->frame_instr + (o->instr_kind == PY_INSTR_PTR ? 8u : 4u) <=
		    o->frame_read_size);
	assert_true(o->frame_owner == PYPROF_NO_OFFSET || o->frame_owner < o->frame_read_size);
	assert_true(o->code_id_size <= PY_CODE_ID_READ);
	assert_true(o->code_id_start <= o->code_firstlineno);
	assert_true(o->code_firstlineno + 4u <= id_end);
	assert_true(o->code_filename + 8u <= id_end && o->code_filename >= o->code_id_start);
	assert_true(o->code_name + 8u <= id_end && o->code_name >= o->code_id_start);
	assert_true(o->code_qualname + 8u <= id_end && o->code_qualname >= o->code_id_start);
	assert_true(o->code_linetable + 8u <= id_end && o->code_linetable >= o->code_id_start);
	assert_true(id_end <= L->code_read_size);
	assert_true(L->ob_type + 8u <= L->code_read_size);
	assert_true(o->str_ascii_data - o->str_length + PY_NAME_TEXT <= PY_STR_READ);
	assert_true(o->str_state + 4u <= o->str_ascii_data);
}

static void test_versions(void **state)
{
	static const uint32_t tables[] = { 0x030812F0, 0x030912F0, 0x030A0DF0, 0x030B02F0,
					   0x030C01F0 };
	struct py_layout L;
	char buf[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		assert_int_equal(py_layout__for_version(tables[i], &L), 0);
		check_layout(&L);
	}
	assert_int_equal(py_layout__for_version(0x030B02F0, &L), 0);
	assert_int_equal(L.bpf.tstate_thread_id, 152);
	assert_int_equal(L.bpf.code_adaptive, 184);
	assert_int_equal(L.linetable, LINETABLE_LOCATIONS);
	assert_int_equal(py_layout__for_version(0x030A0DF0, &L), 0);
	assert_int_equal(L.linetable, LINETABLE_310);
	assert_int_equal(L.lasti_unit, 2); /* 3.10 f_lasti counts code units */
	assert_int_equal(py_layout__for_version(0x030912F0, &L), 0);
	assert_int_equal(L.linetable, LINETABLE_LNOTAB);
	assert_int_equal(L.lasti_unit, 1);
	assert_int_equal(py_layout__for_version(0x030701F0, &L), -ENOTSUP);
	assert_int_equal(py_layout__for_version(0x020712F0, &L), -ENOTSUP);
	assert_int_equal(py_layout__for_version(0x031000F0, &L), -ENOTSUP);
	/* 3.13+ publish their offsets: the table defers to _Py_DebugOffsets */
	assert_int_equal(py_layout__for_version(0x030D00F0, &L), -EAGAIN);
	assert_int_equal(py_layout__for_version(0x030F02F0, &L), -EAGAIN);
	assert_string_equal(py_supported_versions, "3.8 to 3.15");

	py_version_str(0x030B02F0, buf, sizeof(buf));
	assert_string_equal(buf, "3.11.2");
	py_version_str(0x030D00C1, buf, sizeof(buf));
	assert_string_equal(buf, "3.13.0rc1");
	py_version_str(0x030F00A3, buf, sizeof(buf));
	assert_string_equal(buf, "3.15.0a3");
}

static void test_fingerprint(void **state)
{
	const __u64 ptrs[4] = { 0x7f0012345678, 0x7f00abcdef00, 0x7f00abcdef40, 0x7f0000001000 };
	const __u64 text[4] = { 0x37315f6e6567ULL /* "gen_17" */, 0, 0, 0 };
	__u64 other[4] = { 0x38315f6e6567ULL /* "gen_18" */, 0, 0, 0 };
	__u64 moved[4];
	__u32 base = py_code_fingerprint(ptrs, 3, text, 6);

	(void)state;
	assert_int_equal(base, py_code_fingerprint(ptrs, 3, text, 6));
	/* same pointers (reused blocks), other name text: another code object */
	assert_int_not_equal(base, py_code_fingerprint(ptrs, 3, other, 6));
	assert_int_not_equal(base, py_code_fingerprint(ptrs, 4, text, 6));
	memcpy(moved, ptrs, sizeof(moved));
	moved[2] += 0x40;
	assert_int_not_equal(base, py_code_fingerprint(moved, 3, text, 6));
	/* bytes past the text's length never count (they are whatever follows the string) */
	other[0] = 0xffff37315f6e6567ULL;
	assert_int_equal(base, py_code_fingerprint(ptrs, 3, other, 6));
}

static void test_kernel_check_names_btf(void **state)
{
	char why[256];

	(void)state;
	assert_int_equal(check_kernel("/nonexistent/btf/vmlinux", why, sizeof(why)), -ENOTSUP);
	assert_non_null(strstr(why, "BTF"));
	assert_non_null(strstr(why, "CONFIG_DEBUG_INFO_BTF"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_line),   cmocka_unit_test(test_maps_long_line),
		cmocka_unit_test(test_elf_fifo),    cmocka_unit_test(test_stat_start_ticks),
		cmocka_unit_test(test_bus_guard),   cmocka_unit_test(test_elf_self),
		cmocka_unit_test(test_ucs),	    cmocka_unit_test(test_versions),
		cmocka_unit_test(test_fingerprint), cmocka_unit_test(test_kernel_check_names_btf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
