# --mem ground truth: each round builds and drops a 200 MiB bytes object on
# one line and keeps 5 MiB on another. Both are built by repetition, which
# writes every byte, so each page is touched (faulted) once; both are above
# glibc's mmap threshold, so each is one mmap and, when dropped, one munmap.
# Every KEEP_ROUNDS rounds the kept blocks are released together, so the
# resident size saws up to ~400 MiB and back, peaking on the 200 MiB line.
# argv[1] changes KEEP_ROUNDS (0: never release, for leak tests).
import sys

MIB = 1 << 20
KEEP_ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 40


def round_trip(kept):
    big = b"\x01" * (200 * MIB)  # big line
    del big  # drop line
    kept.append(b"\x02" * (5 * MIB))  # keep line


def main():
    kept = []
    print("ready", flush=True)
    while True:
        round_trip(kept)
        if len(kept) == KEEP_ROUNDS:
            kept.clear()  # release line


main()
