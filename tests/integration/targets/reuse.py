# Ground truth for code-object address reuse: generation after generation, a
# new function is compiled, run for a fixed amount of work, and dropped, so
# CPython frees its code object and the next one often lands at the same
# address. Each generation's function has its own name and file name, both
# carrying the generation number; a profiler that returned a cached name for a
# reused address would report a generation's samples under another's name,
# or under a name whose file number does not match.
import gc
import sys
import time

GENERATIONS = int(sys.argv[1]) if len(sys.argv) > 1 else 40
WORK = int(sys.argv[2]) if len(sys.argv) > 2 else 300000

SOURCE = """
def gen_{n}(k):
    total = 0
    for i in range(k):
        total += i * i
    return total
"""


def main():
    print("ready", flush=True)
    time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 0.5)
    seen = set()
    for n in range(GENERATIONS):
        namespace = {}
        exec(compile(SOURCE.format(n=n), "<gen %d>" % n, "exec"), namespace)
        fn = namespace["gen_%d" % n]
        seen.add(id(fn.__code__))
        fn(WORK)
        del fn, namespace
        gc.collect()  # the function and its globals form a cycle
    # How many distinct addresses the generations used: fewer than GENERATIONS
    # means addresses were reused, which is what this workload is for.
    print("addresses", len(seen), flush=True)


if __name__ == "__main__":
    main()
