/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Launch mode's pure parts: the raw mode of our terminal while the command's
 * keys are relayed, the children lists the leftovers are found from, and the
 * warning that names them (their names are the processes' own: anything;
 * reading them is test_target_fuzz_found.c's test_stat_session_comm).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <cmocka.h>

#include "cli/launch.h"

/* Every key as it is, the output as the pty made it; the rest of the mode kept. */
static void test_raw_mode(void **state)
{
	struct termios cooked, raw;

	(void)state;
	memset(&cooked, 0, sizeof(cooked));
	cooked.c_iflag = ICRNL | IXON | BRKINT | IUTF8;
	cooked.c_oflag = OPOST | ONLCR;
	cooked.c_lflag = ICANON | ECHO | ECHOE | ISIG | IEXTEN;
	cooked.c_cflag = CS7 | PARENB | CREAD;
	cooked.c_cc[VINTR] = 3;
	cooked.c_cc[VMIN] = 0;
	cooked.c_cc[VTIME] = 5;
	cfsetispeed(&cooked, B38400);
	launch_tty__raw(&cooked, &raw);
	assert_int_equal(raw.c_iflag & (ICRNL | IXON | BRKINT), 0);
	assert_int_equal(raw.c_iflag & IUTF8, IUTF8);
	assert_int_equal(raw.c_oflag & OPOST, 0);
	assert_int_equal(raw.c_lflag & (ICANON | ECHO | ISIG | IEXTEN), 0);
	assert_int_equal(raw.c_cflag & CSIZE, CS8);
	assert_int_equal(raw.c_cflag & (PARENB | CREAD), CREAD);
	assert_int_equal(raw.c_cc[VMIN], 1);
	assert_int_equal(raw.c_cc[VTIME], 0);
	/* restored as it was: the control characters and the speed are kept */
	assert_int_equal(raw.c_cc[VINTR], 3);
	assert_int_equal(cfgetispeed(&raw), B38400);
}

static void test_children_parse(void **state)
{
	pid_t pids[4];

	(void)state;
	assert_int_equal(launch_children_parse("", pids, 4), 0);
	assert_int_equal(launch_children_parse("12 345 ", pids, 4), 2);
	assert_int_equal(pids[0], 12);
	assert_int_equal(pids[1], 345);
	/* no more than max; nothing that is not a pid */
	assert_int_equal(launch_children_parse("1 2 3 4 5 6", pids, 4), 4);
	assert_int_equal(pids[3], 4);
	assert_int_equal(launch_children_parse("0 -5 x99999999999999999999 7\n", pids, 4), 1);
	assert_int_equal(pids[0], 7);
}

static void test_leftovers_describe(void **state)
{
	struct launch_leftover lo[3] = { { 12, "sleep" }, { 345, "python3" }, { 6, "x" } };
	char buf[256], tiny[10];

	(void)state;
	launch_leftovers_describe(lo, 2, 2, 345, buf, sizeof(buf));
	assert_string_equal(buf, "pid 12 (sleep), pid 345 (python3, the command)");
	launch_leftovers_describe(lo, 1, 5, 0, buf, sizeof(buf));
	assert_string_equal(buf, "pid 12 (sleep), and 4 more");
	launch_leftovers_describe(lo, 0, 3, 0, buf, sizeof(buf));
	assert_string_equal(buf, "and 3 more");
	/* cut to fit, and terminated */
	launch_leftovers_describe(lo, 3, 9, 0, tiny, sizeof(tiny));
	assert_string_equal(tiny, "pid 12 (s");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw_mode),
		cmocka_unit_test(test_children_parse),
		cmocka_unit_test(test_leftovers_describe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
