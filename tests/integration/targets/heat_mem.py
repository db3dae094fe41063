# --mem for the heatmap: one line touches new memory (HEAT_TOUCH) over and
# over, 40 MiB a round written by repetition (every page touched), above
# glibc's largest mmap threshold (32 MiB) so that each block is a new
# mapping, not a reused one; another line only computes (HEAT_WORK).
import time

BLOCK = list(range(1000))
held = []


def grow():
    held.append(b"\x01" * (40 << 20))  # HEAT_TOUCH
    if len(held) > 2:
        held.pop(0)


def work(n):
    total = 0
    for _ in range(n):
        total += sum(BLOCK)  # HEAT_WORK
    return total


print("ready", flush=True)
while True:
    grow()
    work(100)
    time.sleep(0.05)
