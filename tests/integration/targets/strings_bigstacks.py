# A large real profile for `report` to read back: 300 functions calling each
# other at random, 10 to 60 deep, so that nearly every sample is a stack of
# its own (a few seconds at 999 Hz make a profile of megabytes). Two threads.
import random
import threading

N = 300
SRC = "".join(f"def f{i}(d):\n"
              f"    if d <= 0:\n"
              f"        x = 0\n"
              f"        for _ in range(300):\n"
              f"            x += 1\n"
              f"        return x\n"
              f"    return FUNCS[random.randrange(N)](d - 1)\n\n" for i in range(N))
scope = {"random": random, "N": N}
exec(compile(SRC, "strings_bigstacks_generated.py", "exec"), scope)
FUNCS = [scope[f"f{i}"] for i in range(N)]
scope["FUNCS"] = FUNCS


def run():
    while True:
        FUNCS[0](random.randrange(10, 60))


threading.Thread(target=run, daemon=True).start()
print("ready", flush=True)
run()
