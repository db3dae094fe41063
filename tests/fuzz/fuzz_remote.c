// SPDX-License-Identifier: GPL-2.0-only
/*
 * The remote readers over a fake memory image: str objects (every kind,
 * truncation), bytes objects, and code objects with the strings and line
 * table they point at, for the layout of every supported version (3.13+
 * from the _Py_DebugOffsets fixtures).
 *
 * Input: byte 0 picks the version (low 3 bits: 3.8 + n) and the small output
 * buffer's size (the other bits); bytes 1-8 are &PyCode_Type (0: unchecked);
 * the rest is the image (fuzz.h), and the objects are read at the first
 * segment's address.
 */
#include "fuzz.h"

static struct py_layout layouts[8];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const uint32_t versions[8] = { 0x030800F0, 0x030900F0, 0x030A00F0, 0x030B00F0,
					      0x030C00F0, 0x030D00F0, 0x030E0AF0, 0x030F02F0 };

	(void)argc;
	(void)argv;
	fuzz_layouts(versions, 8, layouts);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 9)
		return 0;
	fake_mem_load(data + 9, size - 9);
	if (!fake_nsegs)
		return 0;
	fuzz_read_objects(&layouts[data[0] & 7], fuzz_u64(data + 1), fake_segs[0].addr,
			  data[0] >> 3);
	return 0;
}
