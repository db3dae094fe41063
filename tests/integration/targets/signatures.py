# --signatures ground truth: one function, scale(), called in turn with
# arguments of three kinds, each call doing a different amount of work; the
# workload measures the CPU time each kind takes in scale() itself
# (thread_time around the call) and writes the totals, in seconds, as JSON
# to the file named by its second argument; it runs for as many seconds of
# CPU time as its first argument says. With numpy (and not "pure" as
# third argument): an int, a small float32 array and a large float64 array;
# without: an int, a float and a str.
import json
import sys
import time


def scale(x, factor, reps):
    y = None
    for _ in range(reps):
        y = x * factor
    return y


def kinds(pure):
    if not pure:
        try:
            import numpy as np
        except ImportError:
            pure = True
    if pure:
        return [("(x: int, factor: int, reps: int)", 7, 3, 3000),
                ("(x: float, factor: float, reps: int)", 1.5, 2.0, 1500),
                ("(x: str, factor: int, reps: int)", "ab", 40, 2000)]
    return [("(x: int, factor: int, reps: int)", 7, 3, 3000),
            ("(x: ndarray[float32, (10, 10)], factor: float, reps: int)",
             np.ones((10, 10), dtype=np.float32), 2.0, 50),
            ("(x: ndarray[float64, (500, 400)], factor: float, reps: int)",
             np.ones((500, 400), dtype=np.float64), 2.0, 1)]


def main():
    seconds, out = float(sys.argv[1]), sys.argv[2]
    todo = kinds(len(sys.argv) > 3 and sys.argv[3] == "pure")
    spent = {sig: 0 for sig, *_ in todo}
    print("ready", flush=True)
    # CPU seconds, not wall: as many samples on a loaded machine as on an idle one
    deadline = time.thread_time() + seconds
    while time.thread_time() < deadline:
        for sig, x, factor, reps in todo:
            t0 = time.thread_time_ns()
            scale(x, factor, reps)
            spent[sig] += time.thread_time_ns() - t0
    with open(out, "w") as f:
        json.dump({sig: ns / 1e9 for sig, ns in spent.items()}, f)


if __name__ == "__main__":
    main()
