"""dump --locals against classes posing as the kinds it reads by value: a
class named "_thread.lock", one named "numpy.int8" and one named
"_thread.RLock", each holding bytes where the real type keeps its state.
They are shown as objects, never read as what they pose as. Prints
"ready", then waits to be killed."""
import threading
import time

Lock = type("_thread.lock", (), {"__slots__": ("state",)})
Int8 = type("numpy.int8", (), {"__slots__": ("value",)})
RLock = type("_thread.RLock", (), {"__slots__": ("owner", "count", "more")})


def hold(fake_lock, fake_int8, fake_rlock, real):
    time.sleep(3600)  # IMPOSTORS


a = Lock()
a.state = 1
b = Int8()
b.value = -5
c = RLock()
c.owner, c.count, c.more = 1, 2, 3
d = threading.Lock()
d.acquire()
print("ready", flush=True)
hold(a, b, c, d)
