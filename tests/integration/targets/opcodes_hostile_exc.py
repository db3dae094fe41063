# A hostile target for the exception state read (Debian's 3.11 only: its
# PyThreadState.exc_info is at 120, an item is (exc_value, previous_item)):
# it makes the top item of its own exception stack hold None and point to
# itself as the item below, a chain without end, then spins for as many
# seconds of CPU time as its first argument says, never asking for its
# exception state (sys.exc_info() would walk the loop forever), and puts the
# item back before it exits.
import ctypes
import sys
import time

get = ctypes.pythonapi.PyThreadState_Get
get.restype = ctypes.c_void_p
item = (ctypes.c_void_p * 2).from_address(ctypes.c_void_p.from_address(get() + 120).value)
saved = item[1]
item[1] = ctypes.addressof(item)
print("ready", flush=True)
deadline = time.thread_time() + float(sys.argv[1])
x = 0
while time.thread_time() < deadline:
    for i in range(10000):
        x += i
item[1] = saved
