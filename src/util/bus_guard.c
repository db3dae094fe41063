// SPDX-License-Identifier: GPL-2.0-only
/*
 * SIGBUS during one call (see bus_guard.h): the handler jumps back to
 * bus_guard__call while a call is in progress; at any other time it
 * restores the default action and lets the signal kill us as before.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include "util/bus_guard.h"

static sigjmp_buf bus_jump;
static volatile sig_atomic_t bus_armed;

static void on_sigbus(int sig)
{
	if (bus_armed) {
		bus_armed = 0;
		siglongjmp(bus_jump, 1);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

int bus_guard__call(int (*fn)(void *ctx), void *ctx)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, old;
	volatile int ret = -EFAULT;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &old))
		return fn(ctx);
	/* savemask 1: SIGBUS, blocked in its handler, is unblocked again on the jump */
	if (!sigsetjmp(bus_jump, 1)) {
		bus_armed = 1;
		ret = fn(ctx);
	}
	bus_armed = 0;
	sigaction(SIGBUS, &old, NULL);
	return ret;
}
