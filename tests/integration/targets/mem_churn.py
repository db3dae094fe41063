# --mem ground truth for memory given back: each round maps 48 MiB with the
# mmap module (one mmap, exactly 48 MiB), touches every page, and unmaps it;
# then builds 200 blocks of 100 kB (below glibc's mmap threshold, so the heap
# grows by brk) and drops them (the heap's top is trimmed by brk). Over whole
# rounds mapped and unmapped balance: net growth ~0.
import mmap

MIB = 1 << 20
PAGE = mmap.PAGESIZE


def mapped():
    m = mmap.mmap(-1, 48 * MIB)  # map line
    for off in range(0, 48 * MIB, PAGE):
        m[off] = 1  # touch line
    m.close()  # unmap line


def heap():
    blocks = [b"\x05" * 100_000 for _ in range(200)]  # heap line
    del blocks  # free line


def main():
    print("ready", flush=True)
    while True:
        mapped()
        heap()


main()
