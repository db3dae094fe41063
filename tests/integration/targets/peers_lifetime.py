# A short program that measures its own life for suite_peers' exposure
# test: computes for about 0.4 s of thread CPU time in compute(), sleeps
# 0.6 s in rest(), and prints "lived SECONDS" (perf_counter from its first
# line to its last) as it ends.
import time

START = time.perf_counter()


def compute():
    t0 = time.thread_time()
    t = 0
    while time.thread_time() - t0 < 0.4:
        for i in range(1000):
            t += i % 7
    return t


def rest():
    time.sleep(0.6)


compute()
rest()
print("lived %.6f" % (time.perf_counter() - START), flush=True)
