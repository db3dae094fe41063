# SPDX-License-Identifier: GPL-2.0-only
"""Workloads of bench/peers, run under every profiler (standard library only,
CPython 3.9 and later, so that the same file runs on the host and in the
Debian roots).

    peers_workload.py cpu SCALE     mixed CPU work, 3 parts major(), 1 part minor()
    peers_workload.py calls N       N calls of a tiny function
    peers_workload.py mem N         allocation churn with one line that keeps growing
    peers_workload.py chains N      N times a() -> b() -> c() then x() -> y() -> z()
    peers_workload.py pstats FILE   a cProfile/yappi pstats file as JSON (parsing helper)
    peers_workload.py lprof FILE    a line_profiler .lprof file as JSON (parsing helper)
    peers_workload.py memray FILE   memray's high-water-mark records as JSON (parsing helper)

With PEERS_WAIT=1 in its environment, a workload prints "ready" on stdout
and waits for a line on stdin before it starts (for profilers given a pid),
and after its result line waits for another (or EOF) before it exits, so
that the profiler can be stopped while the process is alive.

A workload times its own work with time.perf_counter() (the profilers' start
and exit are not in it) and ends with one line on stderr:
"PEERS_RESULT {json}": elapsed and CPU seconds, a checksum, its peak RSS, and
for cpu the truth of the split: the thread CPU time spent inside major() and
minor(), measured with time.thread_time() around every call. The helpers run
in the interpreter that wrote the file (pstats and pickles are
version-specific) and print JSON on stdout.
"""
import builtins
import json
import os
import resource
import sys
import time

# kernprof -l puts its LineProfiler in builtins as `profile`; anywhere else
# (scalene too has a builtin `profile`, which would narrow what it reports to
# the decorated functions) the decorator is the identity.
profile = getattr(builtins, "profile", None)
if "line_profiler" not in type(profile).__module__:
    profile = lambda f: f  # noqa: E731


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def norm2(self):
        return self.x * self.x + self.y * self.y


def shapes(n):
    pts = [Point(i % 17, i % 23) for i in range(n)]
    by = {}
    for p in pts:
        by.setdefault(p.norm2() % 31, []).append(p)
    return sum(len(v) for v in by.values())


def words(n):
    parts = []
    for i in range(n):
        parts.append("w%d" % (i * 7 % 1000))
    text = " ".join(parts)
    counts = {}
    for w in text.split():
        counts[w] = counts.get(w, 0) + 1
    return len(counts)


@profile
def major(k):
    acc = 0
    for _ in range(k):
        acc += fib(17)
        acc += shapes(1500)
        acc += words(3000)
    return acc


@profile
def minor(k):
    b_list = list(range(0, 600, 3))
    common = 0
    for _ in range(k):
        for x in range(0, 600, 2):
            if x in b_list:  # PEERS_HOT_LINE membership
                common += 1
    return common


def cpu(scale):
    truth = {"major": 0.0, "minor": 0.0}
    acc = 0
    for _ in range(scale):
        t = time.thread_time()
        acc += major(6)
        m = time.thread_time()
        acc += minor(12)
        e = time.thread_time()
        truth["major"] += m - t
        truth["minor"] += e - m
    return acc, {"truth": truth}


def tiny(x):
    return x + 1


def calls(n):
    acc = 0
    for i in range(n):
        acc = tiny(acc)
    return acc, {"calls": n}


def churn(i):
    small = [(j, str(j)) for j in range(3000)]
    heap = [bytearray(4096 << (j % 4)) for j in range(40)]
    big = bytearray(b"\x05") * (512 * 1024)
    return len(small) + len(heap) + len(big)


KEEP = []  # what mem() grows stays referenced until the process exits, as a leak does


def mem(n):
    acc = 0
    for i in range(n):
        acc += churn(i)
        KEEP.append(b"\x01" * (128 * 1024))  # PEERS_GROWING_LINE
    return acc + len(KEEP), {"kept_bytes": len(KEEP) * 128 * 1024}


# Two call chains that alternate quickly, for the stacks a sampler reports
# that never happened. Both chains have the same shape (same code, same frame
# sizes), so that each frame of one is pushed at the address the other's frame
# of the same depth just left: a sampler that reads the stack while the thread
# runs, or keeps frames it read before, can put the frames of one chain under
# the other's. The leaf does a little work, so that the thread is seen in both
# chains' leaves more often than between them.
CHAIN_WORK = 5


def c(k):
    s = 0
    for i in range(k):
        s += i
    return s


def b(k):
    return c(k) + 1


def a(k):
    return b(k) + 1


def z(k):
    s = 0
    for i in range(k):
        s += i
    return s


def y(k):
    return z(k) + 1


def x(k):
    return y(k) + 1


def chains(n):
    acc = 0
    for _ in range(n):
        acc += a(CHAIN_WORK)
        acc += x(CHAIN_WORK)
    return acc, {"chain_calls": 2 * n}


def marked_line(tag):
    with open(__file__) as f:
        for no, text in enumerate(f, 1):
            if "# " + tag in text:
                return no
    return -1


def helper(kind, path):
    if kind == "pstats":
        import pstats
        st = pstats.Stats(path).stats
        out = [[fn[0], fn[1], fn[2], v[1], v[2], v[3]] for fn, v in st.items()]
    elif kind == "lprof":
        import pickle
        with open(path, "rb") as f:
            st = pickle.load(f)
        unit = st.unit
        out = []
        for (fname, first, func), lines in st.timings.items():
            for no, hits, t in lines:
                out.append([fname, func, no, hits, t * unit])
    else:
        import memray
        rd = memray.FileReader(path)
        out = []
        for r in rd.get_high_watermark_allocation_records(merge_threads=True):
            out.append([r.size, r.n_allocations, [list(f) for f in r.stack_trace()]])
    json.dump(out, sys.stdout)


def main():
    kind = sys.argv[1]
    if kind in ("pstats", "lprof", "memray"):
        return helper(kind, sys.argv[2])
    n = int(sys.argv[2])
    work = {"cpu": cpu, "calls": calls, "mem": mem, "chains": chains}[kind]
    if os.environ.get("PEERS_WAIT") == "1":
        # attach mode: a profiler is given this pid, then "go" comes
        print("ready", flush=True)
        sys.stdin.readline()
    t0, c0 = time.perf_counter(), time.process_time()
    acc, extra = work(n)
    elapsed, cpu_s = time.perf_counter() - t0, time.process_time() - c0
    res = {"elapsed": elapsed, "cpu": cpu_s, "checksum": acc,
           "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
           "hot_line": marked_line("PEERS_HOT_LINE"),
           "growing_line": marked_line("PEERS_GROWING_LINE")}
    res.update(extra)
    sys.stderr.write("PEERS_RESULT " + json.dumps(res) + "\n")
    sys.stderr.flush()
    if os.environ.get("PEERS_WAIT") == "1":
        sys.stdin.readline()  # alive (KEEP held) until the profiler has stopped


if __name__ == "__main__":
    main()
