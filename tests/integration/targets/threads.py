# Ground truth for threads: two worker threads spin in different functions
# while the main thread blocks in join(), so the main thread should get
# (almost) no CPU samples and each worker about half of them (the GIL lets
# only one of the two run Python code at a time). The workers name
# themselves in the kernel (prctl), worker-a and worker-b, for --threads.
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


def main():
    workers = [threading.Thread(target=named(n, f), daemon=True)
               for n, f in (("worker-a", thread_a_work), ("worker-b", thread_b_work))]
    for t in workers:
        t.start()
    print("ready", flush=True)
    for t in workers:
        t.join()


if __name__ == "__main__":
    main()
