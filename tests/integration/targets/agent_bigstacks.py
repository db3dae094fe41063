# Profiles that are big by their names: FUNCS functions whose names are
# NAME_LEN random letters (little for gzip to squeeze), called in random
# chains DEPTH deep, so that nearly every one is on some stack each second
# and the agent's profile of each interval is megabytes. argv[1]: a token
# for --match; argv[2] (optional): the random seed.
import random
import sys

FUNCS, NAME_LEN, DEPTH = 800, 4000, 40
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)


def level(depth):
    if not depth:
        x = 0
        for _ in range(300):
            x = (x * 31 + 7) % 1000003
        return x
    return funcs[rng.randrange(FUNCS)](depth - 1)


def name():
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(NAME_LEN))


funcs = []
for _ in range(FUNCS):
    n = name()
    code = level.__code__.replace(co_name=n, co_qualname=n)
    funcs.append(type(level)(code, globals()))
print("ready", flush=True)
while True:
    level(DEPTH)
