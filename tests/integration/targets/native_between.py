# Native code between Python frames: libc's qsort, called through ctypes
# (libffi), calls back into compare(), a Python function; so compare's
# samples have qsort's and libffi's frames between it and the line that
# called qsort. sorted()'s key calls back into slow_key() through the
# interpreter's own code only: nothing native between those two.
import ctypes
import ctypes.util

libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
CMP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))


def compare(a, b):
    x, y = a[0], b[0]
    s = 0
    for i in range(300):
        s += i  # marker: compare
    return (x > y) - (x < y)


CALLBACK = CMP(compare)


def sort_with_qsort(n):
    arr = (ctypes.c_int * n)(*range(n, 0, -1))
    libc.qsort(arr, n, ctypes.sizeof(ctypes.c_int), CALLBACK)  # marker: qsort
    return arr[0]


def slow_key(x):
    s = 0
    for i in range(300):
        s += i  # marker: key
    return -x


def sort_with_sorted(n):
    return sorted(range(n), key=slow_key)  # marker: sorted


sort_with_qsort(50)
print("ready", flush=True)
while True:
    sort_with_qsort(200)
    sort_with_sorted(400)
