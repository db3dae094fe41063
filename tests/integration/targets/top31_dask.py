# A dask-like service for the text report's first screen (suite_top_view):
# its work lives in a package nested deep under DIR (argv[1]) as an
# installed library's would, site-packages/top31_distributed/protocol/...,
# in methods with long qualnames; a spawn pool of WORKERS (argv[2]) runs
# TASKS (argv[3]) tasks of SECONDS (argv[4]) of CPU each. Prints "parent PID",
# the module's path and its functions' first lines, "done" at the end.
import multiprocessing
import os
import sys

DEPTH = ("site-packages", "top31_distributed", "protocol", "serialize", "compression",
         "partitioned_chunk_codecs")
SOURCE = '''import time


class ChunkedSerializationWorkerPool:
    def deserialize_and_compute_partition_chunk(self, cpu_s):
        end = time.thread_time() + cpu_s
        x = 0
        while time.thread_time() < end:
            x += 1  # the hot line
        return x


def run_partition_task_with_retries_and_backpressure(cpu_s):
    return ChunkedSerializationWorkerPool().deserialize_and_compute_partition_chunk(cpu_s)
'''


def package(root):
    d = root
    for part in DEPTH:
        d = os.path.join(d, part)
        os.makedirs(d, exist_ok=True)
        if part != "site-packages":
            open(os.path.join(d, "__init__.py"), "a").close()
    path = os.path.join(d, "core.py")
    with open(path, "w") as f:
        f.write(SOURCE)
    return os.path.join(root, "site-packages"), path


def task(args):
    site, cpu_s = args
    if site not in sys.path:
        sys.path.insert(0, site)
    from top31_distributed.protocol.serialize.compression.partitioned_chunk_codecs import core
    return core.run_partition_task_with_retries_and_backpressure(cpu_s)


def main():
    site, path = package(sys.argv[1])
    workers, tasks, cpu_s = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    print(f"parent {os.getpid()}\nmodule {path}", flush=True)
    for i, line in enumerate(SOURCE.splitlines(), 1):
        if line.lstrip().startswith(("def ", "while ")) or "the hot line" in line:
            print(f"line {i} {line.strip()}", flush=True)
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        pool.map(task, [(site, cpu_s)] * tasks, chunksize=1)
    print("done", flush=True)


if __name__ == "__main__":
    main()
