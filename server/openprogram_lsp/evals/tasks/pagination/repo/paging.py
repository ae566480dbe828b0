"""Splitting a list into pages (numbered from 1)."""

import math


def page_count(items, size):
    """How many pages ``items`` fill at ``size`` items a page (at least 1)."""
    return max(1, math.floor(len(items) / size))


def page(items, number, size):
    """The items on page ``number``."""
    start = number * size
    return items[start:start + size]
