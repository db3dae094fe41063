# --mem's retained memory by age, ground truth: once told to (SIGUSR1, when
# the profiler is attached), every round keeps 5 MiB (keep line), builds a
# 200 MiB temporary (temp line), holds it 3 s, drops it and rests 0.5 s.
# Both sizes are above glibc's mmap threshold: each object is one mmap (the
# dropped one one munmap). Every round prints its own times
# (time.monotonic_ns: the kernel's monotonic clock, the profiler's too):
# "holding K0 K1 T1" once the temporary is built (K0-K1 around the keep's
# build, K1-T1 around the temporary's), "dropped D0 D1" around the drop.
import signal
import time

MIB = 1 << 20


def main():
    kept = []
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    print("ready", flush=True)
    signal.sigwait({signal.SIGUSR1})
    while True:
        k0 = time.monotonic_ns()
        kept.append(b"\x02" * (5 * MIB))  # keep line
        k1 = time.monotonic_ns()
        temp = b"\x01" * (200 * MIB)  # temp line
        t1 = time.monotonic_ns()
        print(f"holding {k0} {k1} {t1}", flush=True)
        time.sleep(3)
        d0 = time.monotonic_ns()
        del temp
        print(f"dropped {d0} {time.monotonic_ns()}", flush=True)
        time.sleep(0.5)


main()
