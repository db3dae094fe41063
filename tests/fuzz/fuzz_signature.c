// SPDX-License-Identifier: GPL-2.0-only
/*
 * --signatures' namer (cpython/py_signature.c) over hostile records and
 * memory images: whatever a signature record says (counts, flags, type
 * pointers, nd and dims) and whatever the type objects, dtype descriptors
 * and argument names read as, the key is computed, the text stays inside
 * its buffer, NUL-terminated, and nothing crashes.
 *
 * Input: byte 0 picks the version (low 3 bits: 3.8 + n) and the text
 * buffer's size (the other bits); then a struct py_sig_frame; the rest is
 * the image (fuzz.h). A record whose code is 0 is given the first
 * segment's address, so that the argument names are read from the image.
 */
#include "fuzz.h"
#include "cpython/py_signature.h"

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
	struct py_sig_offsets so;
	struct py_sig_frame f;
	char out[PY_SIG_TEXT];
	size_t outlen;
	unsigned v;

	if (size < 1 + sizeof(f))
		return 0;
	v = data[0] & 7;
	outlen = 64 + (data[0] >> 3) * 10; /* 64 .. 374 */
	memcpy(&f, data + 1, sizeof(f));
	fake_mem_load(data + 1 + sizeof(f), size - 1 - sizeof(f));
	if (!f.code && fake_nsegs)
		f.code = fake_segs[0].addr;
	if (py_reader__init(&r, 1, &layouts[v], versions[v]) ||
	    py_sig_offsets__for(versions[v], false, &so))
		abort();
	(void)py_signature_key(&r, &f);
	memset(out, 0x55, sizeof(out));
	py_signature_text(&r, &f, out, outlen);
	if (strnlen(out, outlen) >= outlen)
		abort();
	return 0;
}
