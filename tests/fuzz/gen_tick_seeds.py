#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Seed inputs for tests/fuzz/fuzz_tick.c, written to tests/fuzz/corpus/tick/.

    python3 tests/fuzz/gen_tick_seeds.py

Each seed is one version's image (fuzz.h's format): a thread state whose
exc_info points to a chain of exception stack items (a generator's item
holding nothing, then one holding an exception), a code object whose
co_code (3.8-3.10) is a bytes object, and bytecode with EXTENDED_ARG
prefixes at the position the seed names; the offsets are the layouts'
(src/cpython/py_layout.c), the opcodes each version's own.
"""

import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "tick")
BASE, NONE, EXC = 0x7F0000010000, 0x7F0000020000, 0x7F0000030000
# minor: (tstate.exc_info, item size, previous_item, EXTENDED_ARG, an opcode)
VERSIONS = {8: (144, 32, 24, 144, 23), 9: (144, 32, 24, 144, 23), 10: (144, 32, 24, 144, 23),
            11: (120, 16, 8, 144, 122), 12: (104, 16, 8, 144, 122), 13: (120, 16, 8, 71, 45),
            14: (120, 16, 8, 69, 44), 15: (144, 16, 8, 67, 44)}


def seg(addr, data):
    return struct.pack("<QH", addr, len(data)) + data


def image(minor):
    exc_info, size, prev, ext, op = VERSIONS[minor]
    mem = bytearray(1024)
    item1, item2 = BASE + 0x200, BASE + 0x240
    mem[exc_info:exc_info + 8] = struct.pack("<Q", item1)
    # a running generator's item: holds nothing, passes to the one below
    mem[0x200:0x200 + 8] = struct.pack("<Q", 0)
    mem[0x200 + prev:0x200 + prev + 8] = struct.pack("<Q", item2)
    mem[0x240:0x240 + 8] = struct.pack("<Q", EXC)
    if minor < 11:
        # co_code at 48: a bytes object (ob_size at 16, ob_sval at 32) at 0x300
        mem[48:56] = struct.pack("<Q", BASE + 0x300)
        mem[0x310:0x318] = struct.pack("<Q", 64)
        code = 0x320
        pos = 4 // (2 if minor == 10 else 1)
    else:
        code, pos = 0x380, 0x384
    mem[code + 4:code + 8] = bytes([ext, 1, op, 0])
    return bytes([minor - 8]) + struct.pack("<q", pos) + seg(BASE, bytes(mem)) + \
        seg(NONE, bytes(16))


def main():
    os.makedirs(OUT, exist_ok=True)
    for minor in VERSIONS:
        with open(os.path.join(OUT, "3.%d" % minor), "wb") as f:
            f.write(image(minor))


if __name__ == "__main__":
    main()
