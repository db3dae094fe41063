#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Seed inputs for the fuzz targets, taken from the running interpreter.

    python3.X tests/fuzz/gen_seeds.py OUTDIR

writes OUTDIR/linetable/, OUTDIR/remote/ and (3.13+) OUTDIR/debug_offsets/:
real line tables, and real code objects with the strings and line table they
point at, copied out of this interpreter's own memory with ctypes at their
own addresses (the fake memory image of tests/fuzz/fuzz.h). Runs on 3.8 to
3.15 with the standard library only. tests/fuzz/corpus/ holds a few of each,
from the interpreters of the machine they were made on; `make fuzz` adds
more from the interpreters it finds (tests/fuzz/run.sh).
"""

import ctypes
import os
import struct
import sys
import sysconfig
import types

VER = sys.version_info[:2]
# "t": a free-threaded build, whose objects (and so its seeds) differ
TAG = "%d.%d.%d" % sys.version_info[:3] + ("t" if sysconfig.get_config_var("Py_GIL_DISABLED")
                                           else "")
OUT = sys.argv[1]
MAX_SEEDS = int(sys.argv[2]) if len(sys.argv) > 2 else 12


def sample_code():
    """A few real code objects: small, with loops, long, nested, and stdlib ones."""
    def small(x):
        return x + 1

    def loops(n):
        t = 0
        for i in range(n):
            if i % 3:
                t += i
            else:
                t -= 1
        return t

    class K:
        def method(self, a, b=2):
            try:
                return a / b
            except ZeroDivisionError:
                return None

    src = "def far():\n" + "\n" * 300 + "    x = 1\n" + "    y = [i for i in range(3)]\n" * 40 + "    return x\n"
    ns = {}
    exec(compile(src, "<far>", "exec"), ns)
    codes = [small.__code__, loops.__code__, K.method.__code__, ns["far"].__code__]
    import json.decoder
    import textwrap
    for mod in (json.decoder, textwrap):
        for v in vars(mod).values():
            if isinstance(v, types.FunctionType):
                codes.append(v.__code__)
    return codes


def table_of(co):
    if VER < (3, 10):
        return 0, co.co_lnotab
    if VER == (3, 10):
        return 1, co.co_linetable
    return 2, co.co_linetable


def write(kind, i, data):
    d = os.path.join(OUT, kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "py%s-%02d" % (TAG, i)), "wb") as f:
        f.write(data)


def seg(addr, size):
    size = min(size, 0xffff)
    return struct.pack("<QH", addr, size) + ctypes.string_at(addr, size)


def image(co):
    """The code object first (it is read at the first segment), then what it points at."""
    qual = co.co_qualname if VER >= (3, 11) else co.co_name
    lt = co.co_lnotab if VER < (3, 10) else co.co_linetable
    out = seg(id(co), 256)
    # The reader reads a str's whole compact header first, even for short ASCII
    # ones (smaller objects): copy what follows too, as the process would show.
    for obj in (qual, co.co_filename, lt):
        out += seg(id(obj), max(sys.getsizeof(obj), 96))
    return out


def main():
    codes = sample_code()[:MAX_SEEDS]
    for i, co in enumerate(codes):
        kind, tab = table_of(co)
        write("linetable", i, struct.pack("<Bii", kind, co.co_firstlineno, 2 * i) + tab)
    code_type = struct.pack("<Q", id(types.CodeType))
    if VER <= (3, 15):
        for i, co in enumerate(codes):
            write("remote", i, bytes([(VER[1] - 8) & 7 | (i << 3) & 0xf8]) + code_type + image(co))
    if VER >= (3, 13):
        runtime = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
        blob = ctypes.string_at(runtime, 1024)
        for i, co in enumerate(codes[:4]):
            write("debug_offsets", i, blob + code_type + image(co))


main()
