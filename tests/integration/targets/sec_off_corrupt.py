# A hostile target for the _Py_DebugOffsets and co_firstlineno tests
# (tests/integration/suite_sec_offsets.py): it damages its own memory through
# ctypes before it says "ready", then spins in hot() until killed.
#
#   sec_off_corrupt.py debug FIELD VALUE   (3.13+) one field of _Py_DebugOffsets,
#                                          at the start of _PyRuntime, := VALUE
#                                          (free_threaded: the header's flag)
#   sec_off_corrupt.py firstlineno VALUE   hot()'s co_firstlineno := VALUE
#
# Neither is used by the interpreter to run code (the table is for debuggers,
# co_firstlineno for tracebacks and line numbers), so the target runs on.
import ctypes
import struct
import sys

# Positions of the fields inside _Py_DebugOffsets, by minor version
# (shared/design/cpython-internals.md section 5).
POSITIONS = {
    13: {"code_object.filename": 280, "code_object.qualname": 296,
         "code_object.linetable": 304, "code_object.firstlineno": 312,
         "code_object.size": 272, "interpreter_frame.executable": 240,
         "interpreter_frame.size": 224, "runtime_state.interpreters_head": 40,
         "code_object.co_code_adaptive": 344},
    14: {"code_object.filename": 320, "code_object.qualname": 336,
         "code_object.linetable": 344, "code_object.firstlineno": 352,
         "code_object.size": 312, "interpreter_frame.executable": 264,
         "interpreter_frame.size": 248, "runtime_state.interpreters_head": 40,
         "code_object.co_code_adaptive": 384},
    15: {"code_object.filename": 384, "code_object.qualname": 400,
         "code_object.linetable": 408, "code_object.firstlineno": 416,
         "code_object.size": 376, "interpreter_frame.executable": 328,
         "interpreter_frame.size": 312, "runtime_state.interpreters_head": 40,
         "code_object.co_code_adaptive": 448},
}

# PyCodeObject.co_firstlineno (an int) by minor version (section 3.1).
FIRSTLINENO = {8: 40, 9: 40, 10: 40, 11: 72, 12: 68, 13: 68, 14: 68, 15: 68}


def hot():
    n = 0
    while True:
        n += 1  # hot line
        if n > 1 << 30:
            n = 0


def corrupt_debug_offsets(field, value):
    minor = sys.version_info[1]
    runtime = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
    head = ctypes.string_at(runtime, 16)
    if head[:8] != b"xdebugpy" or struct.unpack_from("<Q", head, 8)[0] >> 16 != 0x300 | minor:
        sys.exit(f"no _Py_DebugOffsets at _PyRuntime: {head!r}")
    # the header's free-threaded flag (0 or 1) is at 16 in every version
    pos = 16 if field == "free_threaded" else POSITIONS[minor][field]
    ctypes.memmove(runtime + pos, struct.pack("<Q", value), 8)


def corrupt_firstlineno(value):
    at = id(hot.__code__) + FIRSTLINENO[sys.version_info[1]]
    old = ctypes.c_int.from_address(at).value
    if old != hot.__code__.co_firstlineno:
        sys.exit(f"co_firstlineno is not at +{at - id(hot.__code__)}: {old}")
    ctypes.c_int.from_address(at).value = value


def main():
    if sys.argv[1] == "debug":
        corrupt_debug_offsets(sys.argv[2], int(sys.argv[3], 0))
    else:
        corrupt_firstlineno(int(sys.argv[2], 0))
    print("ready", flush=True)
    hot()


main()
