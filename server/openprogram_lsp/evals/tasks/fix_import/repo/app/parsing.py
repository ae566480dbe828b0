"""Reading CSV rows."""

import csv


def parse_rows(path):
    """The rows of a CSV file with a header, as dicts."""
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))
