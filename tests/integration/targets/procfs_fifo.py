# A hostile target for issue 11 (blocking opens): runs on its own copy of
# the C library (LD_LIBRARY_PATH=WORKDIR), watches WORKDIR with inotify and,
# the first time anyone opens that copy (a profiler attaching to its
# allocator), puts a FIFO at its path. A profiler that opens the library by
# name again (say once per probe) then blocks for ever on the FIFO, waiting
# for a writer that never comes.
#
# Run as: LD_LIBRARY_PATH=WORKDIR python3.11 procfs_fifo.py WORKDIR
import ctypes
import os
import struct
import sys
import threading
import time

IN_OPEN = 0x20
workdir = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
if fd < 0 or libc.inotify_add_watch(fd, workdir.encode(), IN_OPEN) < 0:
    sys.exit(f"inotify: {os.strerror(ctypes.get_errno())}")


def watch():
    while True:
        buf = os.read(fd, 4096)
        while buf:
            _, _, _, n = struct.unpack_from("iIII", buf)
            name = buf[16:16 + n].rstrip(b"\0")
            buf = buf[16 + n:]
            if name == b"libc.so.6":
                path = os.path.join(workdir, "libc.so.6")
                os.rename(path, path + ".moved")
                os.mkfifo(path)
                print("swapped", flush=True)
                return


threading.Thread(target=watch, daemon=True).start()
print("ready", flush=True)


def allocate():
    while True:
        x = [bytes(1000) for _ in range(100)]
        del x
        time.sleep(0.001)


allocate()
