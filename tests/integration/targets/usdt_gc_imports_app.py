# Launch-mode --gc/--imports ground truth: automatic collection off, then
# exactly N gc.collect() calls (generation 2 each) over reference cycles, and
# two imports: json (which imports json.decoder and json.encoder) and a
# module that does not exist.
import gc
import sys


def make_cycles(k):
    for _ in range(k):
        a = []
        a.append(a)


def main():
    gc.disable()
    n = int(sys.argv[1])
    import json  # noqa: F401
    try:
        import pybpfprof_no_such_module  # noqa: F401
    except ImportError:
        pass
    for _ in range(n):
        make_cycles(100)
        gc.collect()
    print("done", flush=True)


if __name__ == "__main__":
    main()
