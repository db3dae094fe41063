# A process with a thread that never runs Python: faulthandler's watchdog, a
# C thread that wakes every 50 ms to write the Python threads' tracebacks
# (to /dev/null here) and blocks again. Its off-CPU intervals have no
# Python stack to be charged to; the main thread sleeps. Prints
# "tid watchdog NATIVE_ID" (the one task that is not the main thread),
# then "ready".
import faulthandler
import os
import time

sink = open(os.devnull, "w")
faulthandler.dump_traceback_later(0.05, repeat=True, file=sink)
deadline = time.monotonic() + 5
while time.monotonic() < deadline:
    others = [int(t) for t in os.listdir("/proc/self/task") if int(t) != os.getpid()]
    if others:
        break
    time.sleep(0.01)
print(f"tid watchdog {others[0]}", flush=True)
print("ready", flush=True)
while True:
    time.sleep(0.2)
