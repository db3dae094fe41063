# For --gil in launch mode: from its first bytecode the program computes,
# in the main thread and in a second one that it starts at once, until each
# has used 0.5 s of CPU (time.thread_time, its own measure), then exits.
# Every CPU sample of both, the interpreter's start-up included, has a GIL
# state to classify.
import threading
import time


def spin():
    end = time.thread_time() + 0.5
    x = 0
    while time.thread_time() < end:
        x += 1


t = threading.Thread(target=spin)
t.start()
spin()
t.join()
