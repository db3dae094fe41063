// SPDX-License-Identifier: GPL-2.0-only
/*
 * The asyncio task reader (cpython/py_async.c) and the walks it rests on
 * (sets, dicts, lists and type names in cpython/py_objects.c) over random
 * memory images: whatever the bytes say (task lists that loop, sets with
 * huge masks, coroutines awaiting themselves, names that are not strings),
 * reading ends, every count stays within its bound and nothing crashes.
 *
 * Input: byte 0 picks the version (3.11 + (n % 5)); the rest is the image
 * (fuzz.h). _PyRuntime is at the first segment's address (its interpreter
 * list head at the layout's offset); the set, dict and list walks start at
 * the first segment too.
 */
#include "fuzz.h"
#include "cpython/py_async.h"

static struct py_layout layouts[5];
static const uint32_t versions[5] = { 0x030B00F0, 0x030C00F0, 0x030D00F0, 0x030E0AF0, 0x030F02F0 };
static struct py_async_task tasks[64];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_layouts(versions, 5, layouts);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct py_reader r;
	static struct target t;
	struct py_async_state st;
	struct py_async_layout A;
	uint64_t keys[PY_DICT_ITEMS], values[PY_DICT_ITEMS], cache = 0, task;
	size_t total, i, k;
	int n;

	if (!fake_target(data, size, versions, layouts, 5, &t, &r))
		return 0;
	if (py_layout__async(t.version, &A))
		abort();
	n = py_async_tasks(&r, &t, tasks, 64, &st);
	if (n > 64)
		abort();
	for (i = 0; n > 0 && i < (size_t)n; i++) {
		if (tasks[i].nframes > PY_ASYNC_DEPTH || tasks[i].nawaits > PY_ASYNC_AWAITS ||
		    strnlen(tasks[i].name, sizeof(tasks[i].name)) >= sizeof(tasks[i].name))
			abort();
		for (k = 0; k < tasks[i].nawaits; k++)
			if (tasks[i].awaits[k] >= (uint32_t)n)
				abort();
	}
	py_async_running_task(&r, &t, fake_segs[0].addr, &cache, &task);
	if (py_set_keys(&r, fake_segs[0].addr, keys, PY_DICT_ITEMS, &total) > PY_DICT_ITEMS ||
	    py_dict_items(&r, fake_segs[0].addr, keys, values, PY_DICT_ITEMS) > PY_DICT_ITEMS ||
	    py_list_items(&r, fake_segs[0].addr, keys, PY_DICT_ITEMS, &total) > PY_DICT_ITEMS)
		abort();
	/* the awaited slot lies past the frame's locals, within its stack, or is 0 */
	if (size >= 25) {
		uint64_t frame = fuzz_u64(data + 1), field = fuzz_u64(data + 9),
			 nl = fuzz_u64(data + 17) & 0x1ffff,
			 slot = py_async_await_slot(&A, r.O.frame_localsplus, frame, field, nl);

		if (slot && (slot < frame + r.O.frame_localsplus + 8 * nl ||
			     slot >= frame + r.O.frame_localsplus + 8 * (nl + 512)))
			abort();
	}
	return 0;
}
