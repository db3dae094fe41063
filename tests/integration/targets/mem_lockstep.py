# Ground truth for page-fault sampling that cannot fall into step with the
# program: every round maps and touches 16 pages on the "few" line and 112 on
# the "many" line, 128 faults in all, twice the default sampling period. With
# a fixed period of 64 the samples land at the same two points of every round
# and the "few" line gets 0% or 50% of them instead of 12.5%. Prints the
# number of rounds when it ends.
import mmap
import sys
import time

PAGE = mmap.PAGESIZE


def one_round():
    few = mmap.mmap(-1, 16 * PAGE)
    for off in range(0, 16 * PAGE, PAGE):
        few[off] = 1  # few line
    many = mmap.mmap(-1, 112 * PAGE)
    for off in range(0, 112 * PAGE, PAGE):
        many[off] = 1  # many line
    few.close()
    many.close()


rounds = 0
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    one_round()
    rounds += 1
print("rounds", rounds, flush=True)
