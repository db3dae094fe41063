// SPDX-License-Identifier: GPL-2.0-only
/*
 * The reads of a CPU sample's tick (bpf/stackwalk.h, compiled as host C):
 * the exception state from a thread state's exc_info chain (stackwalk_exc)
 * and the innermost frame's instruction (stackwalk_opcode), over random
 * memory images, and the naming of whatever byte that gives
 * (py_opcode_name). Whatever the bytes say (items that loop, a co_code
 * whose size lies, a position past the bytecode, EXTENDED_ARG all along),
 * the reads end, give only the bits bpf_abi.h defines, and a name is NULL or
 * a plain instruction name.
 *
 * Input: byte 0 picks the version (3.8 + (n % 8)), bytes 1-8 the position
 * (an int64); the rest is the image (fuzz.h). The thread state, the code
 * object and 3.11+'s bytecode base are at the first segment's address, None
 * at the second's (or 0 without one).
 */
#include "fuzz.h"
#include "cpython/py_opcodes.h"
#include "../../bpf/stackwalk.h"

static struct py_layout layouts[8];
static const uint32_t versions[8] = { 0x030812F0, 0x030912F0, 0x030A0DF0, 0x030B07F0,
				      0x030C01F0, 0x030D00F0, 0x030E0AF0, 0x030F02F0 };
static struct scratch scratch;

__u32 max_depth = PYPROF_DEFAULT_DEPTH;

long stackwalk_read(void *dst, __u32 size, __u64 addr)
{
	struct iovec local = { dst, size }, remote = { (void *)(uintptr_t)addr, size };

	/* BPF's read is all or nothing */
	return process_vm_readv(1, &local, 1, &remote, 1, 0) == (ssize_t)size ? 0 : -EFAULT;
}

int stackwalk_module_sent(__u64 key)
{
	(void)key;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_layouts(versions, 8, layouts);
	return 0;
}

/* A name is NULL or letters, digits and '_' (it reaches reports as it is). */
static void check_name(const char *name)
{
	size_t i;

	for (i = 0; name && name[i]; i++)
		if (!((name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '_') ||
		    i > 64)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct py_offsets *off;
	const char *name, *base;
	uint64_t v, none;
	int64_t pos;
	unsigned i;

	if (size < 9)
		return 0;
	off = &layouts[data[0] % 8].bpf;
	memcpy(&pos, data + 1, sizeof(pos));
	fake_mem_load(data + 9, size - 9);
	if (!fake_nsegs)
		return 0;
	none = fake_nsegs > 1 ? fake_segs[1].addr : 0;
	v = stackwalk_exc(off, &scratch, fake_segs[0].addr, none);
	if (v & ~(uint64_t)(PY_CPU_EXC | PY_CPU_EXC_KNOWN) ||
	    (v & PY_CPU_EXC && !(v & PY_CPU_EXC_KNOWN)))
		abort();
	v = stackwalk_opcode(off, &scratch, fake_segs[0].addr, pos, fake_segs[0].addr);
	if (v & ~(uint64_t)(PY_CPU_HAS_OPCODE | 0xff | PY_CPU_HAS_PREV | 0xff0000) ||
	    (PY_CPU_OPCODE(v) && !(v & PY_CPU_HAS_OPCODE)) ||
	    (PY_CPU_PREV_OPCODE(v) && !(v & PY_CPU_HAS_PREV)) ||
	    ((v & PY_CPU_HAS_OPCODE) && PY_CPU_OPCODE(v) == off->op_extended_arg))
		abort();
	for (i = 0; i < 8 && v; i++) {
		name = py_opcode_name(versions[i], PY_CPU_OPCODE(v), &base);
		check_name(name);
		check_name(base);
		if (!name != !base)
			abort();
		name = py_opcode_name(versions[i], PY_CPU_PREV_OPCODE(v), &base);
		check_name(name);
		check_name(base);
	}
	return 0;
}
