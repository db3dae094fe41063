"""dump --native: threads waiting in C calls, each with its own native
stack. "nap" sleeps in time.sleep (libc's clock_nanosleep or select);
"reader" waits in a socket's recv; "sorter" waits inside a Python
comparison that libc's qsort, called through ctypes, called back (native
frames between two Python frames); a thread started by pthread_create
itself runs no Python at all and waits in pause(); "spinner" runs Python
without a pause. Prints "tids NAME=TID ...", then "ready", then waits to
be killed."""
import ctypes
import ctypes.util
import socket
import threading
import time

libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
CMP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
tids = {}


def nap():
    tids["nap"] = threading.get_native_id()
    time.sleep(3600)  # NAP


def read_one(sock):
    tids["reader"] = threading.get_native_id()
    sock.recv(1)  # RECV


def compare(a, b):
    time.sleep(3600)  # COMPARE
    return 0


CALLBACK = CMP(compare)


def sort_with_qsort():
    tids["sorter"] = threading.get_native_id()
    arr = (ctypes.c_int * 4)(4, 3, 2, 1)
    libc.qsort(arr, 4, ctypes.sizeof(ctypes.c_int), CALLBACK)  # QSORT


def spin():
    tids["spinner"] = threading.get_native_id()
    n = 0
    while True:
        n += 1  # SPIN


def c_thread():
    """A thread of the C library's own, with no Python thread state, in
    pause(): its id from glibc's struct pthread (tid at 0x2d0 on x86_64),
    as a chroot may have no /proc."""
    handle = ctypes.c_ulong()
    # the process's own symbols: before glibc 2.34 pthread_create is libpthread's
    create = ctypes.CDLL(None).pthread_create
    create.argtypes = [ctypes.POINTER(ctypes.c_ulong), ctypes.c_void_p, ctypes.c_void_p,
                       ctypes.c_void_p]
    pause = ctypes.cast(libc.pause, ctypes.c_void_p)
    if create(ctypes.byref(handle), None, pause, None):
        raise SystemExit("pthread_create failed")
    tid = ctypes.c_int.from_address(handle.value + 0x2D0)
    deadline = time.monotonic() + 10
    while not tid.value and time.monotonic() < deadline:
        time.sleep(0.01)
    return tid.value


a, b = socket.socketpair()
for target, args in ((nap, ()), (read_one, (a,)), (sort_with_qsort, ()), (spin, ())):
    threading.Thread(target=target, args=args, name=target.__name__, daemon=True).start()
tids["c"] = c_thread()
while len(tids) < 5:
    time.sleep(0.01)
print("tids " + " ".join(f"{k}={v}" for k, v in sorted(tids.items())), flush=True)
print("ready", flush=True)
time.sleep(3600)  # MAIN
