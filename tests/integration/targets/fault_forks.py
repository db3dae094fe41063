# A fork storm, bounded: after SIGUSR1, forks argv[1] children one after
# another; each runs child_work() briefly and exits 0, and is reaped before
# the next fork. The parent prints how many children exited 0 (all of them
# if nothing harmed them) and the CPU its own loop used.
import os
import signal
import sys
import time


def child_work():
    return sum(i * i for i in range(2000))


def storm(n):
    ok = 0
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            os._exit(0 if child_work() == 2664667000 else 1)
        _, status = os.waitpid(pid, 0)
        ok += os.waitstatus_to_exitcode(status) == 0
    return ok


def main():
    n = int(sys.argv[1])
    go = []
    signal.signal(signal.SIGUSR1, lambda *a: go.append(1))
    print("ready", flush=True)
    while not go:
        time.sleep(0.01)
    t0 = time.monotonic()
    ok = storm(n)
    print(f"done {ok} of {n} in {time.monotonic() - t0:.2f}", flush=True)
    time.sleep(60)


if __name__ == "__main__":
    main()
