# A thread that keeps the cyclic collector busy (full collections over a
# million live containers) while the main thread sleeps: the target of
# dump_gc in suite_dump.py. Prints the collector thread's native id, then
# "ready".
import gc
import sys
import threading
import time

keep = [[i] for i in range(1000000)]


def collect_loop():
    while True:
        gc.collect()  # COLLECT


t = threading.Thread(target=collect_loop, name="collector", daemon=True)
t.start()
time.sleep(0.2)
sys.stdout.write("tid %d\n" % t.native_id)
sys.stdout.write("ready\n")
sys.stdout.flush()
time.sleep(600)
