# --mem=alloc ground truth: each round allocates 500 blocks of 8 KiB that
# are freed at once (churn line) and 50 blocks of 8 KiB that are kept for
# good (leak line), then sleeps 10 ms (at most ~40 MB/s leaked). 8 KiB is above pymalloc's 512-byte limit, so each block is
# one malloc, and far below the sampling period, so the sampler sees them
# only by bytes: 10 times more churned than leaked, and only the leak stays.
import time

BLOCK = 8192


def round_trip(leaked):
    tmp = [bytearray(BLOCK) for _ in range(500)]  # churn line
    del tmp
    leaked.extend(bytearray(BLOCK) for _ in range(50))  # leak line


def main():
    leaked = []
    print("ready", flush=True)
    while True:
        round_trip(leaked)
        time.sleep(0.01)


main()
