"""Input validation for the sign-up form."""

import re

EMAIL = re.compile(r"^[a-z0-9]+@[a-z0-9]+(\.[a-z]+)?$")


def is_valid_email(address):
    """Whether ``address`` looks like an e-mail address (case-insensitive)."""
    return bool(EMAIL.match(address.strip().lower()))


def is_valid_username(name):
    """3-20 letters, digits or underscores."""
    return bool(re.fullmatch(r"\w{3,20}", name))
