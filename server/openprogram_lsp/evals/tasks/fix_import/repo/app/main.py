"""Print how many rows a CSV file has, and the sum of its "amount" column."""

import sys

from app.parsing import parse_row


def main(argv):
    rows = parse_row(argv[1])
    total = sum(float(r["amount"]) for r in rows)
    print(f"{len(rows)} rows, total {total:.2f}")


if __name__ == "__main__":
    main(sys.argv)
