// SPDX-License-Identifier: GPL-2.0-only
/*
 * The order libbpf needs, in one place: open the object, let each mode size
 * its maps and choose its programs, then load. Programs not loaded are not
 * verified (each one inlines the stack walk), and preallocated maps not
 * needed take no memory.
 */
#include "session/mem.h"
#include "session/modes.h"
#include "session/native.h"
#include "session/session.h"
#include "session/usdt.h"
#include "session/wall.h"

struct session *modes__open_session(unsigned max_depth, enum pyprof_mem_mode mem_mode,
				    unsigned usdt_modes, unsigned wall_mode, unsigned native_modes,
				    bool opcodes, bool exceptions, sample_fn_t on_sample, void *ctx,
				    char *why, size_t whylen)
{
	struct session *s = session__open(max_depth, why, whylen);

	if (!s)
		return NULL;
	mem__prepare(s, mem_mode);
	usdt__prepare(s, usdt_modes);
	wall__prepare(s, wall_mode);
	native__prepare(s, native_modes);
	session__prepare_ticks(s, opcodes, exceptions);
	if (session__load(s, on_sample, ctx, why, whylen)) {
		session__close(s);
		return NULL;
	}
	return s;
}
