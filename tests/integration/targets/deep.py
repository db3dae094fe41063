# Ground truth for stack depth: recurse() nests DEPTH frames, then leaf()
# spins forever, so every sample's stack is DEPTH + 3 frames deep
# (<module>, main, recurse x DEPTH, leaf) and leaf is always innermost.
import sys

DEPTH = 300


def leaf():
    print("ready", flush=True)
    x = 0
    while True:
        x = (x + 1) & 0xFFFF


def recurse(n):
    if n <= 1:
        leaf()
    else:
        recurse(n - 1)


def main():
    sys.setrecursionlimit(DEPTH + 100)
    recurse(DEPTH)


if __name__ == "__main__":
    main()
