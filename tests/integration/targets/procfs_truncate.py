# A hostile target for issue 11 (SIGBUS): maps a file it owns, named like a
# shared libpython (libpython3.11.so), a valid ELF whose .dynsym is large
# (SYMS entries, none of them _PyRuntime), so that reading it takes a while,
# and truncates it to 0 when told to ("t" on stdin) while the profiler reads
# it. A reader that mapped the file gets SIGBUS on its next access.
#
# Run as: ld.so python3.11 procfs_truncate.py WORKDIR   (exe: ld.so, no
# _PyRuntime, so a profiler looks for a mapped libpython3).
import mmap
import os
import struct
import sys

SYMS = 3 << 20                          # 72 MiB of symbols

workdir = sys.argv[1]
path = os.path.join(workdir, "libpython3.11.so")
dynstr = b"\0_PyRuntimX\0"
shstr = b"\0.dynsym\0.dynstr\0.shstrtab\0"
sym = struct.pack("<IBBHQQ", 1, 0x11, 0, 1, 0x1000, 8)   # GLOBAL OBJECT in section 1
dynsym_off = 0x1000
dynstr_off = dynsym_off + SYMS * 24
shstr_off = dynstr_off + len(dynstr)
shoff = (shstr_off + len(shstr) + 7) & ~7


def shdr(name, type_, off, size, link=0, entsize=0):
    return struct.pack("<IIQQQQIIQQ", name, type_, 0, 0, off, size, link, 0, 8, entsize)


ehdr = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + b"\0" * 9, 3, 62, 1, 0, 0,
                   shoff, 0, 64, 56, 0, 64, 4, 3)
with open(path, "wb") as f:
    f.write(ehdr.ljust(dynsym_off, b"\0"))
    f.write(sym * SYMS)
    f.write(dynstr + shstr)
    f.seek(shoff)
    f.write(shdr(0, 0, 0, 0))
    f.write(shdr(1, 11, dynsym_off, SYMS * 24, link=2, entsize=24))   # .dynsym
    f.write(shdr(9, 3, dynstr_off, len(dynstr)))                        # .dynstr
    f.write(shdr(17, 3, shstr_off, len(shstr)))                         # .shstrtab
fd = os.open(path, os.O_RDONLY)
m = mmap.mmap(fd, 4096, prot=mmap.PROT_READ)
print("ready", os.path.getsize(path), flush=True)
for line in sys.stdin:
    if line.strip() == "t":
        os.truncate(path, 0)
        print("truncated", flush=True)
