"""Invoices."""

from shop.pricing import calc_total


def invoice_line(customer, items):
    """One line of an invoice."""
    return f"{customer}: {calc_total(items):.2f}"
