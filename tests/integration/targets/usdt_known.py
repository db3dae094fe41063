# --gc and --imports ground truth with exact counts, for interpreters run
# directly or embedded (pyembed runs it with runpy): the collector is
# disabled, so after SIGUSR1 the only collections are the N gc.collect()
# calls of full_collect(); then json is imported (with json.decoder,
# json.scanner and json.encoder inside it) and a module that does not exist.
import gc
import signal
import sys
import time


def full_collect():
    gc.collect()


def main(n):
    gc.disable()
    go = []
    signal.signal(signal.SIGUSR1, lambda *a: go.append(1))
    print("ready", flush=True)
    while not go:
        time.sleep(0.01)
    for _ in range(n):
        full_collect()
    import json  # noqa: F401
    try:
        import pybpfprof_no_such_module  # noqa: F401
    except ImportError:
        pass
    print("done", flush=True)
    time.sleep(60)


if __name__ == "__main__":
    main(int(sys.argv[1]))
