# --mem retained-bytes ground truth: once told to (SIGUSR1, when the profiler
# is attached), ROUNDS rounds each build and drop a 200 MiB bytes object on
# one line and keep 5 MiB on another, then it prints "done" and idles holding
# what it kept. Both sizes are above glibc's mmap threshold, so each object is
# one mmap and the dropped one one munmap: at the end the keep line retains
# ROUNDS x 5 MiB and the big line nothing, exactly.
# argv[1]: ROUNDS (default 20).
import signal
import sys
import time

MIB = 1 << 20
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 20


def round_trip(kept):
    big = b"\x01" * (200 * MIB)  # big line
    del big  # drop line
    kept.append(b"\x02" * (5 * MIB))  # keep line


def main():
    kept = []
    signal.signal(signal.SIGUSR1, lambda *_: None)
    print("ready", flush=True)
    signal.pause()
    # the resident size's readings come every 50 ms: a level start to draw from
    time.sleep(0.3)
    for _ in range(ROUNDS):
        round_trip(kept)
        time.sleep(0.1)  # a trough between two peaks, for the timeline
    print("done", flush=True)
    while True:
        time.sleep(1)


main()
