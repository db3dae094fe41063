# Two threads of unequal work, the lighter first: the main thread spins for
# LIGHT seconds of its own CPU time, then a worker thread named "heavy" spins
# for 3 x LIGHT of its own (time.thread_time: whatever the machine's load),
# and the process exits. The first stack any profiler sees is the main
# thread's; the busiest thread is the worker.
import sys
import threading
import time

LIGHT = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3


def spin(secs):
    end = time.thread_time() + secs
    x = 0
    while time.thread_time() < end:
        x = (x * 31 + 7) % 1000003
    return x


def light():
    return spin(LIGHT)


def heavy():
    return spin(3 * LIGHT)


light()
t = threading.Thread(target=heavy, name="heavy")
t.start()
t.join()
