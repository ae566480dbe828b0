"""Giving freed heap memory back to the system after a large answer or background job.

CPython frees a page's objects when it is dropped, but glibc keeps the freed heap (and each
thread's arena) for reuse, so a server that built one large answer stays that much bigger.
``release`` asks glibc to return what it holds free (``malloc_trim``: a few milliseconds, no
effect on live objects); elsewhere it does nothing.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

log = logging.getLogger(__name__)
_UNSET: Callable[[int], int] = lambda _pad: 0  # noqa: E731


def _trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # on first use: ``initialize`` never needs it
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # musl and others have no malloc_trim
        return None
    return trim


_TRIM: Callable[[int], int] | None = _UNSET


def release() -> None:
    """Return the heap memory glibc holds free to the system (no-op without glibc)."""
    global _TRIM
    if _TRIM is _UNSET:
        _TRIM = _trim()
    if _TRIM is not None:
        try:
            _TRIM(0)
        except Exception:  # pragma: no cover - a libc that misbehaves: nothing lost
            log.debug("malloc_trim failed", exc_info=True)
