/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Command lines for the option tests: parse an argument vector from the
 * defaults, silently (argp with ARGP_SILENT prints nothing and never exits),
 * and check that a bad one fails with a sentence naming what was wrong.
 * Include after <cmocka.h>.
 */
#ifndef PYBPFPROF_TEST_CLI_ARGS_H
#define PYBPFPROF_TEST_CLI_ARGS_H

#include <argp.h>
#include <string.h>
#include "cli/config.h"

/* The number of arguments of a NULL-terminated vector literal. */
#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1)

static inline int parse(int argc, char **argv, struct pyprof_config *cfg)
{
	struct pyprof_config defaults = PYPROF_CONFIG_DEFAULTS;

	*cfg = defaults;
	return cli_parse(argc, argv, cfg, ARGP_SILENT);
}

/* The vector must be refused with an error that contains needle. */
static inline void expect_error(char **argv, int argc, const char *needle)
{
	struct pyprof_config cfg;

	assert_int_not_equal(parse(argc, argv, &cfg), 0);
	if (!strstr(cfg.error, needle))
		fail_msg("error '%s' does not mention '%s'", cfg.error, needle);
}

#endif
