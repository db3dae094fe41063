# Two threads that wait, each at one line of its own: nap() sleeps 50 ms at a
# time; take() waits in os.read on a pipe that feeder() writes one byte to
# every 200 ms. In --mode wall, nap's line is off-CPU in "sleep" and take's
# in "I/O". Prints "ready" once both wait.
import os
import threading
import time

r, w = os.pipe()


def nap():
    while True:
        time.sleep(0.05)  # marker: nap


def take():
    while True:
        os.read(r, 1)  # marker: take


def feeder():
    while True:
        time.sleep(0.2)
        os.write(w, b"x")


for fn in (take, feeder):
    threading.Thread(target=fn, daemon=True).start()
print("ready", flush=True)
nap()
