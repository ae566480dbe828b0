"""Count the words of a text file: `python wordcount.py FILE [--top N]`."""

import argparse
import collections
import re


def counts(text):
    """(word, count) pairs, the most frequent first, ties in alphabetical order."""
    c = collections.Counter(re.findall(r"[a-z']+", text.lower()))
    return sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args(argv)
    with open(args.file) as fh:
        pairs = counts(fh.read())
    for word, n in pairs[:args.top]:
        print(f"{n} {word}")


if __name__ == "__main__":
    main()
