"""--threads ground truth: two threads named (in the kernel, via prctl)
worker-a and worker-b spin in thread_a_work and thread_b_work; the main
thread waits in join()."""

import ctypes
import threading

PR_SET_NAME = 15
libc = ctypes.CDLL(None)


def named(name, fn):
    def run():
        libc.prctl(PR_SET_NAME, name.encode(), 0, 0, 0)
        fn()
    return run


def thread_a_work():
    x = 0
    while True:
        x = (x * 31 + 7) % 1000003


def thread_b_work():
    x = 0
    while True:
        x = (x * 17 + 3) % 999983


workers = [threading.Thread(target=named(n, f), daemon=True)
           for n, f in (("worker-a", thread_a_work), ("worker-b", thread_b_work))]
for t in workers:
    t.start()
print("ready", flush=True)
for t in workers:
    t.join()
