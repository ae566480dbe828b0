"""Missing editors and tools: a skip on a developer's machine, a failure in CI (``CI=true``)."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def in_ci() -> bool:
    """Whether this run is CI's (``CI`` set to true, 1 or yes), where nothing may be skipped."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(what: str) -> NoReturn:
    """Skip for a missing tool, or fail when CI must have it."""
    if in_ci():
        pytest.fail(f"{what} (CI=true: a missing tool fails the run instead of skipping)",
                    pytrace=False)
    pytest.skip(what)


def require(found: object, what: str) -> None:
    """``missing(what)`` unless ``found`` is truthy."""
    if not found:
        missing(what)
