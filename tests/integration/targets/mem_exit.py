# Memory freed after the last Python frame: 300 buffers of 1 MiB (each its own
# mmap, above glibc's threshold) stay referenced from a global, so they are
# unmapped during interpreter finalization, when no Python frame exists. Those
# 300 munmap records belong to the memory report's "no Python frame" count,
# not to the CPU samples'.
import sys
import time

keep = [bytearray(1 << 20) for _ in range(300)]
end = time.time() + float(sys.argv[1])
while time.time() < end:
    pass
