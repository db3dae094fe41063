# --opcodes ground truth. mixed() runs one line of two statements whose
# work is each one instruction running C code for a millisecond or so: a
# membership test that scans a long list (CONTAINS_OP; COMPARE_OP on 3.8)
# and a product of two big ints (BINARY_OP on 3.11+, BINARY_MULTIPLY
# before); everything else on the line takes nanoseconds. timed(), run in
# turn before and after each mixed() call, runs the
# same two statements on lines of their own with thread_time around each,
# and the shares of the two in the totals are the line's known mix, written
# as JSON to the file named by the second argument. adds() runs a line of
# small int additions and floats() one of float additions, which 3.11+
# specialise (BINARY_OP_ADD_INT, BINARY_OP_ADD_FLOAT). Runs for as many
# seconds of CPU time as its first argument says.
import json
import sys
import time

# one object 200000 times: the scan reads a run of pointers to the same
# int, so its speed hardly depends on what other processes leave in the
# caches (a list of 200000 distinct ints, 8 MB, made the scan's share of
# the line swing with the machine's load between the timed and the mixed
# calls)
LIST = [10 ** 6 + 1] * 200000
A = 7 ** 20000
B = 3 ** 30000


def mixed(missing, a, b):
    found = missing in LIST; product = a * b  # noqa: E702  the line under test
    return found, product


def timed(missing, a, b, spent):
    t0 = time.thread_time_ns()
    found = missing in LIST
    t1 = time.thread_time_ns()
    product = a * b
    t2 = time.thread_time_ns()
    spent[0] += t1 - t0
    spent[1] += t2 - t1
    return found, product


def adds(n):
    x = 0
    for i in range(n):
        x = x + i + i + i + i + i + i + i + i  # the int line
    return x


def floats(n):
    x, f = 0.0, 1.5
    for _ in range(n):
        x = x + f + f + f + f + f + f + f + f  # the float line
    return x


def f(x):
    return x


def calls(n):
    y = 0
    for i in range(n):
        y = f(i)  # the call line
    return y


def call_line_names():
    """The (unspecialised) instructions of the call line, as dis reads them."""
    import dis
    want, line, names = calls.__code__.co_firstlineno + 3, None, set()
    for ins in dis.get_instructions(calls):
        if getattr(ins, "line_number", None) is not None:  # 3.13+
            line = ins.line_number
        elif ins.starts_line is not None and not isinstance(ins.starts_line, bool):
            line = ins.starts_line
        if line == want:
            names.add(ins.opname)
    return sorted(names)


def main():
    seconds, out = float(sys.argv[1]), sys.argv[2]
    spent = [0, 0]
    # warm up: 3.11+ specialise an instruction after it ran a few times
    for _ in range(3):
        mixed(-1, A, B)
        adds(1000)
        floats(1000)
        calls(1000)
    print("ready", flush=True)
    # CPU seconds, not wall: as many samples on a loaded machine as on an idle one
    deadline = time.thread_time() + seconds
    first = True
    while time.thread_time() < deadline:
        # in turn first: each sees the caches the other leaves as often
        if first:
            mixed(-1, A, B)
        timed(-1, A, B, spent)
        if not first:
            mixed(-1, A, B)
        first = not first
        # each addition line about as much CPU time as the mixed line
        adds(10000)
        floats(10000)
        calls(20000)
    with open(out, "w") as f:
        json.dump({"contains_ns": spent[0], "multiply_ns": spent[1],
                   "call_line": call_line_names()}, f)


if __name__ == "__main__":
    main()
