# Free-threaded CPython (3.13t, 3.14t: no GIL, a larger object header, in
# 3.14t thread-local bytecode), built from Debian's sources by
# tests/build-pythons.sh inside the trixie and forky roots and run chrooted
# there. The same ground truths as for the GIL builds (suite_cpu's split and
# hot line, suite_usdt's collections and imports, suite_mem's allocating
# line), and one only a free-threaded build has: four threads running Python
# at the same time, each charged its own CPU.

from harness import (BUILDS, CpuMeter, DEBIAN_ROOTS, Interp, Skip, TESTS, Workloads, check,
                     expect_error, functions, profile_json, process, read_stdout_until,
                     source_line)
from suite_cpu import check_hotline, check_split
from suite_mem import mem_line, mem_section
from suite_usdt import usdt_gc, usdt_imports

import os
import signal

# Where tests/build-pythons.sh installs them, inside their roots.
FT_BUILDS = {
    "trixie313t": Interp("/opt/pybpfprof/3.13t/bin/python3.13t", DEBIAN_ROOTS / "trixie",
                         how="tests/build-pythons.sh 3.13t builds it"),
    "forky314t": Interp("/opt/pybpfprof/3.14t/bin/python3.14t", DEBIAN_ROOTS / "forky",
                        how="tests/build-pythons.sh 3.14t builds it"),
}
SPINNERS = ("spin_a", "spin_b", "spin_c", "spin_d")


def ft_interp(build):
    py = FT_BUILDS[build]
    why = py.missing()
    if why:
        raise Skip(why)
    return py


def ft_test(fn, builds=tuple(FT_BUILDS)):
    """One test per free-threaded build, named e.g. ft_parallel_forky314t;
    split and hotline are named as suite_cpu's (split_forky314t), so that
    `make check-matrix` ('split_*', 'hotline_*') runs them too."""
    for build in builds:
        def bound(build=build):
            return fn(ft_interp(build))
        TESTS.append((f"{fn.__name__}_{build}", bound))
    return fn


@ft_test
def split(py):
    return check_split(py, suffix="t")


@ft_test
def hotline(py):
    return check_hotline(py)


def parallel_spent(p):
    """ft_parallel.py's own measure of each spinner's thread CPU time (ns)."""
    os.kill(p.pid, signal.SIGUSR1)
    buf = read_stdout_until(p, lambda buf: buf.endswith(b"\n"), "answering SIGUSR1")
    words = buf.decode().split()
    check(len(words) == 5 and words[0] == "cpu", f"ft_parallel.py answered {buf!r}")
    return [int(w) for w in words[1:]]


@ft_test
def ft_parallel(py):
    """Four threads spinning at once in four functions: each gets its share
    (within 5pp of 25%, and within 3pp of what it measured of its own CPU
    time), its samples land on its membership line (>= 85%: in 3.14t three
    of them run thread-local copies of the bytecode), and the process's
    samples follow the CPU it got, uncapped: when it got more than 1.2 CPUs,
    they stand for more than one."""
    freq, secs = 999, 4
    with Workloads() as wl:
        p = wl.start(py, "ft_parallel.py")
        before = parallel_spent(p)
        with CpuMeter(p.pid) as cpu:
            rep = profile_json([p.pid], secs, freq)
        after = parallel_spent(p)
    proc = process(rep, p.pid)
    n = proc["samples"]
    expect = cpu.check_samples(n, freq, rep["duration_s"])
    fns = functions(proc)
    selfs = [fns.get(f, {}).get("self", 0) for f in SPINNERS]
    total = sum(selfs)
    check(total >= 0.95 * n, f"the spinners hold {total} of {n} samples: {fns.keys()}")
    spent = [a - b for a, b in zip(after, before)]
    shares, truths = [s / total for s in selfs], [s / sum(spent) for s in spent]
    for name, share, truth in zip(SPINNERS, shares, truths):
        check(abs(share - 0.25) <= 0.05 and abs(share - truth) <= 0.03,
              f"{name} has {share:.1%} of the spinners' samples; it measured {truth:.1%} of "
              f"their CPU time, designed 25%: expected +- 3pp of the first, 5pp of 25% "
              f"(shares {[f'{s:.1%}' for s in shares]})")
    for name, own in zip(SPINNERS, selfs):
        line, _ = source_line("ft_parallel.py", f"# membership {name[-1]}")
        member = sum(ln["self"] for ln in proc["lines"]
                     if ln["qualname"] == name and ln["line"] == line)
        check(member >= 0.85 * own, f"{name}: membership line {line} has {member} of its "
              f"{own} samples; lines {[ln for ln in proc['lines'] if ln['qualname'] == name]}")
    got = expect / (freq * rep["duration_s"])
    sampled = n / (freq * rep["duration_s"])
    if got >= 1.2:
        check(sampled > 1.0, f"the process got {got:.2f} CPUs, its samples stand for "
              f"{sampled:.2f}: capped at one CPU?")
    return (f"shares {', '.join(f'{s:.1%}' for s in shares)} (measured "
            f"{', '.join(f'{t:.1%}' for t in truths)}); {n} samples = {sampled:.2f} CPUs, "
            f"the process got {got:.2f}")


def as_build(py, check_fn):
    """Runs suite_usdt's check_fn(build) on py, which the harness does not
    list: known under its name for the call only."""
    name = next(n for n, b in FT_BUILDS.items() if b is py)
    BUILDS[name] = py
    try:
        return check_fn(name)
    finally:
        del BUILDS[name]


@ft_test
def ft_gc(py):
    return as_build(py, usdt_gc)


@ft_test
def ft_imports(py):
    return as_build(py, usdt_imports)


def ft_mem(py):
    """--mem names the allocating line: mem_grow.py's 200 MiB line touches
    the most memory (mimalloc, not glibc, allocates it in these builds, so
    suite_mem's exact mmap sizes do not apply)."""
    big_n, _ = source_line("mem_grow.py", "# big line")
    with Workloads() as wl:
        p = wl.start(py, "mem_grow.py")
        rep = profile_json([p.pid], 4, 99, ["--mem"])
    mem = mem_section(rep, p.pid)
    path = py.script_path("mem_grow.py")
    big = mem_line(mem, path, big_n)
    top = max(mem["lines"], key=lambda ln: ln["touched"], default=None)
    check(top and top["file"] == path and top["line"] == big_n,
          f"the line touching the most memory is {top}, not mem_grow.py:{big_n}")
    check(big["touched"] >= 0.5 * mem["touched"],
          f"the big line touched {big['touched']} of {mem['touched']} bytes")
    return (f"big line touched {big['touched'] >> 20} MiB of {mem['touched'] >> 20} MiB, "
            f"mapped {big['mapped'] >> 20} MiB")


ft_test(ft_mem)


@ft_test
def ft_flag_lies(py):
    """A free-threaded process whose _Py_DebugOffsets says it is a default
    build (free_threaded := 0, sec_off_corrupt.py): its 32-byte object
    header contradicts that, and it is refused naming the field, not read
    with the default build's offsets."""
    with Workloads() as wl:
        p = wl.start(py, "sec_off_corrupt.py", "debug", "free_threaded", "0")
        msg, _ = expect_error(["-p", p.pid, "-d", 2, "-F", 99],
                              [f"pid {p.pid}", "publishes an inconsistent _Py_DebugOffsets",
                               "pyobject.ob_type = 0x18", "refusing it"], timeout=30)
        check(p.poll() is None, f"the target died ({p.returncode})")
    return msg
