# asyncio tasks whose fields this process damages itself (with ctypes, found
# by their values, no offsets assumed), the hostile target of suite_async.py:
# a task named by a pointer to nowhere, a task whose coroutine is a bytes
# object, a task awaiting itself, one awaiting a wild pointer, a coroutine
# awaiting itself, and (3.14+) a task list that loops on itself. The event
# loop is then blocked for good (time.sleep), so nothing ever runs the damaged
# tasks; the collector is off so that nothing walks them either.
import asyncio
import ctypes
import gc
import sys
import time

gc.disable()
W = ctypes.c_uint64


def slot_of(obj, value, size=None):
    """Address of the word of obj that holds value (an address)."""
    size = size or type(obj).__basicsize__ + 256
    base = id(obj)
    for off in range(0, size, 8):
        if W.from_address(base + off).value == value:
            return base + off
    raise SystemExit(f"no word of {type(obj).__name__} holds {value:#x}")


async def inner(f):
    await f


async def outer(f):
    await inner(f)


async def main():
    f = asyncio.get_running_loop().create_future()
    names = ("bad-name", "bad-coro", "self-wait", "wild-waiter", "loop-coro", "ring")
    tasks = {n: asyncio.create_task(outer(f), name=n) for n in names}
    await asyncio.sleep(0.05)
    size = type(tasks["ring"]).__basicsize__
    junk = b"not a coroutine" * 8
    W.from_address(slot_of(tasks["bad-name"], id(tasks["bad-name"].get_name()), size)).value = 16
    W.from_address(slot_of(tasks["bad-coro"], id(tasks["bad-coro"].get_coro()), size)).value = \
        id(junk)
    W.from_address(slot_of(tasks["self-wait"], id(f), size)).value = id(tasks["self-wait"])
    W.from_address(slot_of(tasks["wild-waiter"], id(f), size)).value = 0xdead0000beef000
    coro = tasks["loop-coro"].get_coro()
    W.from_address(slot_of(coro, id(coro.cr_await))).value = id(coro)
    if sys.version_info >= (3, 14):
        # the task's list node: the one word that points inside it is the node's "next"
        # of its neighbour; make its own "next" point to itself
        ring = id(tasks["ring"])
        for off in range(0, size - 8, 8):
            nxt = W.from_address(ring + off).value
            prv = W.from_address(ring + off + 8).value
            if off >= 144 and nxt and prv and W.from_address(prv).value == ring + off:
                W.from_address(ring + off).value = ring + off
                break
        else:
            raise SystemExit("no task list node found")
    print("ready", flush=True)
    time.sleep(3600)  # BLOCKED


asyncio.run(main())
