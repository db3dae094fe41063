# Hostile names for the text report's columns: four busy functions whose
# qualnames are 1500 characters (two-byte ones in half of them), one ending in
# "+0x41" as a native frame's name would; run from a directory nested deep
# enough that its path is over 600 characters.
def spin(n):
    x = 0
    while n:
        n -= 1
        x = (x * 31 + 7) % 1000003
    return x


funcs = []
for k, name in enumerate(["a" * 1500, "\u00e9" * 1500, "b" * 1494 + "+0x41", "c\u00e9" * 750]):
    name = f"long{k}_{name}"
    funcs.append(type(spin)(spin.__code__.replace(co_name=name, co_qualname=name), globals()))
print("ready", flush=True)
while True:
    for f in funcs:
        f(20000)
