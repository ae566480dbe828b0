"""Identifier generation: short, unique, roughly time-sortable ids."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


def _base36(n: int, width: int) -> str:
    out = []
    for _ in range(width):
        n, r = divmod(n, 36)
        out.append(_ALPHABET[r])
    return "".join(reversed(out))


def new_id(prefix: str = "") -> str:
    """Return a new id: prefix + 8 chars of millisecond time + 8 random chars."""
    ms = time.time_ns() // 1_000_000
    rnd = int.from_bytes(os.urandom(6), "big")
    return f"{prefix}{_base36(ms, 9)}{_base36(rnd, 8)}"


def new_session_id() -> str:
    """Return a new session id."""
    return new_id("s")


def now_iso() -> str:
    """Return the current UTC time as an ISO-8601 string with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def is_safe_id(value: str) -> bool:
    """Whether an id is safe to use as a file or directory name."""
    return bool(value) and len(value) <= 128 and all(c.isalnum() or c in "-_" for c in value)
