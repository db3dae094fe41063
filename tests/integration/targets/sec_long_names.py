# Eight busy functions with 2000-character qualnames: an ordinary target whose
# report is large (over 16 KiB of JSON), so that writing it to a pipe nobody
# reads blocks pybpfprof (the second-signal tests).
import sys


def spin(n):
    x = 0
    while n:
        n -= 1
        x = (x * 31 + 7) % 1000003
    return x


funcs = []
for k in range(8):
    name = "long_%d_" % k + "x" * 2000
    funcs.append(type(spin)(spin.__code__.replace(co_name=name, co_qualname=name), globals()))
print("ready", flush=True)
while True:
    for f in funcs:
        f(20000)
