# What is hot changes: first() spins until the process gets SIGUSR1, then
# second() spins until the process is killed. A live view must put second()
# on top soon after the switch, though first() keeps more samples since the
# start. The test sends the signal, so the switch comes after the view has
# seen first() for as long as it chooses, however slowly the view started.
import signal
import sys
import time

switched = False


def on_usr1(signum, frame):
    global switched
    switched = True


def first():
    while not switched:
        pass


def second():
    while True:
        pass


signal.signal(signal.SIGUSR1, on_usr1)
print("ready", flush=True)
first()
second()
