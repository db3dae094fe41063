# Ground truth for the Python / native / system split: three functions, each
# spending its time in one place, called in turn for about 50 ms each.
#
#   python_loop(): bytecode only (the interpreter's own code)
#   compress():    zlib.compress of incompressible bytes (libz's deflate)
#   pipe_io():     os.write and os.read of 64 KiB on a pipe (the kernel copies)
#
# With "fft" as argument, numpy's np.fft.fft2 on a 512x512 array instead
# (numpy's pocketfft C code). The test compares the process's kernel share
# with the kernel's own accounting (/proc/PID/stat).
import os
import sys
import zlib

DATA = os.urandom(1 << 18)
BUF = b"x" * 65536
R, W = os.pipe()


def python_loop():
    s = 0
    for i in range(150000):
        s += i * i  # marker: python
    return s


def compress():
    return zlib.compress(DATA, 6)  # marker: native


def pipe_io():
    for _ in range(300):
        os.write(W, BUF)
        os.read(R, 65536)  # marker: system


def fft():
    import numpy as np

    a = np.random.default_rng(1).random((512, 512))
    for _ in range(4):
        np.fft.fft2(a)  # marker: fft


funcs = [fft] if sys.argv[1:] == ["fft"] else [python_loop, compress, pipe_io]
for f in funcs:
    f()
print("ready", flush=True)
while True:
    for f in funcs:
        f()
