# --mode exception ground truth: a loop that raises and catches an
# exception each round, spends some work inside the except block
# (in_handler(), called from it) and some outside any (outside()), and
# measures with thread_time the CPU time spent between the handler's first
# and last statements. It writes that, and the process's whole CPU time
# (process_time: its start and imports included, as the profiler sees them),
# in nanoseconds as JSON to the file named by its second argument; it runs
# for as many seconds of CPU time as its first argument says.
import json
import sys
import time


def in_handler(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def outside(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def rounds(seconds):
    inside = 0
    deadline = time.thread_time() + seconds
    while time.thread_time() < deadline:
        try:
            raise ValueError("round")
        except ValueError:
            t0 = time.thread_time_ns()
            in_handler(3000)
            inside += time.thread_time_ns() - t0
        outside(7000)
    return inside


def main():
    seconds, out = float(sys.argv[1]), sys.argv[2]
    print("ready", flush=True)
    inside = rounds(seconds)
    with open(out, "w") as f:
        json.dump({"inside_ns": inside, "process_ns": time.process_time_ns()}, f)


if __name__ == "__main__":
    main()
