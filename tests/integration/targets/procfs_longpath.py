# A hostile target for issue 11 (maps lines of any length): maps a file
# whose path is longer than a 4 KiB line buffer, so that a reader that cuts
# /proc/PID/maps lines at 4224 bytes (PATH_MAX + 128) parses the path's tail
# as a line of its own. The tail is chosen to look like a libpython3.11.so
# mapping whose range is our interpreter's first mapping.
#
# Run as: ld.so python3.11 procfs_longpath.py WORKDIR   (exe: ld.so, no
# _PyRuntime, so a profiler looks for a mapped libpython3). Prints
# "ready LINELEN CUT" once mapped, then waits for stdin to close.
import mmap
import os
import sys

SPLIT = 4223          # what fgets(buf, PATH_MAX + 128) returns of a longer line
PATH_COLUMN = 73      # the kernel pads the fields before a path to this column

workdir = sys.argv[1]
first = None
with open("/proc/self/maps") as f:
    for line in f:
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[5].strip().endswith("/python3.11") and fields[2] == "00000000":
            first = fields
            break
if first is None:
    sys.exit("no python3.11 mapping at offset 0 in our maps")
forged = f"{first[0]} r--p 00000000 {first[3]} {first[4]} "

# Fill the path with directories so that the forged text starts exactly at
# the cut: prefix + fill + forged + "/libpython3.11.so".
prefix = workdir + "/"
fill = SPLIT - PATH_COLUMN - len(prefix)
parts = []
while fill > 0:
    n = min(200, fill)
    if fill - n == 1:          # no room for a one-byte part ("/" alone)
        n -= 1
    parts.append("x" * (n - 1))
    fill -= n
fd = os.open(workdir, os.O_DIRECTORY)
for name in parts + [forged]:
    os.mkdir(name, dir_fd=fd)
    nfd = os.open(name, os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    fd = nfd
lib = os.open("libpython3.11.so", os.O_CREAT | os.O_RDWR, 0o600, dir_fd=fd)
os.write(lib, b"\0" * 4096)
m = mmap.mmap(lib, 4096, prot=mmap.PROT_READ)

# Where a 4224-byte line buffer cuts our line, as a check that the setup works.
with open("/proc/self/maps") as f:
    for line in f:
        if line.rstrip("\n").endswith("/libpython3.11.so") and len(line) > SPLIT:
            print("ready", len(line), line[SPLIT:].strip(), flush=True)
            break
    else:
        sys.exit("the long mapping is not in our maps")
sys.stdin.read()
