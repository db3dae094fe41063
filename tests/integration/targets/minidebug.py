# Spins in a shared library given as argument (suite_native crafts it: its
# only symbol for the spinning function is in .gnu_debugdata, the
# xz-compressed mini symbol table Fedora-style builds carry).
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.spin_entry.argtypes = [ctypes.c_long]
lib.spin_entry.restype = ctypes.c_double
print("ready", flush=True)
while True:
    lib.spin_entry(2000000)  # marker: minidebug
