# A function whose code object claims to come from /dev/zero (co_filename is
# whatever the compiler was told). The report must not try to read it as a
# source file: reading /dev/zero never ends.
import sys

SRC = """
def spin_devzero():
    n = 0
    while True:
        n += 1
"""
exec(compile(SRC, "/dev/zero", "exec"))
print("ready", flush=True)
spin_devzero()
