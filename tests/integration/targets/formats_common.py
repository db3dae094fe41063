# Ground truth for the output formats: count_common() tests membership in a
# list, a linear scan in C charged to the line marked "membership", so that
# line holds nearly all of count_common()'s samples, and count_common() has
# far more self time than anything else here (make_lists, main). The runner
# finds the line by its marker, so the file can be edited freely.
import sys
import time


def count_common(a, b_list):
    common = 0
    for x in a:
        if x in b_list:  # membership
            common += 1
    return common


def make_lists(n):
    return list(range(n)), list(range(1, 2 * n, 2))


def main():
    deadline = time.time() + float(sys.argv[1]) if len(sys.argv) > 1 else None
    a, b_list = make_lists(600)
    print("ready", flush=True)
    while deadline is None or time.time() < deadline:
        count_common(a, b_list)


if __name__ == "__main__":
    main()
