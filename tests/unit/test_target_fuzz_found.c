/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The parsers the fuzz targets (tests/fuzz/) drive, on the inputs that
 * matter: /proc/PID/stat lines whose comm holds what the process chose, and
 * each input a fuzz target found crashing a decoder outside the
 * _Py_DebugOffsets and line-table code (those have their own tests).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fixture_file.h"
#include "proc/procfs.h"
#include "cpython/py_layout.h"

static size_t load_crash(const char *name, uint8_t *buf, size_t cap)
{
	char path[256];

	snprintf(path, sizeof(path), "tests/fuzz/crashes/%s", name);
	return fixture_read(path, buf, cap);
}

/*
 * fuzz_debug_offsets' first find (on main before the offsets fix): the real
 * 3.13.0 table with code_object.name = 0xfffe000000000078. Accepted, it made
 * the code reader load a pointer from 2^64 - 2^49 bytes past its buffer
 * (ASan: SEGV in field_ptr). It must be refused, naming the field.
 */
static void test_debug_offsets_name_wraps(void **state)
{
	uint8_t buf[4096];
	struct py_layout L;
	char why[256];
	uint64_t version;

	(void)state;
	assert_true(load_crash("debug_offsets-name-offset-wrap", buf, sizeof(buf)) >=
		    PY_DEBUG_OFFSETS_READ);
	memcpy(&version, buf + 8, sizeof(version));
	assert_int_equal(version, 0x030D00F0);
	assert_int_equal(py_layout__from_debug_offsets((uint32_t)version, buf,
						       PY_DEBUG_OFFSETS_READ, &L, why, sizeof(why)),
			 -EBADMSG);
	assert_non_null(strstr(why, "code_object.name = 0xfffe000000000078"));
}

static void test_stat_line(void **state)
{
	struct proc_stat st;

	(void)state;
	/* a real line of a sleeping python3.11, fields 3, 4 and 22 */
	assert_int_equal(proc_stat_parse("10433 (python3.11) S 10411 10411 30763 0 -1 4194304 "
					 "1748 0 0 0 2 0 0 0 20 0 1 0 76932 14475264 2183",
					 &st),
			 0);
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 10411);
	assert_int_equal(st.starttime, 76932);
	/* comm may fake fields with spaces and parentheses: the last ')' ends it */
	assert_int_equal(proc_stat_parse("10433 () S 1 (x) Z) R 10411 10411 30763 0 -1 4194304 "
					 "1748 0 0 0 2 0 0 0 20 0 1 0 76932 1",
					 &st),
			 0);
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.ppid, 10411);
	assert_int_equal(st.starttime, 76932);
	/* cut short: the state is known, the rest absent */
	assert_int_equal(proc_stat_parse("7 (a) Z", &st), 0);
	assert_int_equal(st.state, 'Z');
	assert_int_equal(st.ppid, -1);
	assert_int_equal(st.starttime, -1);
	/* a negative start time is no start time */
	assert_int_equal(proc_stat_parse("7 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5", &st),
			 0);
	assert_int_equal(st.starttime, -1);
	assert_int_equal(proc_stat_parse("", &st), -EINVAL);
	assert_int_equal(proc_stat_parse("7 (a)", &st), -EINVAL);
	assert_int_equal(proc_stat_parse("7 (a)S 1", &st), -EINVAL);
	assert_int_equal(st.state, 0);
}

/* Field 6 of stat (the session) and comm, which may hold anything the process chose. */
static void test_stat_session_comm(void **state)
{
	const char *line = "10433 (a) b) (c) S 10411 10400 30763 0 -1 4194304 1748 0 0 0 2 0 0 "
			   "0 20 0 1 0 76932 14475264 2183";
	struct proc_stat st;
	char comm[16], two[2];

	(void)state;
	assert_int_equal(proc_stat_parse(line, &st), 0);
	assert_int_equal(st.ppid, 10411);
	assert_int_equal(st.session, 30763);
	proc_stat_comm(line, comm, sizeof(comm));
	assert_string_equal(comm, "a) b) (c");
	proc_stat_comm(line, two, sizeof(two));
	assert_string_equal(two, "a");
	proc_stat_comm("no comm", comm, sizeof(comm));
	assert_string_equal(comm, "");
	proc_stat_comm(")(", comm, sizeof(comm));
	assert_string_equal(comm, "");
	assert_int_equal(proc_stat_parse("7 (a) Z 1", &st), 0);
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.session, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_line),
		cmocka_unit_test(test_stat_session_comm),
		cmocka_unit_test(test_debug_offsets_name_wraps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
