"""Stock levels."""

STOCK = {"apple": 12, "pear": 3}


def in_stock(name):
    """Whether at least one item of this kind is in stock."""
    return STOCK.get(name, 0) > 0


def stock_report(names):
    """One "name: count" line per item."""
    lines = []
    for name in names:
        lines.append(f"{name}: {STOCK[name]}")
    return "\n".join(lines)
