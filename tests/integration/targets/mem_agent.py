# The agent's --mem ground truth: each SIGUSR1 (sent once per interval, right
# after the agent has pushed one) runs one round: a 200 MiB bytes object
# built and dropped on one line and 5 MiB kept on another, then "round N" is
# printed. Both sizes are above glibc's mmap threshold, so each object is one
# mmap and the dropped one one munmap: after N rounds the line that keeps
# holds N x 5 MiB and the one that drops nothing, and each interval maps
# 200 MiB on the latter (all released in it) and 5 MiB on the former.
import signal
import sys
import time

MIB = 1 << 20
pending = 0


def on_usr1(*_):
    global pending
    pending += 1


def round_trip(kept):
    big = b"\x01" * (200 * MIB)  # big line
    del big  # drop line
    kept.append(b"\x02" * (5 * MIB))  # keep line


def main():
    global pending
    kept = []
    signal.signal(signal.SIGUSR1, on_usr1)
    print("ready", flush=True)
    n = 0
    while True:
        if not pending:
            time.sleep(0.01)
            continue
        pending -= 1
        round_trip(kept)
        n += 1
        print(f"round {n}", flush=True)


main()
