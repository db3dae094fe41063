"""A small CPU-bound workload to try pybpfprof on.

It tokenizes generated text, counts words, and looks words up in a list (a
slow membership test a profiler should point at). Runs for the number of
seconds given as its argument (default: until killed).
"""
import random
import sys
import time

STOPWORDS = ["the", "a", "of", "and", "to", "in", "is", "it", "that", "for"] * 20


def make_text(rng, words=2000):
    vocab = ["alpha", "beta", "gamma", "delta", "the", "a", "of", "and", "to", "in"]
    return " ".join(rng.choice(vocab) for _ in range(words))


def tokenize(text):
    return [w.strip(".,").lower() for w in text.split()]


def count_words(tokens):
    counts = {}
    for t in tokens:
        if t in STOPWORDS:  # list membership: the hot line
            continue
        counts[t] = counts.get(t, 0) + 1
    return counts


def main():
    rng = random.Random(1)
    deadline = time.monotonic() + float(sys.argv[1]) if len(sys.argv) > 1 else None
    print("ready", flush=True)
    while deadline is None or time.monotonic() < deadline:
        count_words(tokenize(make_text(rng)))


if __name__ == "__main__":
    main()
