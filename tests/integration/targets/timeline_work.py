# Ground truth for the timeline (suite_timeline.py): threads that compute,
# sleep 200 ms, wait on a lock another thread holds for 300 ms, and wait on
# a pipe until the main thread writes it; the main thread collects garbage,
# imports a module that imports another, and forks a child that execs
# timeline_child.py. Each thread names itself (prctl) and every step is
# stamped with time.monotonic_ns(), the kernel's CLOCK_MONOTONIC, before and
# after, and written as JSON to argv[1] at the end; the test places the
# trace's slices between these stamps. Lines are found by their markers.
import ctypes
import gc
import json
import os
import sys
import threading
import time

LIBC = ctypes.CDLL(None, use_errno=True)
PR_SET_NAME = 15
marks = {"pid": os.getpid()}
lock = threading.Lock()


def now():
    return time.monotonic_ns()


def named(name):
    """This thread's name as the kernel and pybpfprof see it, and its tid."""
    LIBC.prctl(PR_SET_NAME, name.encode(), 0, 0, 0)
    marks[name] = threading.get_native_id()


def compute(n):
    x = 0
    for i in range(n):
        x += i * i  # timeline: compute
    return x


def computer(stop):
    named("tl-compute")
    cpu0 = time.thread_time_ns()
    marks["compute_start"] = now()
    while not stop.is_set():
        compute(20000)
    marks["compute_end"] = now()
    marks["compute_cpu_ns"] = time.thread_time_ns() - cpu0


def sleeper():
    named("tl-sleeper")
    compute(50000)  # seen running before it sleeps
    marks["sleep_before"] = now()
    time.sleep(0.2)  # timeline: sleep
    marks["sleep_after"] = now()


def holder(held, waiting):
    named("tl-holder")
    with lock:
        held.set()
        waiting.wait()  # the waiter is about to block: it has 300 ms to
        marks["hold_before"] = now()
        time.sleep(0.3)  # timeline: holding
        marks["release_before"] = now()


def waiter(held, waiting):
    named("tl-waiter")
    compute(50000)
    held.wait()
    marks["lock_before"] = now()
    waiting.set()
    lock.acquire()  # timeline: lock
    marks["lock_after"] = now()
    lock.release()


def reader(fd):
    named("tl-reader")
    compute(50000)
    marks["read_before"] = now()
    os.read(fd, 1)  # timeline: io
    marks["read_after"] = now()


def blocked_in_read(tid):
    """The thread is blocked in read(2) (x86_64 syscall 0), as /proc says:
    the pipe is written only then, however late a loaded machine ran it."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/self/task/{tid}/syscall") as f:
                if f.read().split()[0] == "0":
                    return
        except (OSError, IndexError):
            pass
        time.sleep(0.005)
    raise SystemExit("the reader never blocked in read()")


def fork_exec(out):
    marks["fork_before"] = now()
    pid = os.fork()
    if pid == 0:
        child = os.path.join(os.path.dirname(os.path.abspath(__file__)), "timeline_child.py")
        os.execv(sys.executable, [sys.executable, child, out + ".child"])
    marks["fork_after"] = now()
    marks["child_pid"] = pid
    return pid


def main():
    out = sys.argv[1]
    stop, held, waiting = threading.Event(), threading.Event(), threading.Event()
    rfd, wfd = os.pipe()
    threads = [threading.Thread(target=f, args=a) for f, a in
               ((sleeper, ()), (holder, (held, waiting)), (waiter, (held, waiting)),
                (reader, (rfd,)))]
    busy = threading.Thread(target=computer, args=(stop,))
    busy.start()
    for t in threads:
        t.start()
    marks["gc_before"] = now()
    gc.collect()  # timeline: gc
    marks["gc_after"] = now()
    marks["import_before"] = now()
    import timeline_work_mod  # timeline: import
    marks["import_after"] = now()
    marks["module_marks"] = timeline_work_mod.marks
    child = fork_exec(out)
    time.sleep(0.15)
    blocked_in_read(threads[3].native_id)
    marks["write_before"] = now()
    os.write(wfd, b"x")
    for t in threads:
        t.join()
    os.waitpid(child, 0)
    marks["child_reaped"] = now()
    time.sleep(0.2)  # the computer's last samples
    stop.set()
    busy.join()
    marks["end"] = now()
    with open(out, "w") as f:
        json.dump(marks, f)


if __name__ == "__main__":
    main()
