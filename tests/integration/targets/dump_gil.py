# Two threads that compete for the GIL (pure-Python loops) while the main
# thread sleeps: the target of dump_gil in suite_dump.py. Prints the
# spinners' native ids ("tids A B"), then "ready".
import sys
import threading
import time


def spin():
    n = 0
    while True:
        n += 1  # SPIN


threads = [threading.Thread(target=spin, name="spin-%d" % i, daemon=True) for i in range(2)]
for t in threads:
    t.start()
time.sleep(0.2)
sys.stdout.write("tids %s\n" % " ".join(str(t.native_id) for t in threads))
sys.stdout.write("ready\n")
sys.stdout.flush()
time.sleep(600)
