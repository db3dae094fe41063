# --mode wall for the heatmap: each round sleeps 50 ms at one line of its
# own function (HEAT_SLEEP, in nap(), so that the JSON report's figures for
# nap() are that line's) and computes at another (HEAT_BUSY), so the page
# has a line mostly off the CPU and one on it.
import time

BLOCK = list(range(1000))


def nap():
    time.sleep(0.05)  # HEAT_SLEEP


def busy(n):
    total = 0
    for _ in range(n):
        total += sum(BLOCK)  # HEAT_BUSY
    return total


print("ready", flush=True)
while True:
    nap()
    busy(200)
