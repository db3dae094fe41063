# The main thread exits first (pthread_exit, as a C extension or an embedding
# program can do) and a worker thread runs on: the process is alive until its
# last thread exits. On SIGUSR1 the main thread exits; the worker, which spun
# in before() until then, waits until the main thread is a zombie, spends
# argv[1] CPU seconds in after() (code first run with no main thread: it must be
# read through another thread) and returns, which ends the process.
import ctypes
import os
import signal
import sys
import threading
import time

leader_gone = threading.Event()


def leader_is_zombie():
    with open("/proc/self/stat") as f:   # /proc/self: the main thread's entry
        return f.read().rsplit(")", 1)[1].split()[0] == "Z"


def before():
    while not leader_gone.is_set():
        pass


def after(secs):
    # CPU seconds, not wall: on a busy host it still earns secs x rate samples
    end = time.thread_time() + secs
    while time.thread_time() < end:
        pass


def worker():
    before()
    while not leader_is_zombie():
        time.sleep(0.001)
    after(float(sys.argv[1]))


signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
t = threading.Thread(target=worker)
t.start()
print("ready", flush=True)
signal.sigwait({signal.SIGUSR1})
leader_gone.set()
# ctypes releases the GIL around the call, so the worker runs on.
ctypes.CDLL(None).pthread_exit(None)
