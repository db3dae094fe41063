# Ground truth for line attribution: in hot(), the membership test scans a
# list of a few hundred ints in C, so nearly all of hot()'s self time belongs
# to the line marked "membership" (the loop and increment are ~1% of it).
# The runner finds that line by its marker, so the file can be edited freely.
import sys
import time


def hot(n, haystack):
    hits = 0
    for i in range(n):
        if i in haystack:  # membership
            hits += 1
    return hits


def main():
    deadline = time.time() + float(sys.argv[1]) if len(sys.argv) > 1 else None
    # Odd numbers only, so most probes scan the whole list before failing.
    haystack = list(range(1, 801, 2))
    print("ready", flush=True)
    while deadline is None or time.time() < deadline:
        hot(2000, haystack)


if __name__ == "__main__":
    main()
