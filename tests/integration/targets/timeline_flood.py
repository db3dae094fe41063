# A hostile target for the timeline's bound (suite_timeline.py), run by
# nobody: THREADS threads (argv[1], default 32) leave the CPU and come back
# as fast as the kernel lets them (sleeps of 50 us), each a deep stack, so
# that a --mode wall run is offered far more timeline events than its cap;
# and each names itself with a terminal escape sequence, which no output
# may carry raw.
import ctypes
import sys
import threading
import time

LIBC = ctypes.CDLL(None)


def deep(n):
    if n:
        return deep(n - 1)
    while True:
        time.sleep(0.00005)  # timeline: flood


def worker(i):
    LIBC.prctl(15, b"\x1b[31mev%d" % i, 0, 0, 0)
    deep(40)


for i in range(int(sys.argv[1]) if len(sys.argv) > 1 else 32):
    threading.Thread(target=worker, args=(i,), daemon=True).start()
print("ready", flush=True)
while True:
    time.sleep(1)
