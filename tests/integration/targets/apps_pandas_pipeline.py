# A pandas/numpy pipeline (Debian's python3-pandas and python3-numpy): the
# target of suite_apps' --native tests.
#
# Each round runs four stages on a table of sales: load() parses CSV text
# with pandas' C parser, summarize() groups and aggregates it (pandas'
# compiled groupby), enrich() takes numpy's FFT of a column, score() walks
# rows in a Python loop. Each stage measures its own thread CPU time (all
# run on the main thread; nothing here starts a thread pool).
#
#   apps_pandas_pipeline.py attach   rounds until killed; "ready" first, and
#                                    on SIGUSR1 "truth " + JSON of the stages'
#                                    CPU ns so far
#   apps_pandas_pipeline.py launch N N rounds, then "truth " + JSON, and exit
import io
import json
import random
import signal
import sys
import time

import numpy as np
import pandas as pd

STAGES = ("load", "summarize", "enrich", "score")
spent = dict.fromkeys(STAGES, 0)
clock = time.thread_time_ns


def make_csv(rows, seed):
    draw = random.Random(seed)
    out = ["store,sku,qty,price"]
    for i in range(rows):
        out.append(f"s{draw.randint(0, 199)},k{draw.randint(0, 4999)},{draw.randint(1, 40)},"
                   f"{draw.uniform(0.5, 300.0):.2f}")
    return "\n".join(out) + "\n"


def load(text):
    t0 = clock()
    df = pd.read_csv(io.StringIO(text))  # LOAD-PARSE
    spent["load"] += clock() - t0
    return df


def summarize(df):
    t0 = clock()
    spec = {"qty": ("qty", "sum"), "top": ("price", "max"), "avg": ("price", "mean")}
    out = df.groupby(["store", "sku"]).agg(**spec)  # SUMMARIZE-GROUPBY
    spent["summarize"] += clock() - t0
    return out


def enrich(df, reps):
    t0 = clock()
    signal_ = df["price"].to_numpy()
    power = 0.0
    for _ in range(reps):
        power += float(np.abs(np.fft.fft(signal_)).sum())  # ENRICH-FFT
    spent["enrich"] += clock() - t0
    return power


def score(df, passes):
    t0 = clock()
    total = 0.0
    rows = list(zip(df["qty"].tolist(), df["price"].tolist()))
    for _ in range(passes):
        for qty, price in rows:
            total += qty * price if qty % 3 else price / qty  # SCORE-LOOP
    spent["score"] += clock() - t0
    return total


def one_round(text):
    df = load(text)
    summarize(df)
    enrich(df, 40)
    score(df, 6)


def tell(signum=None, frame=None):
    print("truth " + json.dumps(spent), flush=True)


def main():
    text = make_csv(20000, 29)
    if sys.argv[1] == "attach":
        signal.signal(signal.SIGUSR1, tell)
        one_round(text)  # every library loaded and warm before "ready"
        print("ready", flush=True)
        while True:
            one_round(text)
    for _ in range(int(sys.argv[2])):
        one_round(text)
    tell()


if __name__ == "__main__":
    main()
