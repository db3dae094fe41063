# A library loaded after the process's first unwind (suite_native's
# launch-mode test): native code runs first (zlib, so that --native unwinds
# the process and reports its files), then the library given as argv[1] is
# loaded and its native_late_spin run for argv[2] seconds of our own clock.
import ctypes
import sys
import time
import zlib

end = time.monotonic() + 0.2
while time.monotonic() < end:
    zlib.compress(bytes(1 << 16), 9)
lib = ctypes.CDLL(sys.argv[1])
lib.native_late_spin.argtypes = [ctypes.c_long]
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    lib.native_late_spin(1000000)  # marker: late
