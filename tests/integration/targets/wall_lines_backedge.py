# A loop whose closing jump has no line on CPython 3.10 (JUMP_ABSOLUTE) and
# 3.11 (JUMP_BACKWARD): a for loop whose body ends with an if. The compiler
# of 3.12+ gives that jump the line of the instruction before it (CPython
# gh-107901); 3.10 and 3.11 leave it none (frame.f_lineno is None there).
# Before "ready" it prints "unlined JSON": the byte offsets of spin()'s
# instructions without a line (co_lines, its own answer) and, for each, the
# line of the instruction before it; then it spins for good.
import dis
import itertools
import json


def spin():
    x = 0
    for i in itertools.count():
        if i & 1:
            x += 1


def unlined(code):
    lines = {}
    for start, end, line in code.co_lines():
        for off in range(start, end, 2):
            lines[off] = line
    out, last = [], code.co_firstlineno
    for ins in dis.get_instructions(code):
        line = lines.get(ins.offset)
        if line is None:
            out.append([ins.offset, ins.opname, last])
        else:
            last = line
    return out


print("unlined " + json.dumps(unlined(spin.__code__)), flush=True)
print("ready", flush=True)
spin()
