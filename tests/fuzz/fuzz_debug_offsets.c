// SPDX-License-Identifier: GPL-2.0-only
/*
 * _Py_DebugOffsets validation (3.13+), then the code-object field reads the
 * layout it accepted allows: the code object reader, its strings and line
 * table, over a fake memory image.
 *
 * Input: PY_DEBUG_OFFSETS_READ bytes as read from the start of _PyRuntime
 * (the binary's version is taken from their own version field, so a mutated
 * blob still gets past the version check, to the offsets); then 8 bytes of
 * &PyCode_Type (0: unchecked); then the image (fuzz.h), the code object at
 * the first segment's address.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const size_t n = PY_DEBUG_OFFSETS_READ;
	struct py_layout L;
	uint32_t hexversion;
	char why[256];

	if (size < n)
		return 0;
	hexversion = (uint32_t)fuzz_u64(data + 8);
	if (py_layout__from_debug_offsets(hexversion, data, n, &L, why, sizeof(why)))
		return 0;
	if (size < n + 8)
		return 0;
	fake_mem_load(data + n + 8, size - n - 8);
	if (!fake_nsegs)
		return 0;
	fuzz_read_objects(&L, fuzz_u64(data + n), fake_segs[0].addr, 0);
	return 0;
}
