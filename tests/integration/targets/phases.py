# What is hot changes: first() spins for argv[1] seconds, then second() spins
# until the process is killed. A live view must put second() on top soon
# after the switch, though first() keeps more samples since the start.
import sys
import time


def first(secs):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        pass


def second():
    while True:
        pass


print("ready", flush=True)
first(float(sys.argv[1]))
second()
