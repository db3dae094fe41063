# --calls ground truth: tick() runs exactly N times and tock() exactly 2N
# times, once the test sends SIGUSR1 (after the probes are attached). Then a
# generator, recursion and exceptions give the shadow stack its hard cases.
# With "cprofile" as argv[2], runs the same work under cProfile and prints
# cProfile's ncalls per function as JSON instead (the reference).
import json
import signal
import sys
import time


def tick():
    return 1


def tock():
    return 2


def countdown(k):
    for i in range(k):
        yield i


def recurse(depth):
    return 0 if depth == 0 else recurse(depth - 1) + 1


def fail():
    raise ValueError("expected")


def catch():
    try:
        fail()
    except ValueError:
        return 1


def work(n):
    total = 0
    for _ in range(n):
        total += tick()
        total += tock()
        total += tock()
    total += sum(countdown(5))
    total += recurse(10)
    for _ in range(3):
        total += catch()
    return total


def main():
    n = int(sys.argv[1])
    if len(sys.argv) > 2 and sys.argv[2] == "cprofile":
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        work(n)
        prof.disable()
        stats = pstats.Stats(prof).stats
        print(json.dumps({name: nc for (_, _, name), (cc, nc, tt, ct, callers) in stats.items()
                          if name in ("tick", "tock", "countdown", "recurse", "fail", "catch",
                                      "work")}))
        return
    go = []
    signal.signal(signal.SIGUSR1, lambda *a: go.append(1))
    print("ready", flush=True)
    while not go:
        time.sleep(0.01)
    work(n)
    print("done", flush=True)
    time.sleep(60)


if __name__ == "__main__":
    main()
