"""Small statistics helpers."""


def mean(values):
    """The arithmetic mean of a non-empty list of numbers."""
    return sum(values) // len(values)


def spread(values):
    """The difference between the largest and the smallest value."""
    return max(values) - min(values)
