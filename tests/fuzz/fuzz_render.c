// SPDX-License-Identifier: GPL-2.0-only
/*
 * The live-object renderer (cpython/py_objects.c) over random memory images:
 * whatever the bytes say (types, lengths, pointers, cycles), rendering ends
 * within its read budget, stays inside its buffer and never crashes; and a
 * frame's locals and an instance attribute are read the same way.
 *
 * Input: byte 0 picks the version (low 3 bits: 3.8 + n) and the output
 * buffer's size (the other bits); the rest is the image (fuzz.h). The object
 * rendered is at the first segment's address, with the threads an RLock's
 * owner is named from (their idents the first segment's first words, so an
 * image can name one); the locals are those of a frame at the first segment
 * running a code object at the second, their argument kinds checked.
 */
#include "fuzz.h"
#include "cpython/py_objects.h"

static struct py_layout layouts[8];
static const uint32_t versions[8] = { 0x030800F0, 0x030900F0, 0x030A00F0, 0x030B00F0,
				      0x030C00F0, 0x030D00F0, 0x030E0AF0, 0x030F02F0 };

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_layouts(versions, 8, layouts);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct py_reader r;
	struct py_thread_id threads[2] = { { 0, 1, "one" }, { 0, 2, "" } };
	struct py_value_info info;
	struct py_local loc[PY_LOCALS_MAX];
	char out[PY_RENDER_MAX], type[48];
	size_t outlen, total, i;
	unsigned v;
	int n;

	if (size < 1)
		return 0;
	v = data[0] & 7;
	outlen = 64 + (data[0] >> 3) * 14; /* 64 .. 498 */
	fake_mem_load(data + 1, size - 1);
	if (!fake_nsegs)
		return 0;
	if (py_reader__init(&r, 1, &layouts[v], versions[v]))
		abort();
	if (fake_segs[0].len >= 16) {
		threads[0].ident = fuzz_u64(fake_segs[0].data);
		threads[1].ident = fuzz_u64(fake_segs[0].data + 8);
	}
	r.threads = threads;
	r.nthreads = 2;
	py_render_info(&r, fake_segs[0].addr, out, outlen, type, &info);
	if (strnlen(out, outlen) >= outlen || strnlen(type, 48) >= 48 || info.lock > 2 ||
	    info.locked < 0 || info.locked > 1 || (info.lock != 2 && (info.owner || info.count)))
		abort();
	if (!py_object_attr_str(&r, fake_segs[0].addr, "_name", out, outlen) &&
	    strnlen(out, outlen) >= outlen)
		abort();
	if (fake_nsegs < 2)
		return 0;
	n = py_frame_locals(&r, fake_segs[0].addr, fake_segs[1].addr, loc, PY_LOCALS_MAX, &total);
	if (n > PY_LOCALS_MAX || (n > 0 && (size_t)n > total))
		abort();
	for (i = 0; n > 0 && i < (size_t)n; i++)
		if (loc[i].param > PY_PARAM_VARKW)
			abort();
	for (i = 0; n > 0 && i < (size_t)n && i < 4; i++)
		if (!loc[i].tagged && loc[i].value)
			py_render(&r, loc[i].value, out, outlen, type);
	return 0;
}
