# A library loaded after the process's first unwind (suite_native's
# launch-mode test): native code runs first (zlib, so that --native unwinds
# the process and reports its files), then the library given as argv[1] is
# loaded and its native_late_spin run until the process has used argv[2]
# seconds of CPU (its own measure, so a loaded machine gives as many samples).
import ctypes
import sys
import time
import zlib

end = time.process_time() + 0.2
while time.process_time() < end:
    zlib.compress(bytes(1 << 16), 9)
lib = ctypes.CDLL(sys.argv[1])
lib.native_late_spin.argtypes = [ctypes.c_long]
end = time.process_time() + float(sys.argv[2])
while time.process_time() < end:
    lib.native_late_spin(1000000)  # marker: late
