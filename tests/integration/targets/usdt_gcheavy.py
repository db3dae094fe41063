# --gc ground truth: allocating cyclic garbage in make_cycles() is what
# triggers the collector (generation 0 fills up with container objects), so
# the triggering stacks must name make_cycles; gc.collect() in full_collect()
# forces generation-2 collections a known number of times per loop.
import gc
import sys


class Node:
    def __init__(self):
        self.other = None


def make_cycles(n):
    for _ in range(n):
        a, b = Node(), Node()
        a.other, b.other = b, a


def full_collect():
    gc.collect()


def main():
    print("ready", flush=True)
    while True:
        make_cycles(20000)
        full_collect()


if __name__ == "__main__":
    main()
