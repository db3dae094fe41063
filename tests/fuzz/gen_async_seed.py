#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A seed for fuzz_async: this interpreter's own asyncio tasks, copied out of
its memory with ctypes at their own addresses (tests/fuzz/fuzz.h's image):
_PyRuntime first, then the interpreter and thread state, each task with its
type, name, coroutine (its frame inside) and code object.

    python3.X tests/fuzz/gen_async_seed.py OUT

Runs on 3.11 to 3.15 (GIL builds), standard library only.
"""

import asyncio
import ctypes
import struct
import sys

VERSION = {(3, 11): 0, (3, 12): 1, (3, 13): 2, (3, 14): 3, (3, 15): 4}[sys.version_info[:2]]
segs = []


def copy(addr, n):
    if addr and len(segs) < 64 and not any(a == addr for a, _ in segs):
        segs.append((addr, ctypes.string_at(addr, n)))


def obj(o, n=320):
    copy(id(o), n)
    copy(id(type(o)), 420)
    name = ctypes.c_char_p.from_address(id(type(o)) + 24).value
    copy(ctypes.c_void_p.from_address(id(type(o)) + 24).value, max(len(name) + 1, 48))


async def c():
    await asyncio.sleep(60)


async def b():
    await asyncio.create_task(c(), name="C")


async def main():
    t = asyncio.create_task(b(), name="B")
    await asyncio.sleep(0.01)
    runtime = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
    ctypes.pythonapi.PyInterpreterState_Get.restype = ctypes.c_void_p
    ctypes.pythonapi.PyThreadState_Get.restype = ctypes.c_void_p
    copy(runtime, 4096)
    copy(ctypes.pythonapi.PyInterpreterState_Get(), 12000)
    copy(ctypes.pythonapi.PyThreadState_Get(), 1200)
    for task in asyncio.all_tasks():
        obj(task)
        obj(task.get_name(), 128)
        coro = task.get_coro()
        obj(coro, 400)
        obj(coro.cr_code, 256)
        obj(coro.cr_code.co_filename, 96)
        obj(coro.cr_code.co_qualname, 96)
    with open(sys.argv[1], "wb") as f:
        f.write(bytes([VERSION]))
        for addr, data in segs:
            f.write(struct.pack("<QH", addr, len(data)) + data)
    t.cancel()


asyncio.run(main())
