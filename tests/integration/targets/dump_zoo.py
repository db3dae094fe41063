# One frame holding every kind of value dump --locals renders, and on its
# stdout ("expect {json}") what the rendering of each must be, worked out here
# from the values themselves (repr, id, len), then "ready".
import json
import sys
import time

try:
    import numpy
except ImportError:
    numpy = None


class Thing:
    pass


def zoo():
    none = None
    yes = True
    no = False
    zero = 0
    small = -123456789
    big = 2 ** 100 + 7
    huge = -(3 ** 2000)
    flt = 2.5
    whole = 3.0
    tiny = 1e-300
    text = "x" * 100
    uni = "\u4e2d\u6587 \U0001F600 \x00'\\"
    raw = b"\x00\xffab'" * 30
    lst = [1, "two", 3.0, None, [4, [5, [6]]], 7, 8]
    tup = (1,)
    emp = ()
    dct = {"a": 1, 2: "b"}
    st = {42}
    fs = frozenset()
    obj = Thing()
    arr = numpy.zeros((500, 400)) if numpy else None
    arr32 = numpy.ones(3, dtype=numpy.float32) if numpy else None
    captured = "in a cell"

    def inner():
        return captured
    expect = {
        "none": "None", "yes": "True", "no": "False", "zero": "0", "small": repr(small),
        "big": repr(big), "huge": "-1.747871e+954 (%d bits)" % huge.bit_length(),
        "flt": repr(flt), "whole": repr(whole), "tiny": repr(tiny),
        "text": "'%s'... (100 chars)" % ("x" * 80),
        "uni": "'\u4e2d\u6587 \U0001F600 \\x00\\'\\\\'",
        "raw": "b'%s'... (150 bytes)" % ("\\x00\\xffab\\'" * 16),
        "lst": "[1, 'two', 3.0, None, [4, <list len 2>], ...] (len 7)",
        "tup": "(1,)", "emp": "()", "dct": "{'a': 1, 2: 'b'}", "st": "{42}",
        "fs": "frozenset()", "obj": "<Thing at %#x>" % id(obj),
        "arr": "ndarray[float64, (500, 400)]" if numpy else "None",
        "arr32": "ndarray[float32, (3,)]" if numpy else "None",
        "inner": "<function at %#x>" % id(inner),
    }
    # a closure's variable sits in the frame as its cell: shown as what it holds
    expect["captured"] = "'in a cell'"
    sys.stdout.write("expect %s\n" % json.dumps(expect))
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    time.sleep(600)


zoo()
