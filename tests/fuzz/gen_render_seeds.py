#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Seeds for fuzz_render's newer kinds: a _thread.lock and a _thread.RLock in
each layout CPython used (read live on 3.8-3.15: a char after two pointers,
or a PyMutex; owner and count, or a _PyRecursiveMutex), and numpy scalars,
as images of fuzz.h's format: byte 0 the version (index of fuzz_render.c's
versions) and output size, then segments (u64 address, u16 length, bytes).
Usage: gen_render_seeds.py DIR"""
import struct
import sys
from pathlib import Path

OBJ, TYPE, NAME = 0x10000, 0x20000, 0x30000
IMMUTABLE_HEAP = 256 | 512


def seg(addr, data):
    return struct.pack("<QH", addr, len(data)) + data


def image(version, name, flags, basicsize, payload):
    obj = struct.pack("<QQ", 1, TYPE) + payload
    obj += bytes(max(0, 64 - len(obj)))
    typ = bytearray(176)
    struct.pack_into("<Q", typ, 24, NAME)
    struct.pack_into("<q", typ, 32, basicsize)
    struct.pack_into("<Q", typ, 168, flags)
    return bytes([version | 0xf8]) + seg(OBJ, obj) + seg(TYPE, bytes(typ)) + \
        seg(NAME, name.encode() + b"\0")


SEEDS = {
    # 3.11 (index 3): lock_lock, in_weakreflist, locked
    "lock311": image(3, "_thread.lock", IMMUTABLE_HEAP, 40, struct.pack("<QQB", 1, 0, 1)),
    # 3.14 (index 6): a PyMutex, locked with a waiter parked
    "lock314": image(6, "_thread.lock", IMMUTABLE_HEAP, 24, bytes([3])),
    # 3.8 (index 0): a static type; owner, count 2; the owner is the ident in word 0
    "rlock38": image(0, "_thread.RLock", 0, 48, struct.pack("<QQQ", 0, 1, 2)),
    # 3.15 (index 7): _PyRecursiveMutex held, level 1
    "rlock315": image(7, "_thread.RLock", IMMUTABLE_HEAP, 40, struct.pack("<QQQ", 1, 1, 1)),
    "npint8": image(3, "numpy.int8", 0, 24, bytes([0xfb])),
    "npfloat16": image(3, "numpy.float16", 0, 24, bytes([0x66, 0x2e])),
    "npfloat64": image(3, "numpy.float64", 0, 24, struct.pack("<d", 2.5)),
    "npbool": image(3, "numpy.bool_", 0, 24, bytes([1])),
    "npcomplex": image(3, "numpy.complex128", 0, 32, struct.pack("<dd", 1.0, -2.0)),
    "nplongdouble": image(3, "numpy.float128", 0, 32, bytes(range(16))),
}


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, data in SEEDS.items():
        (out / name).write_bytes(data)


if __name__ == "__main__":
    main()
