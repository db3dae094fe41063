"""dump --locals against a debugger's view: arguments of every kind, locals
not bound yet, locks held and free, an RLock held twice by a named thread,
a lock another thread waits for, and (where numpy is installed) numpy
scalars. Prints its ground truth as one JSON line ("expect ..."), then
"ready", then sleeps until killed."""
import json
import sys
import threading
import time

try:
    import numpy
except ImportError:
    numpy = None

lock_held = threading.Lock()
lock_free = threading.Lock()
rlock_held = threading.RLock()
rlock_free = threading.RLock()
holding = threading.Event()
truth = {}


def holder(lock, rlock, depth):
    with lock:
        rlock.acquire()
        rlock.acquire()
        truth["holder"] = threading.get_native_id()
        holding.set()
        time.sleep(3600)  # HOLDING


def waiter(lock):
    truth["waiter"] = threading.get_native_id()
    lock.acquire()  # WAITING


def captured(arg, other):
    def inner():
        return arg
    n = len(other)
    time.sleep(3600)  # CAPTURED
    late = n
    return inner, late


def zoo(a, b, /, c, *rest, d, e=5, **kw):
    mine, spare = lock_held, lock_free
    rmine, rspare = rlock_held, rlock_free
    if numpy is not None:
        i8, f64, yes = numpy.int8(-5), numpy.float64(2.5), numpy.bool_(True)
        u16, f32, no = numpy.uint16(65535), numpy.float32(0.1), numpy.bool_(False)
    threading.Thread(target=captured, args=("cell-arg", [1, 2, 3]), name="captor",
                     daemon=True).start()
    print("expect " + json.dumps(truth), flush=True)
    print("ready", flush=True)
    time.sleep(3600)  # ZOO
    later = a
    return later


threading.Thread(target=holder, args=(lock_held, rlock_held, 1), name="holder",
                 daemon=True).start()
holding.wait()
threading.Thread(target=waiter, args=(lock_held,), name="waiter", daemon=True).start()
while "waiter" not in truth:
    time.sleep(0.01)
truth["main"] = threading.get_native_id()
truth["numpy"] = numpy is not None
zoo(1, "two", 3.0, 4, 5, d=None, f=6)
