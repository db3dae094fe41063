# A list comprehension spread over several lines, whose line table steps
# backwards (the loop's test is on an earlier line than its body): for
# suite_peers. Prints "ready", then builds the list over and over.
import sys


def build():
    return [  # COMP-FIRST
        n * n % 7
        for n in range(100000)
        if n % 3
    ]  # COMP-LAST


sys.stdout.write("ready\n")
sys.stdout.flush()
while True:
    build()  # CALL-BUILD
