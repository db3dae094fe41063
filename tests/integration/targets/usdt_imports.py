# --imports ground truth: after SIGUSR1, imports json (which imports
# json.decoder, json.scanner and json.encoder while it loads) and then a
# module that does not exist; then sleeps until killed.
import signal
import time


def main():
    go = []
    signal.signal(signal.SIGUSR1, lambda *a: go.append(1))
    print("ready", flush=True)
    while not go:
        time.sleep(0.01)
    import json  # noqa: F401
    try:
        import pybpfprof_no_such_module  # noqa: F401
    except ImportError:
        pass
    print("done", flush=True)
    time.sleep(60)


if __name__ == "__main__":
    main()
