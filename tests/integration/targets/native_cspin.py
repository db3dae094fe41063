# Spins in a C function of a shared library that suite_native crafts and
# hands in (argv[1] the library, argv[2] the function, which takes a count):
# unwind tables made hostile, or a loop through a PLT stub.
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
spin = getattr(lib, sys.argv[2])
spin.argtypes = [ctypes.c_long]
spin.restype = ctypes.c_long
print("ready", flush=True)
while True:
    spin(5000000)  # marker: cspin
