# Ground truth for a new thread's first wait (suite_wall.py): argv[1]
# threads started one after another while the main thread computes between
# them (it holds the GIL as they start) and two threads keep both CPUs busy
# in C without the GIL (zlib), so that a new thread waits for a CPU before it
# has run a line; each sleeps 50 ms as its first act, then ends. Each sleep is stamped with time.monotonic_ns() (the
# kernel's CLOCK_MONOTONIC) before and after; once all have ended, one line
# per thread, "sleep TID BEFORE_NS AFTER_NS", then "done".
import sys
import threading
import time
import zlib

stamps = []


def young():
    before = time.monotonic_ns()
    time.sleep(0.05)  # wall: young sleep
    stamps.append((threading.get_native_id(), before, time.monotonic_ns()))


def compute(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def burn(stop, data):
    while not stop.is_set():
        zlib.compress(data, 9)  # releases the GIL


stop = threading.Event()
burners = [threading.Thread(target=burn, args=(stop, bytes(range(256)) * 4096))
           for _ in range(2)]
for b in burners:
    b.start()
threads = []
for _ in range(int(sys.argv[1])):
    t = threading.Thread(target=young)
    t.start()
    threads.append(t)
    compute(0.003)
for t in threads:
    t.join()
stop.set()
for b in burners:
    b.join()
for tid, before, after in stamps:
    print(f"sleep {tid} {before} {after}")
print("done", flush=True)
