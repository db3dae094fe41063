# --mem across threads: two threads map, touch and unmap memory with the mmap
# module (one mmap and one munmap each, exact sizes), each on its own lines:
# the "big" thread 3 MiB at a time, the "small" one 1 MiB at a time.
import mmap
import threading
import time

MIB = 1 << 20
PAGE = mmap.PAGESIZE


def big(stop):
    while not stop.is_set():
        m = mmap.mmap(-1, 3 * MIB)  # big map line
        for off in range(0, 3 * MIB, PAGE):
            m[off] = 1  # big touch line
        m.close()  # big unmap line
        time.sleep(0.001)


def small(stop):
    while not stop.is_set():
        m = mmap.mmap(-1, 1 * MIB)  # small map line
        for off in range(0, 1 * MIB, PAGE):
            m[off] = 1  # small touch line
        m.close()  # small unmap line
        time.sleep(0.001)


def main():
    stop = threading.Event()
    threads = [threading.Thread(target=f, args=(stop,), name=f.__name__) for f in (big, small)]
    for t in threads:
        t.start()
    print("ready", flush=True)
    for t in threads:
        t.join()


main()
