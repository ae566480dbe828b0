"""Prices of orders."""

TAX = 0.2


def calc_total(items):
    """The total of (price, quantity) pairs, tax included."""
    net = sum(price * qty for price, qty in items)
    return round(net * (1 + TAX), 2)
