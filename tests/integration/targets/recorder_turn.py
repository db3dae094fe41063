# The flight recorder's target: calm (busy half of each 10 ms; with argv[3]
# "idle", asleep) until the file argv[1] exists, then busy all the time; the moment it turned, time.time()
# just before its first busy loop, is written to argv[2] (then renamed into
# place, so that a reader never sees it half written).
import os
import sys
import time


def calm(go, idle):
    while not os.path.exists(go):
        if idle:
            time.sleep(0.01)
            continue
        end = time.perf_counter() + 0.005
        x = 0
        while time.perf_counter() < end:
            x = (x * 31 + 7) % 1000003
        time.sleep(0.005)


def busy():
    x = 0
    while True:
        x = (x * 17 + 3) % 999983


def main():
    go, moment = sys.argv[1], sys.argv[2]
    print("ready", flush=True)
    calm(go, sys.argv[3:] == ["idle"])
    with open(moment + ".tmp", "w") as f:
        f.write(repr(time.time()))
    os.rename(moment + ".tmp", moment)
    busy()


if __name__ == "__main__":
    main()
