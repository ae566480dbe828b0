"""Reports over many orders."""

from shop import pricing


def revenue(orders):
    """The sum of every order's total."""
    return round(sum(pricing.calc_total(items) for items in orders), 2)
