# Ground truth for the output formats: count_common() tests membership in a
# list, a linear scan in C charged to the line marked "membership", so that
# line holds nearly all of count_common()'s samples and count_common() has
# the most self time of all. checksum() is a pure-Python loop taking a
# smaller share (roughly a tenth), a narrow box a flame-graph click can zoom.
# The runner finds lines by their markers, so the file can be edited freely.
import sys
import time


def count_common(a, b_list):
    common = 0
    for x in a:
        if x in b_list:  # membership
            common += 1
    return common


def checksum(a):
    total = 0
    for x in a:
        total += x * x
    return total


def make_lists(n):
    return list(range(n)), list(range(1, 2 * n, 2))


def main():
    deadline = time.time() + float(sys.argv[1]) if len(sys.argv) > 1 else None
    a, b_list = make_lists(600)
    print("ready", flush=True)
    while deadline is None or time.time() < deadline:
        count_common(a, b_list)
        for _ in range(12):
            checksum(a)


if __name__ == "__main__":
    main()
