# A hostile asyncio program for `dump --async` (issue 28.2): N tasks (62 by
# default) that await each other as a DAG, task i awaiting tasks i+1 and i+2
# through one gather(); the last two sleep. Drawn as a tree, task i's subtree
# holds the subtrees of both i+1 and i+2: fib(N) of them in all. Prints
# "tasks N edges E" (its own count of tasks and of gather children), then
# "ready" once every task is suspended where it stays.
import asyncio
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 62


async def leaf():
    await asyncio.sleep(3600)  # DAG-LEAF


async def node(a, b):
    await asyncio.gather(a, b)  # DAG-GATHER


async def main():
    tasks = [None] * N
    tasks[N - 1] = asyncio.create_task(leaf(), name=f"dag-{N - 1}")
    tasks[N - 2] = asyncio.create_task(leaf(), name=f"dag-{N - 2}")
    for i in range(N - 3, -1, -1):
        tasks[i] = asyncio.create_task(node(tasks[i + 1], tasks[i + 2]), name=f"dag-{i}")
    await asyncio.sleep(0.3)
    print(f"tasks {N} edges {2 * (N - 2)}", flush=True)
    print("ready", flush=True)
    await tasks[0]  # DAG-MAIN


asyncio.run(main())
