"""Missing editors and tools: a skip on a developer's machine, a failure in CI (``CI=true``)."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
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


def wait_for_install(lock: Path, timeout: float = 900) -> None:
    """Wait while a tool's install script holds ``lock`` (scripts/lib/lock.sh): scripts/test
    runs the npm and apt installs in the background beside the tests."""
    if not lock.exists():
        return
    deadline = time.monotonic() + timeout
    with open(lock, "a") as fh:
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail(f"an install held {lock} for {timeout:.0f} s", pytrace=False)
                time.sleep(0.2)
        fcntl.flock(fh, fcntl.LOCK_UN)
