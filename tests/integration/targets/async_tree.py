# asyncio tasks in known shapes, the target of suite_async.py: a chain of
# three named tasks (outer-A awaits middle-B awaits inner-C, which sleeps),
# a gather() of three tasks, two tasks awaiting each other (a cycle), and,
# with the argument "spin", a task whose coroutine burns CPU under two
# awaiting tasks ("nocycle": without the cycle). Prints "ready" once every task is suspended where it stays.
import asyncio
import sys

tasks = {}


async def inner_c():
    await asyncio.sleep(3600)  # SLEEP-C


async def middle_b():
    await asyncio.create_task(inner_c(), name="inner-C")  # AWAIT-C


async def outer_a():
    await asyncio.create_task(middle_b(), name="middle-B")  # AWAIT-B


async def leaf(n):
    await asyncio.sleep(3600 + n)  # LEAF


async def gatherer():
    kids = [asyncio.create_task(leaf(i), name=f"leaf-{i}") for i in range(3)]
    await asyncio.gather(*kids)  # GATHER


async def cycle(other):
    await asyncio.sleep(0.05)
    await tasks[other]  # CYCLE


def burn(n):
    total = 0
    for i in range(n):
        total += i * i  # BURN
    return total


async def spinner():
    while True:
        burn(200000)  # CALL-BURN
        await asyncio.sleep(0)  # SPIN


async def spin_outer():
    await asyncio.create_task(spinner(), name="spinner")  # AWAIT-SPIN


async def main():
    tasks["A"] = asyncio.create_task(outer_a(), name="outer-A")
    tasks["G"] = asyncio.create_task(gatherer(), name="gatherer")
    if "nocycle" not in sys.argv:
        tasks["X"] = asyncio.create_task(cycle("Y"), name="cycle-X")
        tasks["Y"] = asyncio.create_task(cycle("X"), name="cycle-Y")
    if "spin" in sys.argv:
        tasks["S"] = asyncio.create_task(spin_outer(), name="spin-outer")
    await asyncio.sleep(0.3)
    print("ready", flush=True)
    await tasks["A"]  # MAIN


asyncio.run(main())
