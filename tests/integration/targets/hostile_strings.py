# Every string a report shows from this process carries terminal escape
# sequences: its comm, its command line (the test passes one as argv[1]), a
# function's qualname, a file name, and the text of the hot line itself. A
# report printed to a terminal must not clear the screen or set its title.
import os
import sys
import tempfile

ESC = "\x1b"
with open("/proc/self/comm", "w") as f:
    f.write("py" + ESC + "[2J")

# The hot line's source holds a raw ESC inside a string literal.
src_dir = tempfile.mkdtemp(prefix="pybpfprof-hostile-")
path = os.path.join(src_dir, "hostile_src.py")
with open(path, "w") as f:
    f.write("def spin_src(n):\n"
            "    while n:\n"
            f"        n -= len('{ESC}]0;pwned{chr(7)}')\n")
exec(compile(open(path).read(), path, "exec"))

# A qualname and a file name with escapes (co_qualname exists from 3.11).
exec(compile("def spin_name(n):\n    while n:\n        n -= 1\n",
             "/nonexistent/" + ESC + "[31mred.py", "exec"))
spin_name.__code__ = spin_name.__code__.replace(
    co_qualname="spin" + ESC + "[2J\n100.0% fake \u009b" + "31m")

print("ready", flush=True)
try:
    while True:
        spin_src(200000)
        spin_name(200000)
finally:
    os.unlink(path)
    os.rmdir(src_dir)
