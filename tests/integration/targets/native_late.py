# Libraries loaded while the process is being profiled (suite_native's
# launch-mode test): the libraries given (argv[2:]) are loaded one after
# the other, a quarter of a second apart by the clock, each then spun in
# (native_late_spin) until the next comes; then all of them in turn, until
# the process has used argv[1] seconds of CPU (its own measure, so that a
# loaded machine gives as many samples). Each is new to --native when
# first run: its files were reported before it was mapped.
import ctypes
import sys
import time


def spin(lib, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        lib.native_late_spin(200000)  # marker: late


libs = []
for path in sys.argv[2:]:
    libs.append(ctypes.CDLL(path))
    libs[-1].native_late_spin.argtypes = [ctypes.c_long]
    spin(libs[-1], 0.25)
end = time.process_time() + float(sys.argv[1])
while time.process_time() < end:
    for lib in libs:
        spin(lib, 0.05)
