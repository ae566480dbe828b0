"""Leap years in the Gregorian calendar."""


def is_leap_year(year):
    """Divisible by 4, except centuries, except every 400 years."""
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
