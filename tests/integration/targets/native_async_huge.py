# A huge asyncio task graph (suite_async's hostile --async test): argv[1]
# tasks (5000 by default), each suspended 31 coroutines deep on an event
# that is never set, and one task burning CPU, so that every sample is in a
# task and --async reads the whole graph to charge it. Prints "ready" once
# every task is suspended.
import asyncio
import sys

TASKS = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
DEPTH = 31


async def nest(ev, depth):
    if depth == 1:
        await ev.wait()
    else:
        await nest(ev, depth - 1)


def burn_step():
    x = 0
    for i in range(20000):
        x += i * i
    return x


async def burner():
    while True:
        burn_step()
        await asyncio.sleep(0)


async def main():
    ev = asyncio.Event()
    tasks = [asyncio.create_task(nest(ev, DEPTH), name=f"sleeper-{i}") for i in range(TASKS)]
    await asyncio.sleep(0.5)
    print("ready", flush=True)
    await burner()


asyncio.run(main())
