# Many distinct functions with long names, run in turn for about a
# millisecond each: a profile of a few seconds names hundreds of them, so
# its report is large (tens of KiB and more) whatever its format.
import sys

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
PAD = "_padding_to_make_every_report_row_long" * 3

source = "".join(
    f"def work_{i:05d}{PAD}():\n"
    f"    x = 0\n"
    f"    for _ in range(2000):\n"
    f"        x = (x * 31 + {i}) % 1000003\n"
    f"    return x\n\n"
    for i in range(COUNT))
scope = {}
exec(compile(source, "many_funcs_generated.py", "exec"), scope)
funcs = [scope[f"work_{i:05d}{PAD}"] for i in range(COUNT)]

print("ready", flush=True)
while True:
    for f in funcs:
        f()
